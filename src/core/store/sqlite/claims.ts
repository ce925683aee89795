import { RefusedError } from '../../errors.ts';
import { countOpen, partitionSteps } from './readiness.ts';
import { assertHolder, leaseUntil, ownerOf, requireCurrentPlan, requireStep, writeEvent, type PlanRow, type StepRow } from './rows.ts';
import type { Database } from './sqlite.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { Actor, ClaimResult, HeartbeatResult, ResetResult, StartResult } from '../types.ts';
import { claimElsewhere, type EpicPlace } from '../shared/epicPlace.ts';

export const DEFAULT_LEASE_SECONDS = 7200;

/**
 * The first claimable top-level step by step_index: the first pending step without blockers (one
 * seek on idx_steps_ready) or an expired lease (few by nature); the lower index wins.
 */
function firstReady(db: Database, plan: string, now: string): StepRow | undefined {
  return db.prepare(`SELECT * FROM (
      SELECT * FROM steps INDEXED BY idx_steps_ready
      WHERE plan_path = @plan AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0 ORDER BY step_index LIMIT 1)
    UNION ALL SELECT * FROM (
      SELECT * FROM steps INDEXED BY idx_steps_top
      WHERE plan_path = @plan AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress') AND lease_expires_at < @now AND blockers = 0
      ORDER BY step_index LIMIT 1)
    ORDER BY step_index LIMIT 1`).get({ plan, now }) as StepRow | undefined;
}

/**
 * The status of a plan's epic and, when it stops its steps being claimed (they are claimed while it
 * is in progress), why: claim refuses with this message and ready reports it.
 */
export function epicWait(db: Database, row: PlanRow): { status: string | null; message: string | null } {
  const status = row.epic_id ? (db.prepare('SELECT status FROM epics WHERE id = ?').pluck().get(row.epic_id) as string | undefined) ?? null : null;
  if (status === null || status === 'in_progress') return { status, message: null };
  const hint = status === 'ready' ? ` (start it: 'springfield epic start ${row.epic_id}')` : '';
  return { status, message: `${row.plan_path} belongs to epic ${row.epic_id}, which is ${status}; steps are claimed while it is in progress${hint}` };
}

/**
 * Claims the first ready top-level step (by step_index) with its substeps, or reclaims one whose
 * lease expired. One guarded UPDATE inside the caller's IMMEDIATE transaction; bumps the token.
 */
export function claimNext(db: Database, now: Date, source: PlanSource, actor: Actor, leaseSeconds: number, branch: string | null = null): ClaimResult {
  const plan = source.planPath;
  const row = requireCurrentPlan(db, source);
  const waiting = epicWait(db, row).message;
  if (waiting) throw new RefusedError('epic_not_in_progress', waiting);
  const place = row.epic_id ? db.prepare('SELECT id, worktree_path, branch FROM epics WHERE id = ?').get(row.epic_id) as EpicPlace | undefined : undefined;
  const elsewhere = claimElsewhere(plan, place ?? null, { worktree: actor.worktree, branch });
  if (elsewhere) throw new RefusedError('epic_elsewhere', elsewhere);
  const at = now.toISOString();
  const cand = firstReady(db, plan, at);
  if (!cand) {
    const p = partitionSteps(db, plan, at);
    const allDone = p.completed.length === p.all.length;
    return { claimed: false, plan_path: plan, reason: allDone ? 'all_completed' : 'no_ready_steps', all_completed: allDone, blocked_steps: p.blocked, claimed_steps: p.claimed };
  }
  const until = leaseUntil(now, leaseSeconds);
  const token = cand.claim_token + 1;
  const changed = db.prepare(`UPDATE steps SET status = 'claimed', claimed_by = @wt, claimed_agent = @agent, claim_token = @token,
      claimed_at = @now, lease_expires_at = @until, heartbeat_at = NULL, started_at = NULL
    WHERE plan_path = @plan AND anchor = @anchor AND claim_token = @old
      AND (status = 'pending' OR (status IN ('claimed', 'in_progress') AND lease_expires_at < @now))`)
    .run({ wt: actor.worktree, agent: actor.agent, token, now: at, until, plan, anchor: cand.anchor, old: cand.claim_token }).changes;
  if (changed !== 1) throw new RefusedError('claim_conflict', `${cand.anchor} changed while being claimed; try again`);
  const substeps = db.prepare(`UPDATE steps SET status = 'claimed', claimed_by = @wt, claimed_agent = @agent, claim_token = @token,
      claimed_at = @now, lease_expires_at = @until, heartbeat_at = NULL, started_at = NULL
    WHERE plan_path = @plan AND parent_anchor = @anchor AND status != 'completed' RETURNING anchor`).pluck()
    .all({ wt: actor.worktree, agent: actor.agent, token, now: at, until, plan, anchor: cand.anchor }) as string[];
  const reclaimed = cand.status !== 'pending';
  if (reclaimed) {
    db.prepare(`UPDATE checklist_items SET status = 'open', updated_at = @now, updated_by = NULL
      WHERE plan_path = @plan AND status = 'in_progress'
        AND step_anchor IN (SELECT @anchor UNION ALL SELECT anchor FROM steps WHERE plan_path = @plan AND parent_anchor = @anchor)`)
      .run({ now: at, plan, anchor: cand.anchor });
  }
  writeEvent(db, at, actor, {
    entity: 'step', action: reclaimed ? 'reclaim' : 'claim', planPath: plan, stepAnchor: cand.anchor, from: cand.status, to: 'claimed',
    reason: reclaimed ? `lease of ${cand.claimed_by} expired at ${cand.lease_expires_at}` : null,
    data: { claim_token: token, lease_expires_at: until, previous_holder: reclaimed ? cand.claimed_by : null, ...(reclaimed ? { previous_agent: cand.claimed_agent } : {}), substeps },
  });
  const open = countOpen(db, plan, at);
  return {
    claimed: true, plan_path: plan, step_anchor: cand.anchor, step_title: cand.title, step_index: cand.step_index, substeps,
    claim_token: token, claimed_by: actor.worktree, agent: actor.agent,
    remaining_ready: open.ready, total_remaining: open.remaining, lease_expires_at: until,
    reclaimed_from_expired: reclaimed, previous_holder: reclaimed ? cand.claimed_by : null,
    previous_agent: reclaimed ? cand.claimed_agent : null, previous_lease_expires_at: reclaimed ? cand.lease_expires_at : null,
  };
}

