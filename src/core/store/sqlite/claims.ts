import type { ClaimedEpic, ClaimsPort } from '../shared/claims.ts';
import { countOpen } from './readiness.ts';
import { writeEvent, type StepRow } from './rows.ts';
import type { SqliteMethods } from './port.ts';

/** The first pending top-level step without blockers, by index. */
const READY = `SELECT * FROM steps INDEXED BY idx_steps_ready
  WHERE plan_path = ? AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0 ORDER BY step_index LIMIT 1`;
/** The first top-level step held with @status whose lease expired before @now, below index @before. */
const EXPIRED = `SELECT * FROM steps INDEXED BY idx_steps_top
  WHERE plan_path = @plan AND parent_anchor IS NULL AND status = @status AND step_index < @before
    AND lease_expires_at < @now AND blockers = 0 ORDER BY step_index LIMIT 1`;

/** The steps of a claim: the step and its substeps. Binds @plan and @anchor. */
const FAMILY = 'SELECT @anchor UNION ALL SELECT anchor FROM steps WHERE plan_path = @plan AND parent_anchor = @anchor';
const CLAIM = `status = 'claimed', claimed_by = @wt, claimed_agent = @agent, claim_token = @token,
  claimed_at = @now, lease_expires_at = @until, heartbeat_at = NULL, started_at = NULL`;

/** Claims and leases (shared/claims.ts), each a statement inside the operation's IMMEDIATE transaction. */
export const claimsSql: SqliteMethods<ClaimsPort> = {
  claimedEpic(epicId) {
    return this.db.prepare('SELECT id, status, worktree_path, branch FROM epics WHERE id = ?').get(epicId) as
      ClaimedEpic | undefined;
  },
  firstReady(plan) {
    // The first pending step without blockers (one seek on idx_steps_ready) or with an expired lease (few
    // by nature: one seek per held status on idx_steps_top); the lower index wins. Three statements, each
    // read in index order: one statement with UNION ALL and an IN sorted in temporary b-trees and cost a
    // cold claim 0.3 ms more (docs/cli-cost.md, "The step store").
    // Each expired read asks only below the best so far, so whatever it finds is lower.
    let first = this.db.prepare(READY).get(plan) as StepRow | undefined;
    for (const status of ['claimed', 'in_progress']) {
      const before = first?.step_index ?? Number.MAX_SAFE_INTEGER;
      first = (this.db.prepare(EXPIRED).get({ plan, status, now: this.now, before }) as StepRow | undefined) ?? first;
    }
    return first;
  },
  readyStep(plan, anchor) {
    return this.db
      .prepare(
        `SELECT * FROM steps WHERE plan_path = @plan AND anchor = @anchor AND parent_anchor IS NULL AND blockers = 0
        AND (status = 'pending' OR (status IN ('claimed', 'in_progress') AND lease_expires_at < @now))`,
      )
      .get({ plan, anchor, now: this.now }) as StepRow | undefined;
  },
  claimStep(step, actor, token, until) {
    return (
      this.db
        .prepare(
          `UPDATE steps SET ${CLAIM}
      WHERE plan_path = @plan AND anchor = @anchor AND claim_token = @old
        AND (status = 'pending' OR (status IN ('claimed', 'in_progress') AND lease_expires_at < @now))`,
        )
        .run({
          wt: actor.worktree,
          agent: actor.agent,
          token,
          now: this.now,
          until,
          plan: step.plan_path,
          anchor: step.anchor,
          old: step.claim_token,
        }).changes === 1
    );
  },
  claimSubsteps(source, parent, actor, token, until) {
    const rows = this.db
      .prepare(
        `UPDATE steps SET ${CLAIM}
      WHERE plan_path = @plan AND parent_anchor = @anchor AND status != 'completed' RETURNING step_index, anchor`,
      )
      .raw()
      .all({
        wt: actor.worktree,
        agent: actor.agent,
        token,
        now: this.now,
        until,
        plan: source.planPath,
        anchor: parent.anchor,
      }) as [number, string][];
    return rows.sort((a, b) => a[0] - b[0]).map((r) => r[1]);
  },
  reopenItemsInProgress(plan, anchor) {
    this.db
      .prepare(
        `UPDATE checklist_items SET status = 'open', updated_at = @now, updated_by = NULL
      WHERE plan_path = @plan AND status = 'in_progress' AND step_anchor IN (${FAMILY})`,
      )
      .run({ now: this.now, plan, anchor });
  },
  finishClaim(actor, event, plan) {
    writeEvent(this.db, this.now, actor, event);
    return countOpen(this.db, plan, this.now);
  },
  startStepRow(plan, anchor, actor, token) {
    return (
      this.db
        .prepare(
          `UPDATE steps SET status = 'in_progress', started_at = ?
      WHERE plan_path = ? AND anchor = ? AND status = 'claimed' AND claimed_by = ? AND claim_token = ?`,
        )
        .run(this.now, plan, anchor, actor.worktree, token).changes === 1
    );
  },
  renewLease(plan, anchor, actor, token, until) {
    return this.db
      .prepare(
        `UPDATE steps SET heartbeat_at = @now, lease_expires_at = @until
      WHERE plan_path = @plan AND anchor IN (${FAMILY}) AND status IN ('claimed', 'in_progress') AND claimed_by = @wt AND claim_token = @token`,
      )
      .run({ now: this.now, until, plan, anchor, wt: actor.worktree, token }).changes;
  },
  releaseClaimRows(plan, anchor) {
    this.db
      .prepare(
        `UPDATE steps SET status = 'pending', claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1,
        claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL
      WHERE plan_path = @plan AND anchor IN (${FAMILY}) AND status IN ('claimed', 'in_progress')`,
      )
      .run({ plan, anchor });
    this.db
      .prepare(
        `UPDATE checklist_items SET status = 'open', updated_at = @now, updated_by = NULL
      WHERE plan_path = @plan AND status = 'in_progress' AND step_anchor IN (${FAMILY})`,
      )
      .run({ now: this.now, plan, anchor });
  },
  reopenCompletedRows(plan, anchor) {
    const family = `plan_path = @plan AND (anchor = @anchor OR parent_anchor = @anchor)`;
    this.db
      .prepare(
        `UPDATE steps SET status = 'pending', claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1, claimed_at = NULL,
        lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL, completed_at = NULL, completed_by = NULL, completed_token = NULL,
        commit_hash = NULL, complete_reason = NULL
      WHERE ${family} AND status = 'completed'`,
      )
      .run({ plan, anchor });
    this.db
      .prepare(
        `UPDATE checklist_items SET status = 'open', updated_at = @now, updated_by = NULL
      WHERE plan_path = @plan AND step_anchor IN (SELECT anchor FROM steps WHERE ${family})`,
      )
      .run({ plan, anchor, now: this.now });
    this.db
      .prepare(`UPDATE plans SET status = 'active', updated_at = ? WHERE plan_path = ? AND status = 'done'`)
      .run(this.now, plan);
  },
};
