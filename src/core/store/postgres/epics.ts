import type { DebtRow, EpicRow, NewEpic } from '../epicTypes.ts';
import { epicValues, type BlockEvent, type EpicsPort } from '../shared/epics.ts';
import type { Actor } from '../types.ts';
import type { PgMethods } from './port.ts';
import { opEvent } from './rows.ts';
import type { Tx } from './session.ts';

const EPIC_COLUMNS = `id, title, brief, priority, complexity, complexity_source, status, status_reason, iteration, plan_iteration, max_iterations,
  merge_approved_by, merge_approved_at, worktree_path, branch, created_at, updated_at, pr_url, pr_checked_at, planner, budget_usd, budget_tokens, budget_minutes`;

/**
 * The epic operation `op` created for this holder with this title, as it is now; null when it committed
 * none (its reply was lost: docs/postgres-design.md, "Failures, retries, idempotence"). An epic of another title is not this one.
 */
export async function findCreatedEpic(tx: Tx, op: string, input: NewEpic, actor: Actor): Promise<EpicRow | null> {
  const row = await opEvent(tx, op, actor, 'epic', 'create', { "data->>'title'": input.title.trim() });
  return row?.epic_id
    ? ((
        await tx.q<EpicRow>(`SELECT ${EPIC_COLUMNS} FROM epics WHERE repo_id = $1 AND id = $2`, [tx.repo, row.epic_id])
      )[0] ?? null)
    : null;
}

/** Epics, their state and the debt register (shared/epics.ts); a status change reads the epic's row under its lock. */
export const epicsPg: PgMethods<EpicsPort> = {
  async insertEpic(id, input, complexity, planner) {
    return (
      (
        await this.tx.q(
          `INSERT INTO epics (repo_id, id, title, brief, priority, complexity, complexity_source, max_iterations, planner,
        budget_usd, budget_tokens, budget_minutes, status, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'planned', $13, $13) ON CONFLICT DO NOTHING RETURNING id`,
          [this.tx.repo, ...epicValues(id, input, complexity, planner), this.now],
        )
      ).length > 0
    );
  },
  async epicRow(id, lock = false) {
    return (
      await this.tx.q<EpicRow>(
        `SELECT ${EPIC_COLUMNS} FROM epics WHERE repo_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
        [this.tx.repo, id],
      )
    )[0];
  },
  listEpics(status) {
    return status
      ? this.tx.q<EpicRow>(
          `SELECT ${EPIC_COLUMNS} FROM epics WHERE repo_id = $1 AND status = $2 ORDER BY priority, created_at, id`,
          [this.tx.repo, status],
        )
      : this.tx.q<EpicRow>(
          `SELECT ${EPIC_COLUMNS} FROM epics WHERE repo_id = $1 ORDER BY CASE status WHEN 'done' THEN 1 ELSE 0 END, priority, created_at, id`,
          [this.tx.repo],
        );
  },
  async setEpicStatus(id, from, to, statusReason, iteration) {
    await this.tx.q(
      'UPDATE epics SET status = $3, status_reason = $4, iteration = $5, updated_at = $6 WHERE repo_id = $1 AND id = $2 AND status = $7',
      [this.tx.repo, id, to, statusReason, iteration, this.now, from],
    );
  },
  epicBlockEvents(id) {
    return this.tx.q<BlockEvent>(
      `SELECT action, at, from_status, data FROM events WHERE repo_id = $1 AND epic_id = $2 AND entity = 'epic'
      AND (to_status = 'blocked' OR action = 'retry') ORDER BY id DESC`,
      [this.tx.repo, id],
    );
  },
  async approveMergeRow(id, by) {
    await this.tx.q(
      'UPDATE epics SET merge_approved_by = $3, merge_approved_at = $4, updated_at = $4 WHERE repo_id = $1 AND id = $2',
      [this.tx.repo, id, by, this.now],
    );
  },
  async setPlannerRow(id, planner) {
    await this.tx.q('UPDATE epics SET planner = $3, updated_at = $4 WHERE repo_id = $1 AND id = $2', [
      this.tx.repo,
      id,
      planner,
      this.now,
    ]);
  },
  async bumpIteration(id) {
    await this.tx.q('UPDATE epics SET iteration = iteration + 1, updated_at = $3 WHERE repo_id = $1 AND id = $2', [
      this.tx.repo,
      id,
      this.now,
    ]);
  },
  async setPullRequestRow(id, url) {
    await this.tx.q(
      'UPDATE epics SET pr_url = $3, pr_checked_at = $4, updated_at = $4 WHERE repo_id = $1 AND id = $2',
      [this.tx.repo, id, url, this.now],
    );
  },
  async markPullRequestChecked(id) {
    await this.tx.q('UPDATE epics SET pr_checked_at = $3 WHERE repo_id = $1 AND id = $2', [this.tx.repo, id, this.now]);
  },
  async setEpicWorktree(id, path, branch) {
    await this.tx.q(
      'UPDATE epics SET worktree_path = $3, worktree_host = $4, branch = $5, updated_at = $6 WHERE repo_id = $1 AND id = $2',
      [this.tx.repo, id, path, this.host, branch, this.now],
    );
  },
  async clearEpicWorktree(id, path) {
    // Housekeeping, not a change to the epic: updated_at stays (a merged epic's row says when it merged).
    await this.tx.q(
      'UPDATE epics SET worktree_path = NULL, worktree_host = NULL WHERE repo_id = $1 AND id = $2 AND worktree_path = $3',
      [this.tx.repo, id, path],
    );
  },
  async openDebt(epicId, event, fromStatus, reason, by) {
    await this.tx.q(
      'INSERT INTO debt (repo_id, epic_id, reason, event, from_status, recorded_by, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [this.tx.repo, epicId, reason, event, fromStatus, by, this.now],
    );
  },
  async closeDebt(epicId, resolution) {
    await this.tx.q(
      'UPDATE debt SET resolved_at = $3, resolution = $4 WHERE repo_id = $1 AND epic_id = $2 AND resolved_at IS NULL',
      [this.tx.repo, epicId, this.now, resolution],
    );
  },
  listDebt(all) {
    return this.tx.q<DebtRow>(
      `SELECT d.id, d.epic_id, e.title, d.reason, d.event, d.from_status, d.recorded_by, d.recorded_at, d.resolved_at, d.resolution
      FROM debt d JOIN epics e ON e.repo_id = d.repo_id AND e.id = d.epic_id
      WHERE d.repo_id = $1 ${all ? '' : 'AND d.resolved_at IS NULL'} ORDER BY d.id DESC`,
      [this.tx.repo],
    );
  },
};
