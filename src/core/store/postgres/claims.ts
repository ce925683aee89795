import { RefusedError } from '../../errors.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { Actor, ClaimResult, HeartbeatResult, ResetResult, StartResult } from '../types.ts';
import { openStepsSql, partitionSteps } from './readiness.ts';
import { assertHolder, eventInsert, leaseUntil, lockOwner, requireCurrentPlan, STEP_COLUMNS, writeEvent, type PgPlanRow, type PgStepRow } from './rows.ts';
import type { Tx } from './session.ts';
import { claimElsewhere, type EpicPlace } from '../shared/epicPlace.ts';

/** The status of a plan's epic and, when it stops its steps being claimed, why (claim refuses with it, ready reports it). */
export async function epicWait(tx: Tx, row: PgPlanRow): Promise<{ status: string | null; message: string | null }> {
  const status = row.epic_id ? (await tx.q<{ status: string }>('SELECT status FROM epics WHERE repo_id = $1 AND id = $2', [tx.repo, row.epic_id]))[0]?.status ?? null : null;
  if (status === null || status === 'in_progress') return { status, message: null };
  const hint = status === 'ready' ? ` (start it: 'springfield epic start ${row.epic_id}')` : '';
  return { status, message: `${row.plan_path} belongs to epic ${row.epic_id}, which is ${status}; steps are claimed while it is in progress${hint}` };
}

/**
 * The first claimable top-level step by step_index, locked: a pending step without blockers or one
 * whose lease expired. SKIP LOCKED gives concurrent claimers different rows instead of a queue.
 */
async function firstReady(tx: Tx, plan: string): Promise<PgStepRow | undefined> {
  // Locking clauses are not allowed under UNION, but are in CTEs: both seeks in one round trip.
  const rows = await tx.q<PgStepRow>(`WITH ready AS (SELECT ${STEP_COLUMNS} FROM steps
      WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0
      ORDER BY step_index LIMIT 1 FOR UPDATE SKIP LOCKED),
    expired AS (SELECT ${STEP_COLUMNS} FROM steps
      WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress') AND lease_expires_at < $3 AND blockers = 0
      ORDER BY step_index LIMIT 1 FOR UPDATE SKIP LOCKED)
    SELECT * FROM ready UNION ALL SELECT * FROM expired ORDER BY step_index LIMIT 1`, [tx.repo, plan, tx.now]);
  return rows[0];
}

