import type { ReconcilePort } from '../shared/reconcile.ts';
import type { SqliteMethods } from './port.ts';

/** Reconciliation's writes (shared/reconcile.ts). */
export const reconcileSql: SqliteMethods<ReconcilePort> = {
  completeOpenWork(plan, anchor, by, reason) {
    const params = { now: this.now, by: by.worktree, token: by.token, plan, anchor };
    const items = this.db
      .prepare(
        `UPDATE checklist_items SET status = 'completed', updated_at = @now, updated_by = @by WHERE plan_path = @plan AND status != 'completed'
        AND step_anchor IN (SELECT @anchor UNION ALL SELECT anchor FROM steps WHERE plan_path = @plan AND parent_anchor = @anchor AND status != 'completed')`,
      )
      .run(params).changes;
    const substeps = this.db
      .prepare(
        `UPDATE steps SET status = 'completed', completed_at = @now, completed_by = @by, completed_token = @token, lease_expires_at = NULL,
        complete_reason = @reason WHERE plan_path = @plan AND parent_anchor = @anchor AND status != 'completed' RETURNING step_index, anchor`,
      )
      .raw()
      .all({ ...params, reason }) as [number, string][];
    return { items, substeps: substeps.sort((a, b) => a[0] - b[0]).map((s) => s[1]) };
  },
  completeStepRow(plan, anchor, by, hash, reason) {
    this.db
      .prepare(
        `UPDATE steps SET status = 'completed', completed_at = @now, completed_by = @by, completed_token = @token, commit_hash = @hash,
        complete_reason = @reason, lease_expires_at = NULL WHERE plan_path = @plan AND anchor = @anchor`,
      )
      .run({ now: this.now, by: by.worktree, token: by.token, plan, anchor, hash, reason });
  },
  setCommitHash(plan, anchor, hash) {
    this.db.prepare('UPDATE steps SET commit_hash = ? WHERE plan_path = ? AND anchor = ?').run(hash, plan, anchor);
  },
  hasOpenSteps(plan) {
    return (
      this.db.prepare(`SELECT 1 FROM steps WHERE plan_path = ? AND status != 'completed' LIMIT 1`).get(plan) !==
      undefined
    );
  },
};
