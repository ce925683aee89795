import type { EpicVerificationPort, Marker, VerificationRow } from '../shared/epicVerification.ts';
import type { SqliteMethods } from './port.ts';
import { cached } from './sqlite.ts';
import { BUILDING_ROLE_SQL } from '../shared/roleSql.ts';

/** What an epic's verification is read from (shared/epicVerification.ts): statements kept prepared, rows read lazily. */
export const epicVerificationSql: SqliteMethods<EpicVerificationPort> = {
  epicEvents(epicId) {
    return cached(
      this.db,
      `SELECT id, at, action, to_status FROM events WHERE epic_id = ? AND entity = 'epic' ORDER BY id DESC`,
    ).iterate(epicId) as IterableIterator<Marker & { to_status: string | null }>;
  },
  verificationRows(epicId, since) {
    return cached(
      this.db,
      `SELECT run_id, command, exit_code, verdict, created_at FROM verifications WHERE epic_id = ? AND created_at >= ? ORDER BY id DESC`,
    ).iterate(epicId, since ?? '') as IterableIterator<VerificationRow>;
  },
  lastBuildEnd(epicId) {
    return (
      (cached(
        this.db,
        `SELECT ended_at FROM runs WHERE epic_id = ? AND role = ${BUILDING_ROLE_SQL} AND ended_at IS NOT NULL
        AND (status = 'succeeded' OR (head_after IS NOT NULL AND head_after IS NOT head_before)) ORDER BY ended_at DESC LIMIT 1`,
      )
        .pluck()
        .get(epicId) as string | undefined) ?? null
    );
  },
};
