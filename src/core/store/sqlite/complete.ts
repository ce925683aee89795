import { RefusedError } from '../../errors.ts';
import { countRemaining } from './readiness.ts';
import { assertHolder, ownerOf, requireCurrentPlan, requirePlan, requireStep, writeEvent, type StepRow } from './rows.ts';
import type { Database } from './sqlite.ts';
import type { Actor, CompleteOptions, CompleteResult } from '../types.ts';
import type { PlanSource } from '../../plan/types.ts';

/**
 * Completes a step the actor holds, with its substeps: strict (every item of the step and its
 * substeps done) unless forced with a reason. Only complete (and commit) change a step's status,
 * substeps included (docs/steps.md). Re-completing as the same holder is a no-op, so a retry after a
 * crash is safe.
 */
export function completeStep(db: Database, now: Date, source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions): CompleteResult {
  const plan = source.planPath;
  requireCurrentPlan(db, source);
  const step = requireStep(db, plan, anchor);
  if (step.status === 'completed') return repeatCompletion(db, step, actor);
  const owner = ownerOf(db, step);
  assertHolder(owner, actor, 'complete');
  const force = options.forceReason ?? null;
  const openItems = db.prepare(`SELECT step_anchor, kind, ordinal, text FROM checklist_items WHERE plan_path = ? AND status != 'completed'
      AND step_anchor IN (SELECT @a UNION ALL SELECT anchor FROM steps WHERE plan_path = ? AND parent_anchor = @a AND status != 'completed')`)
    .all(plan, plan, { a: anchor }) as OpenItem[];
  const openSubsteps = db.prepare(`SELECT anchor FROM steps WHERE plan_path = ? AND parent_anchor = ? AND status != 'completed' ORDER BY step_index`).pluck().all(plan, anchor) as string[];
  if (force === null && openItems.length > 0) throw incomplete(anchor, openItems);
  const at = now.toISOString();
  const commit = options.commitHash ?? null;
  const changed = db.prepare(`UPDATE steps SET status = 'completed', completed_at = @now, completed_by = @wt, completed_token = @token,
      commit_hash = @commit, complete_reason = @reason, lease_expires_at = NULL
    WHERE plan_path = @plan AND anchor = @anchor AND status IN ('claimed', 'in_progress') AND claimed_by = @wt AND claim_token = @token`)
    .run({ now: at, wt: actor.worktree, token: owner.claim_token, commit, reason: force, plan, anchor }).changes;
  if (changed !== 1) throw new RefusedError('not_holder', `cannot complete ${anchor}: the claim changed`);
  let autoCompleted = 0;
  if (force !== null) {
    autoCompleted = db.prepare(`UPDATE checklist_items SET status = 'completed', updated_at = @now, updated_by = @wt WHERE plan_path = @plan AND status != 'completed'
        AND step_anchor IN (SELECT @anchor UNION ALL SELECT anchor FROM steps WHERE plan_path = @plan AND parent_anchor = @anchor)`)
      .run({ now: at, wt: actor.worktree, plan, anchor }).changes;
  }
  // Substeps go with their parent: every item is done now (strict) or was just completed (forced).
  if (openSubsteps.length > 0) {
    db.prepare(`UPDATE steps SET status = 'completed', completed_at = @now, completed_by = @wt, completed_token = claim_token, complete_reason = @reason, lease_expires_at = NULL
      WHERE plan_path = @plan AND parent_anchor = @anchor AND status != 'completed'`)
      .run({ now: at, wt: actor.worktree, reason: force, plan, anchor });
  }
  writeEvent(db, at, actor, {
    entity: 'step', action: 'complete', planPath: plan, stepAnchor: anchor, from: step.status, to: 'completed', reason: force,
    data: { claim_token: owner.claim_token, commit_hash: commit, forced: force !== null, items_auto_completed: autoCompleted, substeps_completed: openSubsteps },
  });
  const remaining = countRemaining(db, plan);
  // Substeps finish with their parent, so only a plan without open top-level steps needs the full check.
  const planCompleted = remaining === 0 && db.prepare(`SELECT 1 FROM steps WHERE plan_path = ? AND status != 'completed' LIMIT 1`).get(plan) === undefined;
  if (planCompleted) {
    db.prepare(`UPDATE plans SET status = 'done', updated_at = ? WHERE plan_path = ?`).run(at, plan);
    writeEvent(db, at, actor, { entity: 'plan', action: 'complete', planPath: plan, from: 'active', to: 'done', reason: `last step ${anchor} completed` });
  }
  return {
    completed: true, step_anchor: anchor, commit_hash: commit, forced: force !== null, force_reason: force,
    incomplete_items_auto_completed: autoCompleted, already_completed: false, plan_completed: planCompleted, remaining_steps: remaining,
  };
}

/**
 * A repeat of a completion: a no-op success only for the holder that completed it (same worktree,
 * no other agent, the same token when one is given), exactly whom the first complete would have let through.
 */
function repeatCompletion(db: Database, step: StepRow, actor: Actor): CompleteResult {
  // The agent that completed it (recorded on its complete event), else the one that held the claim.
  const completer = (db.prepare(`SELECT agent FROM events WHERE plan_path = ? AND step_anchor = ? AND entity = 'step' AND action = 'complete' ORDER BY id DESC LIMIT 1`)
    .pluck().get(step.plan_path, step.anchor) as string | null | undefined) ?? ownerOf(db, step).claimed_agent;
  const agentMismatch = completer !== null && actor.agent !== null && completer !== actor.agent;
  const tokenMismatch = actor.token != null && actor.token !== step.completed_token;
  if (step.completed_by !== actor.worktree || agentMismatch || tokenMismatch) {
    const by = `${step.completed_by ?? 'someone else'}${completer ? ` (agent ${completer})` : ''}`;
    throw new RefusedError('already_completed', `${step.anchor} is already completed by ${by}${step.completed_token !== null ? ` with token ${step.completed_token}` : ''}`);
  }
  const plan = requirePlan(db, step.plan_path);
  return {
    completed: true, step_anchor: step.anchor, commit_hash: step.commit_hash, forced: step.complete_reason !== null, force_reason: step.complete_reason,
    incomplete_items_auto_completed: 0, already_completed: true, plan_completed: plan.status === 'done', remaining_steps: countRemaining(db, step.plan_path),
  };
}

interface OpenItem {
  step_anchor: string;
  kind: string;
  ordinal: number;
  text: string;
}

function incomplete(anchor: string, items: OpenItem[]): RefusedError {
  const shown = items.slice(0, 3).map((i) => `${i.step_anchor === anchor ? '' : `${i.step_anchor} `}${i.kind} ${i.ordinal} "${i.text.length > 40 ? i.text.slice(0, 39) + '…' : i.text}"`).join(', ');
  const what = `${items.length} open item${items.length === 1 ? '' : 's'} (${shown}${items.length > 3 ? ', …' : ''})`;
  return new RefusedError('incomplete', `cannot complete ${anchor}: ${what}; finish them or pass --force <reason>`);
}
