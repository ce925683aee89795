import { FAULT_ROLES, type FaultRole } from '../../scheduler/types.ts';
import type { EndedRun, EpicCounts, SchedulerPort } from '../shared/schedulerSnapshot.ts';
import type { PgMethods } from './port.ts';
import { selectRuns } from './runs.ts';
import { BUILDING_ROLE_SQL, REVIEWING_ROLE_SQL, SETUP_ROLE_SQL } from '../shared/roleSql.ts';

/** What the scheduler's snapshot reads per epic (shared/schedulerSnapshot.ts), a few round trips each, in one REPEATABLE READ snapshot. */
export const schedulerPg: PgMethods<SchedulerPort> = {
  async epicCounts(e, iterationStart) {
    // $3: the start of the review iteration (null before the epic was implemented).
    return (
      await this.tx.q<EpicCounts>(
        `SELECT
        (SELECT max(ended_at) FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role = ${BUILDING_ROLE_SQL} AND status = 'succeeded') AS last_ralph_success,
        CASE WHEN $3::timestamptz IS NULL THEN 0 ELSE (SELECT count(*) FROM signals WHERE repo_id = $1 AND epic_id = $2 AND created_at >= $3)::int END AS signals_this_iteration,
        CASE WHEN $3::timestamptz IS NULL THEN 0 ELSE (SELECT count(*) FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role = ${REVIEWING_ROLE_SQL} AND ended_at IS NOT NULL AND started_at >= $3)::int END AS bart_runs,
        EXISTS (SELECT 1 FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 AND status = 'proposed') AS awaiting_approval,
        (SELECT count(*) FROM signals WHERE repo_id = $1 AND epic_id = $2 AND status = 'awaiting_person')::int AS awaiting_person,
        ($4::text IS NOT NULL AND EXISTS (SELECT 1 FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role = ${SETUP_ROLE_SQL} AND status = 'succeeded' AND worktree = $4)) AS setup_done`,
        [this.tx.repo, e.id, iterationStart, e.worktree_path],
      )
    )[0] as EpicCounts;
  },
  async faultRuns(epicId, since) {
    // Every role's at once: up to 200 ended runs per role, without their output.
    const rows = await this.tx.q<EndedRun & { role: FaultRole }>(
      `SELECT id, role, status, exit_code, outcome_reason, started_at, ended_at FROM (
        SELECT id, role, status, exit_code, outcome_reason, started_at, ended_at, row_number() OVER (PARTITION BY role ORDER BY id DESC) AS n
        FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role = ANY($3::text[]) AND status <> 'running' AND ($4::timestamptz IS NULL OR started_at >= $4)) r
      WHERE n <= 200 ORDER BY id DESC`,
      [this.tx.repo, epicId, FAULT_ROLES, since],
    );
    return new Map(FAULT_ROLES.map((role) => [role, rows.filter((r) => r.role === role)]));
  },
  async outputTails(runIds) {
    const rows = await this.tx.q<{ id: number; output_tail: string }>(
      'SELECT id, output_tail FROM runs WHERE repo_id = $1 AND id = ANY($2::bigint[])',
      [this.tx.repo, runIds],
    );
    return new Map(rows.map((r) => [r.id, r.output_tail]));
  },
  runningRuns(limit) {
    return selectRuns(this.tx, `status = 'running'`, [], `ORDER BY id DESC LIMIT ${Math.floor(limit)}`);
  },
};