/** Moves a claimed step (or substep) to in_progress; only its holder may. Idempotent. */
export function startStep(db: Database, now: Date, plan: string, anchor: string, actor: Actor): StartResult {
  const step = requireStep(db, plan, anchor);
  const owner = ownerOf(db, step);
  assertHolder(owner, actor, 'start');
  const at = now.toISOString();
  if (step.status === 'in_progress') return { started: true, step_anchor: anchor, status: 'in_progress', started_at: step.started_at ?? at };
  if (step.status !== 'claimed') throw new RefusedError('not_claimed', `cannot start ${anchor}: it is ${step.status}`);
  const changed = db.prepare(`UPDATE steps SET status = 'in_progress', started_at = ?
    WHERE plan_path = ? AND anchor = ? AND status = 'claimed' AND claimed_by = ? AND claim_token = ?`)
    .run(at, plan, anchor, actor.worktree, owner.claim_token).changes;
  if (changed !== 1) throw new RefusedError('not_holder', `cannot start ${anchor}: the claim changed`);
  writeEvent(db, at, actor, { entity: 'step', action: 'start', planPath: plan, stepAnchor: anchor, from: 'claimed', to: 'in_progress', data: { claim_token: owner.claim_token } });
  return { started: true, step_anchor: anchor, status: 'in_progress', started_at: at };
}

/** Renews the lease of the holder's claim (a substep renews its parent's). */
export function heartbeat(db: Database, now: Date, plan: string, anchor: string, actor: Actor, leaseSeconds: number): HeartbeatResult {
  const owner = ownerOf(db, requireStep(db, plan, anchor));
  assertHolder(owner, actor, 'heartbeat');
  const at = now.toISOString();
  const until = leaseUntil(now, leaseSeconds);
  const changed = db.prepare(`UPDATE steps SET heartbeat_at = @now, lease_expires_at = @until
    WHERE plan_path = @plan AND anchor IN (SELECT @anchor UNION ALL SELECT anchor FROM steps WHERE plan_path = @plan AND parent_anchor = @anchor) AND status IN ('claimed', 'in_progress')
      AND claimed_by = @wt AND claim_token = @token`)
    .run({ now: at, until, plan, anchor: owner.anchor, wt: actor.worktree, token: owner.claim_token }).changes;
  if (changed < 1) throw new RefusedError('not_holder', `cannot heartbeat ${anchor}: the claim changed`);
  writeEvent(db, at, actor, { entity: 'step', action: 'heartbeat', planPath: plan, stepAnchor: owner.anchor, data: { claim_token: owner.claim_token, lease_expires_at: until } });
  return { renewed: true, step_anchor: owner.anchor, claim_token: owner.claim_token, lease_expires_at: until };
}

