import { RefusedError } from '../../errors.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { Actor, CompleteOptions, CompleteResult } from '../types.ts';
import { countRemaining, openStepsSql } from './readiness.ts';
import { assertHolder, eventInsert, holderName, lockOwner, requireCurrentPlan, requirePlan, type PgStepRow } from './rows.ts';
import type { Tx } from './session.ts';

interface OpenItem {
  step_anchor: string;
  kind: string;
  ordinal: number;
  text: string;
}

/**
 * Completes a step the actor holds, with its substeps: strict (every item done) unless forced with a
 * reason. Re-completing as the same holder is a no-op, so a retry after a lost reply is safe.
 * `dryRun` refuses exactly as the real one would and writes nothing (the caller rolls back anyway).
 */
export async function completeStep(tx: Tx, source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions): Promise<CompleteResult> {
  const plan = source.planPath;
  await requireCurrentPlan(tx, source);
  const { step, owner } = await lockOwner(tx, plan, anchor, true);
  if (step.status === 'completed') return repeatCompletion(tx, step, owner, actor);
  assertHolder(tx, owner, actor, 'complete');
  const force = options.forceReason ?? null;
  const args = [tx.repo, plan, anchor];
  const open = await tx.q<OpenItem & { what: string }>(`SELECT 'item' AS what, step_anchor, kind, ordinal, text, id AS n FROM checklist_items
      WHERE repo_id = $1 AND plan_path = $2 AND status <> 'completed'
        AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed')
    UNION ALL SELECT 'substep', anchor, '', 0, '', step_index FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed'
    ORDER BY what, n`, args);
  const openItems = open.filter((r) => r.what === 'item');
  const openSubsteps = open.filter((r) => r.what === 'substep').map((r) => r.step_anchor);
  if (force === null && openItems.length > 0) throw incomplete(anchor, openItems);
  const commit = options.commitHash ?? null;
  let autoCompleted = 0;
  if (force !== null) {
    autoCompleted = (await tx.q(`UPDATE checklist_items SET status = 'completed', updated_at = $4, updated_by = $5 WHERE repo_id = $1 AND plan_path = $2 AND status <> 'completed'
        AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3) RETURNING id`,
    [...args, tx.now, actor.worktree])).length;
  }
  // The step's UPDATE makes the readiness trigger lock its shard's open-step counter: it goes last, with its COMMIT, in one round trip.
  const L = (v: unknown) => tx.lit(v);
  const where = `repo_id = ${L(tx.repo)} AND plan_path = ${L(plan)}`;
  const tail: string[] = [eventInsert(tx, actor, {
    entity: 'step', action: 'complete', planPath: plan, stepAnchor: anchor, from: step.status, to: 'completed', reason: force,
    data: { claim_token: owner.claim_token, commit_hash: commit, forced: force !== null, items_auto_completed: autoCompleted, substeps_completed: openSubsteps },
  })];
  if (openSubsteps.length > 0) {
    tail.push(`UPDATE steps SET status = 'completed', completed_at = ${L(tx.now)}, completed_host = ${L(tx.host)}, completed_by = ${L(actor.worktree)}, completed_token = claim_token,
      complete_reason = ${L(force)}, lease_expires_at = NULL WHERE ${where} AND parent_anchor = ${L(anchor)} AND status <> 'completed'`);
  }
  tail.push(`WITH done AS (UPDATE steps SET status = 'completed', completed_at = ${L(tx.now)}, completed_host = ${L(tx.host)}, completed_by = ${L(actor.worktree)},
      completed_token = ${L(owner.claim_token)}, commit_hash = ${L(commit)}, complete_reason = ${L(force)}, lease_expires_at = NULL
    WHERE ${where} AND anchor = ${L(anchor)} AND status IN ('claimed', 'in_progress') AND claimed_host = ${L(tx.host)} AND claimed_by = ${L(actor.worktree)}
      AND claim_token = ${L(owner.claim_token)} RETURNING 1)
    SELECT sf_expect((SELECT count(*) FROM done), 1, ${L(`cannot complete ${anchor}: the claim changed`)})`);
  // After the COMMIT (docs/postgres.md, "Concurrency"): what is left open, and the plan marked done when nothing is.
  const results = await tx.finish(tail, [planDoneSql(tx, actor, plan, `last step ${anchor} completed`)]);
  const counted = results[tail.length]?.[0] as { remaining: number; done: boolean } | undefined;
  const remaining = Number(counted?.remaining ?? 0);
  const planCompleted = counted?.done === true;
  return {
    completed: true, step_anchor: anchor, commit_hash: commit, forced: force !== null, force_reason: force,
    incomplete_items_auto_completed: autoCompleted, already_completed: false, plan_completed: planCompleted, remaining_steps: remaining,
  };
}

