import type { FilesClaimPort, HeldFiles } from '../shared/filesClaim.ts';
import { STEP_COLUMNS, type PgStepRow } from './rows.ts';
import type { PgMethods } from './port.ts';

/** The class (first key) of the repository's lock that serialises claims of steps with files. */
export const FILES_LOCK_CLASS = 1397096450;

/** The files rule of claims (shared/filesClaim.ts), on migration 9's partial indexes. */
export const filesClaimPg: PgMethods<FilesClaimPort> = {
  async heldFiles() {
    return await this.tx.q<HeldFiles>(
      `SELECT s.plan_path, s.anchor, s.files, s.claimed_by, s.claimed_host, p.epic_id FROM steps s
        JOIN plans p ON p.repo_id = s.repo_id AND p.plan_path = s.plan_path
      WHERE s.repo_id = $1 AND s.files IS NOT NULL AND s.parent_anchor IS NULL AND s.status IN ('claimed', 'in_progress') AND s.lease_expires_at >= $2
      ORDER BY s.claimed_at, s.plan_path, s.step_index`,
      [this.tx.repo, this.now],
    );
  },
  async planFiles(plan) {
    return await this.tx.q<{ anchor: string; files: string }>(
      `SELECT anchor, files FROM steps
      WHERE repo_id = $1 AND plan_path = $2 AND files IS NOT NULL AND parent_anchor IS NULL ORDER BY step_index`,
      [this.tx.repo, plan],
    );
  },
  async readyCandidates(plan) {
    // SKIP LOCKED: a row another claimer holds is never waited for while the files lock is held.
    return await this.tx.q<PgStepRow>(
      `SELECT ${STEP_COLUMNS} FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor IS NULL AND blockers = 0
        AND (status = 'pending' OR (status IN ('claimed', 'in_progress') AND lease_expires_at < $3))
      ORDER BY step_index FOR UPDATE SKIP LOCKED`,
      [this.tx.repo, plan, this.now],
    );
  },
  async lockFileClaims() {
    await this.tx.q(`SELECT pg_advisory_xact_lock(${FILES_LOCK_CLASS}, hashtext($1))`, [this.tx.repo]);
  },
};