/** Claims the first ready top-level step with its substeps, or reclaims one whose lease expired; bumps the token. */
export async function claimNext(tx: Tx, source: PlanSource, actor: Actor, leaseSeconds: number, branch: string | null = null): Promise<ClaimResult> {
  const plan = source.planPath;
  const row = await requireCurrentPlan(tx, source);
  const waiting = (await epicWait(tx, row)).message;
  if (waiting) throw new RefusedError('epic_not_in_progress', waiting);
  const place = row.epic_id ? (await tx.q<EpicPlace>('SELECT id, worktree_path, branch FROM epics WHERE repo_id = $1 AND id = $2', [tx.repo, row.epic_id]))[0] : undefined;
  const elsewhere = claimElsewhere(plan, place ?? null, { worktree: actor.worktree, branch });
  if (elsewhere) throw new RefusedError('epic_elsewhere', elsewhere);
  const cand = await firstReady(tx, plan);
  if (!cand) {
    const p = await partitionSteps(tx, plan);
    const allDone = p.completed.length === p.all.length;
    return { claimed: false, plan_path: plan, reason: allDone ? 'all_completed' : 'no_ready_steps', all_completed: allDone, blocked_steps: p.blocked, claimed_steps: p.claimed };
  }
  const until = leaseUntil(tx.now, leaseSeconds);
  const token = cand.claim_token + 1;
  const set = `status = 'claimed', claimed_host = $4, claimed_by = $5, claimed_agent = $6, claim_token = $7, claimed_at = $8, lease_expires_at = $9, heartbeat_at = NULL, started_at = NULL`;
  const args = [tx.repo, plan, cand.anchor, tx.host, actor.worktree, actor.agent, token, tx.now, until];
  const changed = await tx.q(`UPDATE steps SET ${set} WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 AND claim_token = $10
      AND (status = 'pending' OR (status IN ('claimed', 'in_progress') AND lease_expires_at < $8)) RETURNING anchor`, [...args, cand.claim_token]);
  if (changed.length !== 1) throw new RefusedError('claim_conflict', `${cand.anchor} changed while being claimed; try again`);
  // The plan file matched the stored structure, and substeps follow their step in step_index order.
  const hasSubsteps = source.plan.steps[cand.step_index + 1]?.parentAnchor === cand.anchor;
  const substeps = !hasSubsteps ? [] : (await tx.q<{ anchor: string; step_index: number }>(`UPDATE steps SET ${set}
      WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed' RETURNING anchor, step_index`, args))
    .sort((a, b) => a.step_index - b.step_index).map((s) => s.anchor);
  const reclaimed = cand.status !== 'pending';
  if (reclaimed) {
    await tx.q(`UPDATE checklist_items SET status = 'open', updated_at = $4, updated_by = NULL
      WHERE repo_id = $1 AND plan_path = $2 AND status = 'in_progress'
        AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3)`, [tx.repo, plan, cand.anchor, tx.now]);
  }
  // The event, the counts and COMMIT in one round trip (the claimed row stays locked until then).
  const L = (v: unknown) => tx.lit(v);
  const data = { claim_token: token, lease_expires_at: until, previous_holder: reclaimed ? cand.claimed_by : null, ...(reclaimed ? { previous_agent: cand.claimed_agent, previous_host: cand.claimed_host } : {}), substeps };
  const results = await tx.finish([
    eventInsert(tx, actor, {
      entity: 'step', action: reclaimed ? 'reclaim' : 'claim', planPath: plan, stepAnchor: cand.anchor, from: cand.status, to: 'claimed',
      reason: reclaimed ? `lease of ${cand.claimed_by} expired at ${cand.lease_expires_at}` : null, data,
    }),
    `SELECT (SELECT count(*) FROM steps WHERE repo_id = ${L(tx.repo)} AND plan_path = ${L(plan)} AND parent_anchor IS NULL AND blockers = 0
        AND (status = 'pending' OR (status IN ('claimed', 'in_progress') AND lease_expires_at < ${L(tx.now)})))::int AS ready,
      ${openStepsSql(`repo_id = ${L(tx.repo)} AND plan_path = ${L(plan)}`)} AS remaining`,
  ]);
  const counts = results[1]?.[0] as { ready: number; remaining: number } | undefined;
  const open = { ready: Number(counts?.ready ?? 0), remaining: Number(counts?.remaining ?? 0) };
  return {
    claimed: true, plan_path: plan, step_anchor: cand.anchor, step_title: cand.title, step_index: cand.step_index, substeps,
    claim_token: token, claimed_by: actor.worktree, agent: actor.agent,
    remaining_ready: open.ready, total_remaining: open.remaining, lease_expires_at: until,
    reclaimed_from_expired: reclaimed, previous_holder: reclaimed ? cand.claimed_by : null,
    previous_agent: reclaimed ? cand.claimed_agent : null, previous_lease_expires_at: reclaimed ? cand.lease_expires_at : null,
  };
}

