import type { CommitTrailer, ReconcileConflict, ReconciledStep, ReconcileOptions, ReconcileResult, UnknownTrailer } from '../maintenanceTypes.ts';
import { findPlan, writeEvent, type StepRow } from './rows.ts';
import type { Database } from './sqlite.ts';
import type { Actor } from '../types.ts';

/**
 * Applies commit trailers (newest first) to the store inside the caller's write transaction: the
 * newest commit per (plan, step) completes the step; a different recorded hash wins unless forced.
 */
export function reconcileTrailers(db: Database, now: Date, trailers: readonly CommitTrailer[], actor: Actor | null, options: ReconcileOptions): ReconcileResult {
  const at = now.toISOString();
  const result = { reconciled: [] as ReconciledStep[], conflicts: [] as ReconcileConflict[], unknown: [] as UnknownTrailer[], unchanged: 0, plans_completed: [] as string[] };
  const seen = new Set<string>();
  const touched = new Set<string>();
  for (const t of trailers) {
    const key = `${t.plan_path}\0${t.step_anchor}`;
    if (seen.has(key) || (options.planPath !== undefined && t.plan_path !== options.planPath)) continue;
    seen.add(key);
    if (!findPlan(db, t.plan_path)) {
      result.unknown.push({ plan_path: t.plan_path, step_anchor: t.step_anchor, commit_hash: t.commit_hash, reason: 'unknown_plan' });
      continue;
    }
    const step = db.prepare('SELECT * FROM steps WHERE plan_path = ? AND anchor = ?').get(t.plan_path, t.step_anchor) as StepRow | undefined;
    if (!step) {
      result.unknown.push({ plan_path: t.plan_path, step_anchor: t.step_anchor, commit_hash: t.commit_hash, reason: 'unknown_step' });
      continue;
    }
    if (step.status !== 'completed') {
      completeFromGit(db, at, step, t.commit_hash, actor);
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
    db.prepare('UPDATE steps SET commit_hash = ? WHERE plan_path = ? AND anchor = ?').run(t.commit_hash, step.plan_path, step.anchor);
    writeEvent(db, at, actor, {
      entity: 'step', action: 'reconcile', planPath: step.plan_path, stepAnchor: step.anchor, from: 'completed', to: 'completed',
      reason: conflict ? `--force: commit hash taken from git (was ${step.commit_hash})` : `commit hash recorded from git`,
      data: { commit_hash: t.commit_hash, previous_hash: step.commit_hash, forced: conflict },
    });
    result.reconciled.push({ plan_path: step.plan_path, step_anchor: step.anchor, commit_hash: t.commit_hash, from_status: 'completed', previous_hash: step.commit_hash });
  }
  for (const plan of touched) if (finishPlan(db, at, plan, actor)) result.plans_completed.push(plan);
  return result satisfies ReconcileResult;
}

/** Completes a step git says landed, with its unfinished substeps and items; the holder (if any) keeps authorship. */
function completeFromGit(db: Database, at: string, step: StepRow, hash: string, actor: Actor | null): void {
  const owner = step.parent_anchor
    ? (db.prepare('SELECT * FROM steps WHERE plan_path = ? AND anchor = ?').get(step.plan_path, step.parent_anchor) as StepRow | undefined) ?? step
    : step;
  const holder = owner.claimed_by;
  const by = holder ?? actor?.worktree ?? null;
  const token = holder ? owner.claim_token : null;
  const params = { now: at, by, token, plan: step.plan_path, anchor: step.anchor };
  const items = db.prepare(`UPDATE checklist_items SET status = 'completed', updated_at = @now, updated_by = @by WHERE plan_path = @plan AND status != 'completed'
      AND step_anchor IN (SELECT @anchor UNION ALL SELECT anchor FROM steps WHERE plan_path = @plan AND parent_anchor = @anchor AND status != 'completed')`)
    .run(params).changes;
  const substeps = db.prepare(`UPDATE steps SET status = 'completed', completed_at = @now, completed_by = @by, completed_token = @token, lease_expires_at = NULL,
      complete_reason = @reason WHERE plan_path = @plan AND parent_anchor = @anchor AND status != 'completed' RETURNING anchor`).pluck()
    .all({ ...params, reason: `reconciled from commit ${hash.slice(0, 12)}` }) as string[];
  const reason = items > 0 || substeps.length > 0 ? `reconciled from commit ${hash.slice(0, 12)}: open items and substeps completed` : null;
  db.prepare(`UPDATE steps SET status = 'completed', completed_at = @now, completed_by = @by, completed_token = @token, commit_hash = @hash,
      complete_reason = @reason, lease_expires_at = NULL WHERE plan_path = @plan AND anchor = @anchor`)
    .run({ ...params, hash, reason });
  writeEvent(db, at, actor, {
    entity: 'step', action: 'reconcile', planPath: step.plan_path, stepAnchor: step.anchor, from: step.status, to: 'completed',
    reason: `commit ${hash} carries its trailers`,
    data: { commit_hash: hash, previous_hash: step.commit_hash, previous_holder: holder, items_auto_completed: items, substeps_auto_completed: substeps },
  });
}

/** Marks a plan done when reconciliation completed its last step. */
function finishPlan(db: Database, at: string, plan: string, actor: Actor | null): boolean {
  const unfinished = Number(db.prepare(`SELECT COUNT(*) FROM steps WHERE plan_path = ? AND status != 'completed'`).pluck().get(plan));
  const row = findPlan(db, plan);
  if (unfinished > 0 || !row || row.status === 'done') return false;
  db.prepare(`UPDATE plans SET status = 'done', updated_at = ? WHERE plan_path = ?`).run(at, plan);
  writeEvent(db, at, actor, { entity: 'plan', action: 'complete', planPath: plan, from: row.status, to: 'done', reason: 'last steps completed by reconcile' });
  return true;
}

/** Hashes name the same commit when one is a prefix of the other (a recorded hash may be abbreviated). */
export function sameCommit(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x.startsWith(y) || y.startsWith(x);
}
