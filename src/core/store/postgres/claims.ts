import type { ClaimedEpic, ClaimsPort } from '../shared/claims.ts';
import { openStepsSql } from './readiness.ts';
import { eventInsert, STEP_COLUMNS, type PgStepRow } from './rows.ts';
import type { PgMethods } from './port.ts';

/** A claim's columns: $4 host, $5 worktree, $6 agent, $7 token, $8 now, $9 lease end (after $1 repo, $2 plan, $3 anchor). */
const CLAIM = `status = 'claimed', claimed_host = $4, claimed_by = $5, claimed_agent = $6, claim_token = $7, claimed_at = $8, lease_expires_at = $9,
  heartbeat_at = NULL, started_at = NULL`;

/** Claims and leases (shared/claims.ts) under the rows' locks; the claim's event goes with its COMMIT. */
export const claimsPg: PgMethods<ClaimsPort> = {
  async claimedEpic(epicId) {
    return (
      await this.tx.q<ClaimedEpic>(
        'SELECT id, status, worktree_path, branch FROM epics WHERE repo_id = $1 AND id = $2',
        [this.tx.repo, epicId],
      )
    )[0];
  },
  async firstReady(plan) {
    // Locking clauses are not allowed under UNION, but are in CTEs: both seeks in one round trip.
    return (
      await this.tx.q<PgStepRow>(
        `WITH ready AS (SELECT ${STEP_COLUMNS} FROM steps
        WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0
        ORDER BY step_index LIMIT 1 FOR UPDATE SKIP LOCKED),
      expired AS (SELECT ${STEP_COLUMNS} FROM steps
        WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress') AND lease_expires_at < $3 AND blockers = 0
        ORDER BY step_index LIMIT 1 FOR UPDATE SKIP LOCKED)
      SELECT * FROM ready UNION ALL SELECT * FROM expired ORDER BY step_index LIMIT 1`,
        [this.tx.repo, plan, this.now],
      )
    )[0];
  },
  async readyStep(plan, anchor) {
    return (
      await this.tx.q<PgStepRow>(
        `SELECT ${STEP_COLUMNS} FROM steps
        WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 AND parent_anchor IS NULL AND blockers = 0
          AND (status = 'pending' OR (status IN ('claimed', 'in_progress') AND lease_expires_at < $4))
        FOR UPDATE SKIP LOCKED`,
        [this.tx.repo, plan, anchor, this.now],
      )
    )[0];
  },
  async claimStep(step, actor, token, until) {
    const changed = await this.tx.q(
      `UPDATE steps SET ${CLAIM} WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 AND claim_token = $10
        AND (status = 'pending' OR (status IN ('claimed', 'in_progress') AND lease_expires_at < $8)) RETURNING anchor`,
      [
        this.tx.repo,
        step.plan_path,
        step.anchor,
        this.host,
        actor.worktree,
        actor.agent,
        token,
        this.now,
        until,
        step.claim_token,
      ],
    );
    return changed.length === 1;
  },
  async claimSubsteps(source, parent, actor, token, until) {
    // The plan file matched the stored structure, and substeps follow their step in step_index order.
    if (source.plan().steps[parent.step_index + 1]?.parentAnchor !== parent.anchor) return [];
    const rows = await this.tx.q<{ anchor: string; step_index: number }>(
      `UPDATE steps SET ${CLAIM}
      WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed' RETURNING anchor, step_index`,
      [this.tx.repo, source.planPath, parent.anchor, this.host, actor.worktree, actor.agent, token, this.now, until],
    );
    return rows.sort((a, b) => a.step_index - b.step_index).map((s) => s.anchor);
  },
  async reopenItemsInProgress(plan, anchor) {
    await this.tx.q(
      `UPDATE checklist_items SET status = 'open', updated_at = $4, updated_by = NULL
      WHERE repo_id = $1 AND plan_path = $2 AND status = 'in_progress'
        AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3)`,
      [this.tx.repo, plan, anchor, this.now],
    );
  },
  async finishClaim(actor, event, plan) {
    // The event, the counts and COMMIT in one round trip (the claimed row stays locked until then).
    const L = (v: unknown) => this.tx.lit(v);
    const results = await this.tx.finish([
      eventInsert(this.tx, actor, event),
      `SELECT (SELECT count(*) FROM steps WHERE repo_id = ${L(this.tx.repo)} AND plan_path = ${L(plan)} AND parent_anchor IS NULL AND blockers = 0
          AND (status = 'pending' OR (status IN ('claimed', 'in_progress') AND lease_expires_at < ${L(this.now)})))::int AS ready,
        ${openStepsSql(`repo_id = ${L(this.tx.repo)} AND plan_path = ${L(plan)}`)} AS remaining`,
    ]);
    const counts = results[1]?.[0] as { ready: number; remaining: number } | undefined;
    return { ready: Number(counts?.ready ?? 0), remaining: Number(counts?.remaining ?? 0) };
  },
  async startStepRow(plan, anchor, actor, token) {
    const changed = await this.tx.q(
      `UPDATE steps SET status = 'in_progress', started_at = $4
      WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 AND status = 'claimed' AND claimed_by = $5 AND claimed_host = $6 AND claim_token = $7 RETURNING anchor`,
      [this.tx.repo, plan, anchor, this.now, actor.worktree, this.host, token],
    );
    return changed.length === 1;
  },
  async renewLease(plan, anchor, actor, token, until) {
    return (
      await this.tx.q(
        `UPDATE steps SET heartbeat_at = $4, lease_expires_at = $5
      WHERE repo_id = $1 AND plan_path = $2 AND (anchor = $3 OR parent_anchor = $3) AND status IN ('claimed', 'in_progress')
        AND claimed_by = $6 AND claimed_host = $7 AND claim_token = $8 RETURNING anchor`,
        [this.tx.repo, plan, anchor, this.now, until, actor.worktree, this.host, token],
      )
    ).length;
  },
  async releaseClaimRows(plan, anchor) {
    await this.tx.q(
      `UPDATE steps SET status = 'pending', claimed_host = NULL, claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1,
        claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL
      WHERE repo_id = $1 AND plan_path = $2 AND (anchor = $3 OR parent_anchor = $3) AND status IN ('claimed', 'in_progress')`,
      [this.tx.repo, plan, anchor],
    );
    await this.tx.q(
      `UPDATE checklist_items SET status = 'open', updated_at = $4, updated_by = NULL
      WHERE repo_id = $1 AND plan_path = $2 AND status = 'in_progress'
        AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3)`,
      [this.tx.repo, plan, anchor, this.now],
    );
  },
  async reopenCompletedRows(plan, anchor) {
    const family = 'repo_id = $1 AND plan_path = $2 AND (anchor = $3 OR parent_anchor = $3)';
    await this.tx.q(
      `UPDATE steps SET status = 'pending', claimed_host = NULL, claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1, claimed_at = NULL,
        lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL, completed_at = NULL, completed_host = NULL, completed_by = NULL, completed_token = NULL,
        commit_hash = NULL, complete_reason = NULL
      WHERE ${family} AND status = 'completed'`,
      [this.tx.repo, plan, anchor],
    );
    await this.tx.q(
      `UPDATE checklist_items SET status = 'open', updated_at = $4, updated_by = NULL
      WHERE repo_id = $1 AND plan_path = $2 AND step_anchor IN (SELECT anchor FROM steps WHERE ${family})`,
      [this.tx.repo, plan, anchor, this.now],
    );
    await this.tx.q(
      `UPDATE plans SET status = 'active', updated_at = $3 WHERE repo_id = $1 AND plan_path = $2 AND status = 'done'`,
      [this.tx.repo, plan, this.now],
    );
  },
};
