import type { EpicReport, Retrospective } from '../epicTypes.ts';
import type { RecordsPort } from '../shared/records.ts';
import type { PgMethods } from './port.ts';
import { SESSION_ROLES_SQL } from '../shared/roleSql.ts';

/** What a finished epic's retrospective and summary read (shared/records.ts). */
export const recordsPg: PgMethods<RecordsPort> = {
  async retrospectiveRows(epicId) {
    const E = [this.tx.repo, epicId];
    const head = (
      await this.tx.q<{ approved: string | null; versions: number }>(
        `SELECT
        (SELECT min(at) FROM events WHERE repo_id = $1 AND epic_id = $2 AND entity = 'epic' AND action = 'plan_approved') AS approved,
        (SELECT count(*) FROM plan_versions WHERE repo_id = $1 AND epic_id = $2)::int AS versions`,
        E,
      )
    )[0];
    return {
      sessions: await this.tx.q<{ role: string; n: number }>(
        `SELECT role, count(*)::int AS n FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role IN (${SESSION_ROLES_SQL})
        GROUP BY role ORDER BY role COLLATE "C"`,
        E,
      ),
      failedRuns: await this.tx.q<Retrospective['failed_runs'][number]>(
        `SELECT id, role, step_anchor, status AS outcome, outcome_reason AS reason FROM runs
        WHERE repo_id = $1 AND epic_id = $2 AND status NOT IN ('succeeded', 'running') ORDER BY id`,
        E,
      ),
      verificationFailures: await this.tx.q<Retrospective['verification_failures'][number]>(
        `SELECT command, exit_code, step_anchor, created_at AS at FROM verifications
        WHERE repo_id = $1 AND epic_id = $2 AND verdict = 'fail' ORDER BY id`,
        E,
      ),
      approvedAt: head?.approved ?? null,
      versions: head?.versions ?? 0,
    };
  },
  async firstPlanOfEpic(epicId) {
    return (
      await this.tx.q<{ plan_path: string }>(
        'SELECT plan_path FROM plans WHERE repo_id = $1 AND epic_id = $2 ORDER BY created_at, plan_path LIMIT 1',
        [this.tx.repo, epicId],
      )
    )[0]?.plan_path;
  },
  planArtifacts(plan) {
    return this.tx.q<EpicReport['artifacts'][number]>(
      'SELECT step_anchor, kind, summary FROM artifacts WHERE repo_id = $1 AND plan_path = $2 ORDER BY id',
      [this.tx.repo, plan],
    );
  },
};