/** A repeat of a completion: a no-op success only for the holder that completed it (same host and worktree, agent, token). */
async function repeatCompletion(tx: Tx, step: PgStepRow, owner: PgStepRow, actor: Actor): Promise<CompleteResult> {
  const completer = (await tx.q<{ agent: string | null }>(`SELECT agent FROM events WHERE repo_id = $1 AND plan_path = $2 AND step_anchor = $3 AND entity = 'step' AND action = 'complete'
    ORDER BY id DESC LIMIT 1`, [tx.repo, step.plan_path, step.anchor]))[0]?.agent ?? owner.claimed_agent;
  const agentMismatch = completer !== null && actor.agent !== null && completer !== actor.agent;
  const tokenMismatch = actor.token != null && actor.token !== step.completed_token;
  if (step.completed_by !== actor.worktree || step.completed_host !== tx.host || agentMismatch || tokenMismatch) {
    const by = step.completed_by === null ? 'someone else' : holderName(step.completed_host, step.completed_by, completer, tx.host);
    throw new RefusedError('already_completed', `${step.anchor} is already completed by ${by}${step.completed_token !== null ? ` with token ${step.completed_token}` : ''}`);
  }
  const plan = await requirePlan(tx, step.plan_path);
  const remaining = await countRemaining(tx, step.plan_path);
  let done = plan.status === 'done';
  if (!done && remaining === 0) {
    // The completion committed but the plan was not marked after it (a server crash between the two
    // transactions, docs/postgres.md, "Concurrency"): the holder's retry marks it.
    done = await markPlanDone(tx, actor, step.plan_path, `last step ${step.anchor} completed`);
  }
  return {
    completed: true, step_anchor: step.anchor, commit_hash: step.commit_hash, forced: step.complete_reason !== null, force_reason: step.complete_reason,
    incomplete_items_auto_completed: 0, already_completed: true, plan_completed: done, remaining_steps: remaining,
  };
}

/** Marks the plan done if nothing in it is open and it is not already (a write of its own); whether this call marked it. */
export async function markPlanDone(tx: Tx, actor: Actor, plan: string, reason: string): Promise<boolean> {
  const results = await tx.finish([], [planDoneSql(tx, actor, plan, reason)]);
  return (results[0]?.[0] as { done?: boolean } | undefined)?.done === true;
}

/**
 * The plan marked done when nothing in it is open, with its event; what is left open. Sent after a
 * completion's COMMIT (Tx.finish's afterCommit): the last completion to commit sees every other one,
 * and of several that see nothing open the row lock and the status test let one through.
 */
function planDoneSql(tx: Tx, actor: Actor, plan: string, reason: string): string {
  const L = (v: unknown) => tx.lit(v);
  const where = `repo_id = ${L(tx.repo)} AND plan_path = ${L(plan)}`;
  return `WITH u AS (UPDATE plans SET status = 'done', updated_at = ${L(tx.now)} WHERE ${where} AND status <> 'done'
        AND CASE WHEN ${openStepsSql(where)} = 0 THEN NOT EXISTS (SELECT 1 FROM steps WHERE ${where} AND status <> 'completed') ELSE false END RETURNING 1),
      e AS (INSERT INTO events (repo_id, op_id, at, host, worktree, agent, entity, action, plan_path, from_status, to_status, reason)
        SELECT ${L(tx.repo)}, ${L(tx.op)}, ${L(tx.now)}, ${L(tx.host)}, ${L(actor.worktree)}, ${L(actor.agent)}, 'plan', 'complete', ${L(plan)}, 'active', 'done',
          ${L(reason)} FROM u RETURNING 1)
    SELECT ${openStepsSql(where)} AS remaining, EXISTS (SELECT 1 FROM e) AS done`;
}

function incomplete(anchor: string, items: OpenItem[]): RefusedError {
  const shown = items.slice(0, 3).map((i) => `${i.step_anchor === anchor ? '' : `${i.step_anchor} `}${i.kind} ${i.ordinal} "${i.text.length > 40 ? i.text.slice(0, 39) + '…' : i.text}"`).join(', ');
  const what = `${items.length} open item${items.length === 1 ? '' : 's'} (${shown}${items.length > 3 ? ', …' : ''})`;
  return new RefusedError('incomplete', `cannot complete ${anchor}: ${what}; finish them or pass --force <reason>`);
}
