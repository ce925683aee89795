import type { ReconcilePort } from '../shared/reconcile.ts';
import type { PgMethods } from './port.ts';

/** Reconciliation's writes (shared/reconcile.ts), made under the locks findClaim took. */
export const reconcilePg: PgMethods<ReconcilePort> = {
  async completeOpenWork(plan, anchor, by, reason) {
    const K = [this.tx.repo, plan, anchor];
    const items = (
      await this.tx.q(
        `UPDATE checklist_items SET status = 'completed', updated_at = $4, updated_by = $5 WHERE repo_id = $1 AND plan_path = $2 AND status <> 'completed'
        AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed') RETURNING id`,
        [...K, this.now, by.worktree],
      )
    ).length;
    const substeps = await this.tx.q<{ anchor: string; step_index: number }>(
      `UPDATE steps SET status = 'completed', completed_at = $4, completed_host = $5, completed_by = $6,
        completed_token = $7, lease_expires_at = NULL, complete_reason = $8 WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed'
      RETURNING anchor, step_index`,
      [...K, this.now, by.host, by.worktree, by.token, reason],
    );
    return { items, substeps: substeps.sort((a, b) => a.step_index - b.step_index).map((r) => r.anchor) };
  },
  async completeStepRow(plan, anchor, by, hash, reason) {
    await this.tx.q(
      `UPDATE steps SET status = 'completed', completed_at = $4, completed_host = $5, completed_by = $6, completed_token = $7, commit_hash = $8,
        complete_reason = $9, lease_expires_at = NULL WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3`,
      [this.tx.repo, plan, anchor, this.now, by.host, by.worktree, by.token, hash, reason],
    );
  },
  async setCommitHash(plan, anchor, hash) {
    await this.tx.q('UPDATE steps SET commit_hash = $4 WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3', [
      this.tx.repo,
      plan,
      anchor,
      hash,
    ]);
  },
  async hasOpenSteps(plan) {
    return (
      (
        await this.tx.q(`SELECT 1 FROM steps WHERE repo_id = $1 AND plan_path = $2 AND status <> 'completed' LIMIT 1`, [
          this.tx.repo,
          plan,
        ])
      ).length > 0
    );
  },
};
