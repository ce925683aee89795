import type { ReopenPort } from '../shared/reopen.ts';
import type { PgMethods } from './port.ts';

const CLEAR_COMPLETION =
  'completed_at = NULL, completed_host = NULL, completed_by = NULL, completed_token = NULL, commit_hash = NULL, complete_reason = NULL';
const CLEAR_CLAIM =
  'claimed_host = NULL, claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1, claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL';

/** Reopening completed steps (shared/reopen.ts), under the locks requireClaim took. */
export const reopenPg: PgMethods<ReopenPort> = {
  async reopenUnderClaim(plan, anchor, parent) {
    await this.tx.q(
      `UPDATE steps SET status = $4, ${CLEAR_COMPLETION}, claimed_host = $5, claimed_by = $6, claimed_agent = $7, claim_token = $8,
        claimed_at = $9, lease_expires_at = $10, heartbeat_at = $11, started_at = $12
      WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 AND status = 'completed'`,
      [
        this.tx.repo,
        plan,
        anchor,
        parent.status,
        parent.claimed_host ?? null,
        parent.claimed_by,
        parent.claimed_agent,
        parent.claim_token,
        parent.claimed_at,
        parent.lease_expires_at,
        parent.heartbeat_at,
        parent.started_at,
      ],
    );
  },
  async reopenToPending(plan, anchor) {
    await this.tx.q(
      `UPDATE steps SET status = 'pending', ${CLEAR_COMPLETION}, ${CLEAR_CLAIM} WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 AND status = 'completed'`,
      [this.tx.repo, plan, anchor],
    );
  },
  async dependentTops(plan, anchor) {
    return (
      await this.tx.q<{ top: string }>(
        `SELECT coalesce(c.parent_anchor, c.anchor) AS top FROM step_deps d
      JOIN steps c ON c.repo_id = d.repo_id AND c.plan_path = d.plan_path AND c.anchor = d.step_anchor
      WHERE d.repo_id = $1 AND d.plan_path = $2 AND d.depends_on = $3 ORDER BY d.step_anchor`,
        [this.tx.repo, plan, anchor],
      )
    ).map((r) => r.top);
  },
  async reopenPlan(plan) {
    return (
      (
        await this.tx.q(
          `UPDATE plans SET status = 'active', updated_at = $3 WHERE repo_id = $1 AND plan_path = $2 AND status = 'done' RETURNING plan_path`,
          [this.tx.repo, plan, this.now],
        )
      ).length > 0
    );
  },
};
