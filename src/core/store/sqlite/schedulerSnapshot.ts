import { FAULT_ROLES, type FaultRole } from '../../scheduler/types.ts';
import type { EndedRun, RunRow, SchedulerPort } from '../shared/schedulerSnapshot.ts';
import type { SqliteMethods } from './port.ts';
import { cached, type SqlConnection } from './sqlite.ts';
import { BUILDING_ROLE_SQL, REVIEWING_ROLE_SQL, SETUP_ROLE_SQL } from '../shared/roleSql.ts';

/** What the scheduler's snapshot reads per epic (shared/schedulerSnapshot.ts): statements kept prepared, a dozen per epic. */
export const schedulerSql: SqliteMethods<SchedulerPort> = {
  epicCounts(e, iterationStart) {
    const one = (sql: string, ...args: unknown[]): unknown =>
      cached(this.db, sql)
        .pluck()
        .get(...args);
    return {
      // Latest first on idx_runs_epic, stopping at the first match (MAX() with a condition reads them all).
      last_ralph_success:
        (one(
          `SELECT ended_at FROM runs WHERE epic_id = ? AND role = ${BUILDING_ROLE_SQL} AND ended_at IS NOT NULL AND status = 'succeeded'
        ORDER BY ended_at DESC LIMIT 1`,
          e.id,
        ) as string | undefined) ?? null,
      signals_this_iteration:
        iterationStart === null
          ? 0
          : Number(one('SELECT COUNT(*) FROM signals WHERE epic_id = ? AND created_at >= ?', e.id, iterationStart)),
      bart_runs:
        iterationStart === null
          ? 0
          : Number(
              one(
                `SELECT COUNT(*) FROM runs WHERE epic_id = ? AND role = ${REVIEWING_ROLE_SQL} AND ended_at IS NOT NULL AND started_at >= ?`,
                e.id,
                iterationStart,
              ),
            ),
      awaiting_approval:
        one(`SELECT 1 FROM plan_versions WHERE epic_id = ? AND status = 'proposed'`, e.id) !== undefined,
      awaiting_person: Number(
        one(`SELECT COUNT(*) FROM signals WHERE epic_id = ? AND status = 'awaiting_person'`, e.id),
      ),
      setup_done:
        e.worktree_path !== null &&
        one(
          `SELECT 1 FROM runs WHERE epic_id = ? AND role = ${SETUP_ROLE_SQL} AND status = 'succeeded' AND worktree = ? LIMIT 1`,
          e.id,
          e.worktree_path,
        ) !== undefined,
    };
  },
  faultRuns(epicId, since) {
    const db = this.db;
    return new Map(
      FAULT_ROLES.map((role): [FaultRole, Iterable<EndedRun>] => [
        role,
        { [Symbol.iterator]: () => endedRuns(db, epicId, role, since ?? '') },
      ]),
    );
  },
  outputTails(runIds) {
    const tail = cached(this.db, 'SELECT output_tail FROM runs WHERE id = ?').pluck();
    return new Map(runIds.map((id) => [id, tail.get(id) as string]));
  },
  runningRuns(limit) {
    return this.db
      .prepare(`SELECT * FROM runs WHERE status = 'running' ORDER BY id DESC LIMIT ?`)
      .all(limit) as RunRow[];
  },
};

/** A role's ended runs on an epic since `since` (ISO; '' for all), newest first, read one at a time. */
function endedRuns(
  db: SqlConnection,
  epicId: string,
  role: string,
  since: string,
  limit = 200,
): IterableIterator<EndedRun> {
  return cached(
    db,
    `SELECT id, role, status, exit_code, outcome_reason, started_at, ended_at FROM runs
    WHERE epic_id = ? AND role = ? AND status != 'running' AND started_at >= ? ORDER BY id DESC LIMIT ?`,
  ).iterate(epicId, role, since, limit) as IterableIterator<EndedRun>;
}