/** Moves a claimed step (or substep) to in_progress; only its holder may. Idempotent. */
export async function startStep(tx: Tx, plan: string, anchor: string, actor: Actor): Promise<StartResult> {
  const { step, owner } = await lockOwner(tx, plan, anchor);
  assertHolder(tx, owner, actor, 'start');
  if (step.status === 'in_progress') return { started: true, step_anchor: anchor, status: 'in_progress', started_at: step.started_at ?? tx.now };
  if (step.status !== 'claimed') throw new RefusedError('not_claimed', `cannot start ${anchor}: it is ${step.status}`);
  const changed = await tx.q(`UPDATE steps SET status = 'in_progress', started_at = $4
    WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 AND status = 'claimed' AND claimed_by = $5 AND claimed_host = $6 AND claim_token = $7 RETURNING anchor`,
  [tx.repo, plan, anchor, tx.now, actor.worktree, tx.host, owner.claim_token]);
  if (changed.length !== 1) throw new RefusedError('not_holder', `cannot start ${anchor}: the claim changed`);
  await writeEvent(tx, actor, { entity: 'step', action: 'start', planPath: plan, stepAnchor: anchor, from: 'claimed', to: 'in_progress', data: { claim_token: owner.claim_token } });
  return { started: true, step_anchor: anchor, status: 'in_progress', started_at: tx.now };
}

/** Renews the lease of the holder's claim (a substep renews its parent's). */
export async function heartbeat(tx: Tx, plan: string, anchor: string, actor: Actor, leaseSeconds: number): Promise<HeartbeatResult> {
  const { owner } = await lockOwner(tx, plan, anchor);
  assertHolder(tx, owner, actor, 'heartbeat');
  const until = leaseUntil(tx.now, leaseSeconds);
  const changed = await tx.q(`UPDATE steps SET heartbeat_at = $4, lease_expires_at = $5
    WHERE repo_id = $1 AND plan_path = $2 AND (anchor = $3 OR parent_anchor = $3) AND status IN ('claimed', 'in_progress')
      AND claimed_by = $6 AND claimed_host = $7 AND claim_token = $8 RETURNING anchor`,
  [tx.repo, plan, owner.anchor, tx.now, until, actor.worktree, tx.host, owner.claim_token]);
  if (changed.length < 1) throw new RefusedError('not_holder', `cannot heartbeat ${anchor}: the claim changed`);
  await writeEvent(tx, actor, { entity: 'step', action: 'heartbeat', planPath: plan, stepAnchor: owner.anchor, data: { claim_token: owner.claim_token, lease_expires_at: until } });
  return { renewed: true, step_anchor: owner.anchor, claim_token: owner.claim_token, lease_expires_at: until };
}

/** Admin escape hatch: returns a claimed step and its unfinished substeps to pending, fencing the old holder. */
export async function resetStep(tx: Tx, plan: string, requested: string, actor: Actor, reason: string | null): Promise<ResetResult> {
  const step = (await lockOwner(tx, plan, requested)).owner;
  const anchor = step.anchor;
  if (step.status === 'completed') {
    const what = step.commit_hash ? `by commit ${step.commit_hash}` : 'with no commit recorded';
    throw new RefusedError('already_completed', `cannot reset ${anchor}: it is completed (${what}); to undo a completion use 'springfield reopen ${plan} ${anchor} --reason TEXT'`);
  }
  if (step.status !== 'pending') {
    await tx.q(`UPDATE steps SET status = 'pending', claimed_host = NULL, claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1,
        claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL
      WHERE repo_id = $1 AND plan_path = $2 AND (anchor = $3 OR parent_anchor = $3) AND status IN ('claimed', 'in_progress')`, [tx.repo, plan, anchor]);
    await tx.q(`UPDATE checklist_items SET status = 'open', updated_at = $4, updated_by = NULL
      WHERE repo_id = $1 AND plan_path = $2 AND status = 'in_progress'
        AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3)`, [tx.repo, plan, anchor, tx.now]);
  }
  await writeEvent(tx, actor, { entity: 'step', action: 'reset', planPath: plan, stepAnchor: anchor, from: step.status, to: 'pending', reason, data: { previous_holder: step.claimed_by, claim_token: step.claim_token } });
  return { reset: true, step_anchor: anchor, from_status: step.status, previous_holder: step.claimed_by };
}
