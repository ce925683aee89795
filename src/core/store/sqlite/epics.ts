import type { DebtRow, EpicRow } from '../epicTypes.ts';
import { epicValues, type BlockEvent, type EpicsPort } from '../shared/epics.ts';
import type { SqliteMethods } from './port.ts';

/** Epics, their state and the debt register (shared/epics.ts). */
export const epicsSql: SqliteMethods<EpicsPort> = {
  insertEpic(id, input, complexity, planner) {
    return (
      this.db
        .prepare(
          `INSERT INTO epics (id, title, brief, priority, complexity, complexity_source, max_iterations, planner,
        budget_usd, budget_tokens, budget_minutes, status, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'planned', ?, ?) ON CONFLICT (id) DO NOTHING`,
        )
        .run(...epicValues(id, input, complexity, planner), this.now, this.now).changes === 1
    );
  },
  epicRow(id) {
    return this.db.prepare('SELECT * FROM epics WHERE id = ?').get(id) as EpicRow | undefined;
  },
  listEpics(status) {
    return (
      status
        ? this.db.prepare(`SELECT * FROM epics WHERE status = ? ORDER BY priority, created_at`).all(status)
        : this.db
            .prepare(`SELECT * FROM epics ORDER BY CASE status WHEN 'done' THEN 1 ELSE 0 END, priority, created_at`)
            .all()
    ) as EpicRow[];
  },
  setEpicStatus(id, from, to, statusReason, iteration) {
    this.db
      .prepare(
        'UPDATE epics SET status = ?, status_reason = ?, iteration = ?, updated_at = ? WHERE id = ? AND status = ?',
      )
      .run(to, statusReason, iteration, this.now, id, from);
  },
  *epicBlockEvents(id): Generator<BlockEvent> {
    const rows = this.db
      .prepare(
        `SELECT action, at, from_status, data FROM events WHERE epic_id = ? AND entity = 'epic' AND (to_status = 'blocked' OR action = 'retry') ORDER BY id DESC`,
      )
      .iterate(id) as IterableIterator<Omit<BlockEvent, 'data'> & { data: string | null }>;
    for (const e of rows) yield { ...e, data: e.data ? (JSON.parse(e.data) as Record<string, unknown>) : null };
  },
  approveMergeRow(id, by) {
    this.db
      .prepare('UPDATE epics SET merge_approved_by = ?, merge_approved_at = ?, updated_at = ? WHERE id = ?')
      .run(by, this.now, this.now, id);
  },
  setPlannerRow(id, planner) {
    this.db.prepare('UPDATE epics SET planner = ?, updated_at = ? WHERE id = ?').run(planner, this.now, id);
  },
  bumpIteration(id) {
    this.db.prepare('UPDATE epics SET iteration = iteration + 1, updated_at = ? WHERE id = ?').run(this.now, id);
  },
  setPullRequestRow(id, url) {
    this.db
      .prepare('UPDATE epics SET pr_url = ?, pr_checked_at = ?, updated_at = ? WHERE id = ?')
      .run(url, this.now, this.now, id);
  },
  markPullRequestChecked(id) {
    this.db.prepare('UPDATE epics SET pr_checked_at = ? WHERE id = ?').run(this.now, id);
  },
  setEpicWorktree(id, path, branch) {
    this.db
      .prepare('UPDATE epics SET worktree_path = ?, branch = ?, updated_at = ? WHERE id = ?')
      .run(path, branch, this.now, id);
  },
  clearEpicWorktree(id, path) {
    // Housekeeping, not a change to the epic: updated_at stays (a merged epic's row says when it merged).
    this.db.prepare('UPDATE epics SET worktree_path = NULL WHERE id = ? AND worktree_path = ?').run(id, path);
  },
  openDebt(epicId, event, fromStatus, reason, by) {
    this.db
      .prepare(
        'INSERT INTO debt (epic_id, reason, event, from_status, recorded_by, recorded_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(epicId, reason, event, fromStatus, by, this.now);
  },
  closeDebt(epicId, resolution) {
    this.db
      .prepare('UPDATE debt SET resolved_at = ?, resolution = ? WHERE epic_id = ? AND resolved_at IS NULL')
      .run(this.now, resolution, epicId);
  },
  listDebt(all) {
    return this.db
      .prepare(
        `SELECT d.*, e.title FROM debt d JOIN epics e ON e.id = d.epic_id ${all ? '' : 'WHERE d.resolved_at IS NULL'} ORDER BY d.id DESC`,
      )
      .all() as DebtRow[];
  },
};
