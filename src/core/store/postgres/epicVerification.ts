import type { EpicVerificationPort, Marker, VerificationRow } from '../shared/epicVerification.ts';
import type { PgMethods } from './port.ts';
import { BUILDING_ROLE_SQL } from '../shared/roleSql.ts';

/** What an epic's verification is read from (shared/epicVerification.ts). */
export const epicVerificationPg: PgMethods<EpicVerificationPort> = {
  epicEvents(epicId) {
    return this.tx.q<Marker & { to_status: string | null }>(
      `SELECT id, at, action, to_status FROM events WHERE repo_id = $1 AND epic_id = $2 AND entity = 'epic' ORDER BY id DESC`,
      [this.tx.repo, epicId],
    );
  },
  verificationRows(epicId, since) {
    return this.tx.q<VerificationRow>(
      `SELECT run_id, command, exit_code, verdict, created_at FROM verifications
      WHERE repo_id = $1 AND epic_id = $2 AND created_at >= coalesce($3::timestamptz, '-infinity') ORDER BY id DESC`,
      [this.tx.repo, epicId, since],
    );
  },
  async lastBuildEnd(epicId) {
    return (
      (
        await this.tx.q<{ at: string | null }>(
          `SELECT max(ended_at) AS at FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role = ${BUILDING_ROLE_SQL} AND ended_at IS NOT NULL
      AND (status = 'succeeded' OR (head_after IS NOT NULL AND head_after IS DISTINCT FROM head_before))`,
          [this.tx.repo, epicId],
        )
      )[0]?.at ?? null
    );
  },
};