/** Admin escape hatch: returns a claimed step and its unfinished substeps to pending, fencing the old holder. */
export function resetStep(db: Database, now: Date, plan: string, requested: string, actor: Actor, reason: string | null): ResetResult {
  // Substeps go with their parent: resetting one resets the claim that carries it.
  const step = ownerOf(db, requireStep(db, plan, requested));
  const anchor = step.anchor;
  if (step.status === 'completed') {
    const what = step.commit_hash ? `by commit ${step.commit_hash}` : 'with no commit recorded';
    throw new RefusedError('already_completed', `cannot reset ${anchor}: it is completed (${what}); to undo a completion use 'springfield reopen ${plan} ${anchor} --reason TEXT'`);
  }
  const at = now.toISOString();
  if (step.status !== 'pending') {
    db.prepare(`UPDATE steps SET status = 'pending', claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1,
        claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL
      WHERE plan_path = @plan AND anchor IN (SELECT @anchor UNION ALL SELECT anchor FROM steps WHERE plan_path = @plan AND parent_anchor = @anchor) AND status IN ('claimed', 'in_progress')`)
      .run({ plan, anchor });
    db.prepare(`UPDATE checklist_items SET status = 'open', updated_at = @now, updated_by = NULL
      WHERE plan_path = @plan AND status = 'in_progress'
        AND step_anchor IN (SELECT @anchor UNION ALL SELECT anchor FROM steps WHERE plan_path = @plan AND parent_anchor = @anchor)`)
      .run({ now: at, plan, anchor });
  }
  writeEvent(db, at, actor, { entity: 'step', action: 'reset', planPath: plan, stepAnchor: anchor, from: step.status, to: 'pending', reason, data: { previous_holder: step.claimed_by, claim_token: step.claim_token } });
  return { reset: true, step_anchor: anchor, from_status: step.status, previous_holder: step.claimed_by };
}

/**
 * Releases a claim the moment its run ends without finishing the step (docs/scheduler-faults.md):
 * back to pending, fenced by the holder and the token the run held, so a newer claim is never
 * touched. Returns whether it released anything.
 */
export function releaseClaim(db: Database, now: Date, plan: string, anchor: string, holder: { worktree: string; token: number }, actor: Actor, reason: string): boolean {
  const step = db.prepare('SELECT * FROM steps WHERE plan_path = ? AND anchor = ?').get(plan, anchor) as StepRow | undefined;
  if (!step || (step.status !== 'claimed' && step.status !== 'in_progress') || step.claimed_by !== holder.worktree || step.claim_token !== holder.token) return false;
  resetStep(db, now, plan, anchor, actor, reason);
  return true;
}

/**
 * Reopens a step its run completed with a commit that is not on the epic's branch (the agent
 * committed elsewhere): the step, its substeps and their items go back to pending and open, fenced
 * by the completing token. The commit itself stays reachable where the agent left it.
 */
export function reopenStep(db: Database, now: Date, plan: string, anchor: string, token: number, actor: Actor, reason: string): boolean {
  const at = now.toISOString();
  const family = `plan_path = @plan AND (anchor = @anchor OR parent_anchor = @anchor)`;
  const step = db.prepare('SELECT * FROM steps WHERE plan_path = ? AND anchor = ?').get(plan, anchor) as StepRow | undefined;
  if (!step || step.status !== 'completed' || step.completed_token !== token) return false;
  db.prepare(`UPDATE steps SET status = 'pending', claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1, claimed_at = NULL,
      lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL, completed_at = NULL, completed_by = NULL, completed_token = NULL,
      commit_hash = NULL, complete_reason = NULL
    WHERE ${family} AND status = 'completed'`).run({ plan, anchor });
  db.prepare(`UPDATE checklist_items SET status = 'open', updated_at = @now, updated_by = NULL
    WHERE plan_path = @plan AND step_anchor IN (SELECT anchor FROM steps WHERE ${family})`).run({ plan, anchor, now: at });
  db.prepare(`UPDATE plans SET status = 'active', updated_at = ? WHERE plan_path = ? AND status = 'done'`).run(at, plan);
  writeEvent(db, at, actor, { entity: 'step', action: 'reopen', planPath: plan, stepAnchor: anchor, from: 'completed', to: 'pending', reason, data: { commit_hash: step.commit_hash, claim_token: token } });
  return true;
}
