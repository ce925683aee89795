import { RefusedError } from '../../errors.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { Actor, CompleteOptions, CompleteResult } from '../types.ts';
import { countRemaining } from './readiness.ts';
import { assertHolder, holderName, lockOwner, requireCurrentPlan, requirePlan, writeEvent, type PgStepRow } from './rows.ts';
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
  const { step, owner } = await lockOwner(tx, plan, anchor);
  if (step.status === 'completed') return repeatCompletion(tx, step, owner, actor);
  assertHolder(tx, owner, actor, 'complete');
  const force = options.forceReason ?? null;
  const args = [tx.repo, plan, anchor];
  const openItems = await tx.q<OpenItem>(`SELECT step_anchor, kind, ordinal, text FROM checklist_items WHERE repo_id = $1 AND plan_path = $2 AND status <> 'completed'
      AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed')
    ORDER BY id`, args);
  const openSubsteps = (await tx.q<{ anchor: string }>(`SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed' ORDER BY step_index`, args)).map((r) => r.anchor);
  if (force === null && openItems.length > 0) throw incomplete(anchor, openItems);
  const commit = options.commitHash ?? null;
  const changed = await tx.q(`UPDATE steps SET status = 'completed', completed_at = $4, completed_host = $5, completed_by = $6, completed_token = $7,
      commit_hash = $8, complete_reason = $9, lease_expires_at = NULL
    WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 AND status IN ('claimed', 'in_progress') AND claimed_host = $5 AND claimed_by = $6 AND claim_token = $7 RETURNING anchor`,
  [...args, tx.now, tx.host, actor.worktree, owner.claim_token, commit, force]);
  if (changed.length !== 1) throw new RefusedError('not_holder', `cannot complete ${anchor}: the claim changed`);
  let autoCompleted = 0;
  if (force !== null) {
    autoCompleted = (await tx.q(`UPDATE checklist_items SET status = 'completed', updated_at = $4, updated_by = $5 WHERE repo_id = $1 AND plan_path = $2 AND status <> 'completed'
        AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3) RETURNING id`,
    [...args, tx.now, actor.worktree])).length;
  }
  if (openSubsteps.length > 0) {
    await tx.q(`UPDATE steps SET status = 'completed', completed_at = $4, completed_host = $5, completed_by = $6, completed_token = claim_token, complete_reason = $7, lease_expires_at = NULL
      WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed'`, [...args, tx.now, tx.host, actor.worktree, force]);
  }
  await writeEvent(tx, actor, {
    entity: 'step', action: 'complete', planPath: plan, stepAnchor: anchor, from: step.status, to: 'completed', reason: force,
    data: { claim_token: owner.claim_token, commit_hash: commit, forced: force !== null, items_auto_completed: autoCompleted, substeps_completed: openSubsteps },
  });
  const remaining = await countRemaining(tx, plan);
  // Concurrent completers of a plan's last steps: the guarded UPDATE lets exactly one mark it done.
  const planCompleted = remaining === 0 && (await tx.q(`UPDATE plans SET status = 'done', updated_at = $3 WHERE repo_id = $1 AND plan_path = $2 AND status <> 'done'
      AND NOT EXISTS (SELECT 1 FROM steps WHERE repo_id = $1 AND plan_path = $2 AND status <> 'completed') RETURNING plan_path`, [tx.repo, plan, tx.now])).length === 1;
  if (planCompleted) await writeEvent(tx, actor, { entity: 'plan', action: 'complete', planPath: plan, from: 'active', to: 'done', reason: `last step ${anchor} completed` });
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
  return {
    completed: true, step_anchor: step.anchor, commit_hash: step.commit_hash, forced: step.complete_reason !== null, force_reason: step.complete_reason,
    incomplete_items_auto_completed: 0, already_completed: true, plan_completed: plan.status === 'done', remaining_steps: await countRemaining(tx, step.plan_path),
  };
}

function incomplete(anchor: string, items: OpenItem[]): RefusedError {
  const shown = items.slice(0, 3).map((i) => `${i.step_anchor === anchor ? '' : `${i.step_anchor} `}${i.kind} ${i.ordinal} "${i.text.length > 40 ? i.text.slice(0, 39) + '…' : i.text}"`).join(', ');
  const what = `${items.length} open item${items.length === 1 ? '' : 's'} (${shown}${items.length > 3 ? ', …' : ''})`;
  return new RefusedError('incomplete', `cannot complete ${anchor}: ${what}; finish them or pass --force <reason>`);
}
