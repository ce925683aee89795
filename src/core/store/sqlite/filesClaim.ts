import type { FilesClaimPort, HeldFiles } from '../shared/filesClaim.ts';
import type { StepRow } from './rows.ts';
import type { SqliteMethods } from './port.ts';

/** The files rule of claims (shared/filesClaim.ts), on migration 12's partial indexes. */
export const filesClaimSql: SqliteMethods<FilesClaimPort> = {
  heldFiles() {
    return this.db
      .prepare(
        `SELECT s.plan_path, s.anchor, s.files, s.claimed_by, p.epic_id FROM steps s INDEXED BY idx_steps_files_held
        JOIN plans p ON p.plan_path = s.plan_path
      WHERE s.files IS NOT NULL AND s.parent_anchor IS NULL AND s.status IN ('claimed', 'in_progress') AND s.lease_expires_at >= ?
      ORDER BY s.claimed_at, s.plan_path, s.step_index`,
      )
      .all(this.now) as HeldFiles[];
  },
  planFiles(plan) {
    return this.db
      .prepare(
        `SELECT anchor, files FROM steps INDEXED BY idx_steps_files
      WHERE plan_path = ? AND files IS NOT NULL AND parent_anchor IS NULL ORDER BY step_index`,
      )
      .all(plan) as { anchor: string; files: string }[];
  },
  readyCandidates(plan) {
    return this.db
      .prepare(
        `SELECT * FROM steps WHERE plan_path = @plan AND parent_anchor IS NULL AND blockers = 0
        AND (status = 'pending' OR (status IN ('claimed', 'in_progress') AND lease_expires_at < @now))
      ORDER BY step_index`,
      )
      .all({ plan, now: this.now }) as StepRow[];
  },
  lockFileClaims() {
    // Every write is BEGIN IMMEDIATE: no other claim runs meanwhile.
  },
};
