import type { EpicReport, Retrospective } from '../epicTypes.ts';
import type { RecordsPort } from '../shared/records.ts';
import type { SqliteMethods } from './port.ts';
import { SESSION_ROLES_SQL } from '../shared/roleSql.ts';

/** What a finished epic's retrospective and summary read (shared/records.ts). */
export const recordsSql: SqliteMethods<RecordsPort> = {
  retrospectiveRows(epicId) {
    return {
      sessions: this.db
        .prepare(
          `SELECT role, COUNT(*) AS n FROM runs WHERE epic_id = ? AND role IN (${SESSION_ROLES_SQL}) GROUP BY role ORDER BY role`,
        )
        .all(epicId) as { role: string; n: number }[],
      failedRuns: this.db
        .prepare(
          `SELECT id, role, step_anchor, status AS outcome, outcome_reason AS reason FROM runs WHERE epic_id = ? AND status NOT IN ('succeeded', 'running') ORDER BY id`,
        )
        .all(epicId) as Retrospective['failed_runs'][number][],
      verificationFailures: this.db
        .prepare(
          `SELECT command, exit_code, step_anchor, created_at AS at FROM verifications WHERE epic_id = ? AND verdict = 'fail' ORDER BY id`,
        )
        .all(epicId) as Retrospective['verification_failures'][number][],
      approvedAt: this.db
        .prepare(`SELECT MIN(at) FROM events WHERE epic_id = ? AND entity = 'epic' AND action = 'plan_approved'`)
        .pluck()
        .get(epicId) as string | null,
      versions: Number(this.db.prepare('SELECT COUNT(*) FROM plan_versions WHERE epic_id = ?').pluck().get(epicId)),
    };
  },
  firstPlanOfEpic(epicId) {
    return this.db
      .prepare('SELECT plan_path FROM plans WHERE epic_id = ? ORDER BY created_at, plan_path LIMIT 1')
      .pluck()
      .get(epicId) as string | undefined;
  },
  planArtifacts(plan) {
    return this.db
      .prepare('SELECT step_anchor, kind, summary FROM artifacts WHERE plan_path = ? ORDER BY id')
      .all(plan) as EpicReport['artifacts'][number][];
  },
};
