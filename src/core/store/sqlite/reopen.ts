import type { ReopenPort } from '../shared/reopen.ts';
import type { SqliteMethods } from './port.ts';

const CLEAR_COMPLETION =
  'completed_at = NULL, completed_by = NULL, completed_token = NULL, commit_hash = NULL, complete_reason = NULL';

/** Reopening completed steps (shared/reopen.ts). */
export const reopenSql: SqliteMethods<ReopenPort> = {
  reopenUnderClaim(plan, anchor, parent) {
    this.db
      .prepare(
        `UPDATE steps SET status = @status, ${CLEAR_COMPLETION}, claimed_by = @by, claimed_agent = @agent, claim_token = @token,
        claimed_at = @claimedAt, lease_expires_at = @lease, heartbeat_at = @heartbeat, started_at = @started
      WHERE plan_path = @plan AND anchor = @anchor AND status = 'completed'`,
      )
      .run({
        status: parent.status,
        by: parent.claimed_by,
        agent: parent.claimed_agent,
        token: parent.claim_token,
        claimedAt: parent.claimed_at,
        lease: parent.lease_expires_at,
        heartbeat: parent.heartbeat_at,
        started: parent.started_at,
        plan,
        anchor,
      });
  },
  reopenToPending(plan, anchor) {
    this.db
      .prepare(
        `UPDATE steps SET status = 'pending', ${CLEAR_COMPLETION}, claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1,
        claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL
      WHERE plan_path = ? AND anchor = ? AND status = 'completed'`,
      )
      .run(plan, anchor);
  },
  dependentTops(plan, anchor) {
    return this.db
      .prepare(
        `SELECT coalesce(c.parent_anchor, c.anchor) FROM step_deps d JOIN steps c ON c.plan_path = d.plan_path AND c.anchor = d.step_anchor
      WHERE d.plan_path = ? AND d.depends_on = ? ORDER BY d.step_anchor`,
      )
      .pluck()
      .all(plan, anchor) as string[];
  },
  reopenPlan(plan) {
    return (
      this.db
        .prepare(
          `UPDATE plans SET status = 'active', updated_at = ? WHERE plan_path = ? AND status = 'done' RETURNING plan_path`,
        )
        .pluck()
        .get(this.now, plan) !== undefined
    );
  },
};
