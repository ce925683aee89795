import type { CommitTrailer, ReconcileConflict, ReconciledStep, ReconcileOptions, ReconcileResult, UnknownTrailer } from '../maintenanceTypes.ts';
import { sameCommit } from '../sqlite/reconcile.ts';
import type { Actor } from '../types.ts';
import { findPlan, lockOwner, writeEvent, type PgStepRow } from './rows.ts';
import type { Tx } from './session.ts';

/**
 * Applies commit trailers (newest first) in one transaction, as on SQLite: the newest commit per
 * (plan, step) completes the step; a different recorded hash wins only when forced. Each step is
 * changed under its plan's shared lock and its claim's row lock, as a completion is.
 */
export async function reconcileTrailers(tx: Tx, trailers: readonly CommitTrailer[], actor: Actor | null, options: ReconcileOptions): Promise<ReconcileResult> {
  const result = { reconciled: [] as ReconciledStep[], conflicts: [] as ReconcileConflict[], unknown: [] as UnknownTrailer[], unchanged: 0, plans_completed: [] as string[] };
  const seen = new Set<string>();
  const touched = new Set<string>();
  for (const t of trailers) {
    const key = `${t.plan_path}\0${t.step_anchor}`;
    if (seen.has(key) || (options.planPath !== undefined && t.plan_path !== options.planPath)) continue;
    seen.add(key);
    if (!(await findPlan(tx, t.plan_path))) {
      result.unknown.push({ plan_path: t.plan_path, step_anchor: t.step_anchor, commit_hash: t.commit_hash, reason: 'unknown_plan' });
      continue;
    }
    const exists = await tx.q('SELECT 1 FROM steps WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3', [tx.repo, t.plan_path, t.step_anchor]);
    if (exists.length === 0) {
      result.unknown.push({ plan_path: t.plan_path, step_anchor: t.step_anchor, commit_hash: t.commit_hash, reason: 'unknown_step' });
      continue;
    }
    const { step, owner } = await lockOwner(tx, t.plan_path, t.step_anchor);
    if (step.status !== 'completed') {
      await completeFromGit(tx, step, owner, t.commit_hash, actor);
      touched.add(step.plan_path);
      result.reconciled.push({ plan_path: step.plan_path, step_anchor: step.anchor, commit_hash: t.commit_hash, from_status: step.status, previous_hash: step.commit_hash });
      continue;
    }
    if (step.commit_hash !== null && sameCommit(step.commit_hash, t.commit_hash)) {
      result.unchanged++;
      continue;
    }
    const conflict = step.commit_hash !== null;
    if (conflict) result.conflicts.push({ plan_path: step.plan_path, step_anchor: step.anchor, db_hash: step.commit_hash as string, git_hash: t.commit_hash, overwritten: options.force });
    if (conflict && !options.force) continue;
    await tx.q('UPDATE steps SET commit_hash = $4 WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3', [tx.repo, step.plan_path, step.anchor, t.commit_hash]);
    await writeEvent(tx, actor, {
      entity: 'step', action: 'reconcile', planPath: step.plan_path, stepAnchor: step.anchor, from: 'completed', to: 'completed',
      reason: conflict ? `--force: commit hash taken from git (was ${step.commit_hash})` : `commit hash recorded from git`,
      data: { commit_hash: t.commit_hash, previous_hash: step.commit_hash, forced: conflict },
    });
    result.reconciled.push({ plan_path: step.plan_path, step_anchor: step.anchor, commit_hash: t.commit_hash, from_status: 'completed', previous_hash: step.commit_hash });
  }
  for (const plan of touched) if (await finishPlan(tx, plan, actor)) result.plans_completed.push(plan);
  return result satisfies ReconcileResult;
}

/** Completes a step git says landed, with its unfinished substeps and items; the holder (if any) keeps authorship. */
async function completeFromGit(tx: Tx, step: PgStepRow, claim: PgStepRow, hash: string, actor: Actor | null): Promise<void> {
  const owner = step.parent_anchor ? claim : step;
  const holder = owner.claimed_by;
  const by = holder ?? actor?.worktree ?? null;
  const host = holder ? owner.claimed_host : actor ? tx.host : null;
  const token = holder ? owner.claim_token : null;
  const K = [tx.repo, step.plan_path, step.anchor];
  const items = (await tx.q(`UPDATE checklist_items SET status = 'completed', updated_at = $4, updated_by = $5 WHERE repo_id = $1 AND plan_path = $2 AND status <> 'completed'
      AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed') RETURNING id`,
  [...K, tx.now, by])).length;
  const substeps = (await tx.q<{ anchor: string; step_index: number }>(`UPDATE steps SET status = 'completed', completed_at = $4, completed_host = $5, completed_by = $6, completed_token = $7,
      lease_expires_at = NULL, complete_reason = $8 WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed' RETURNING anchor, step_index`,
  [...K, tx.now, host, by, token, `reconciled from commit ${hash.slice(0, 12)}`])).sort((a, b) => a.step_index - b.step_index).map((r) => r.anchor);
  const reason = items > 0 || substeps.length > 0 ? `reconciled from commit ${hash.slice(0, 12)}: open items and substeps completed` : null;
  await tx.q(`UPDATE steps SET status = 'completed', completed_at = $4, completed_host = $5, completed_by = $6, completed_token = $7, commit_hash = $8,
      complete_reason = $9, lease_expires_at = NULL WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3`, [...K, tx.now, host, by, token, hash, reason]);
  await writeEvent(tx, actor, {
    entity: 'step', action: 'reconcile', planPath: step.plan_path, stepAnchor: step.anchor, from: step.status, to: 'completed',
    reason: `commit ${hash} carries its trailers`,
    data: { commit_hash: hash, previous_hash: step.commit_hash, previous_holder: holder, items_auto_completed: items, substeps_auto_completed: substeps },
  });
}

/** Marks a plan done when reconciliation completed its last step. */
async function finishPlan(tx: Tx, plan: string, actor: Actor | null): Promise<boolean> {
  const unfinished = (await tx.q('SELECT 1 FROM steps WHERE repo_id = $1 AND plan_path = $2 AND status <> \'completed\' LIMIT 1', [tx.repo, plan])).length;
  const row = await findPlan(tx, plan);
  if (unfinished > 0 || !row || row.status === 'done') return false;
  await tx.q(`UPDATE plans SET status = 'done', updated_at = $3 WHERE repo_id = $1 AND plan_path = $2`, [tx.repo, plan, tx.now]);
  await writeEvent(tx, actor, { entity: 'plan', action: 'complete', planPath: plan, from: row.status, to: 'done', reason: 'last steps completed by reconcile' });
  return true;
}
