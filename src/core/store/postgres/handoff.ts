import type { ApprovedVersion } from '../epicTypes.ts';
import type { HandoffPort } from '../shared/handoff.ts';
import type { PgMethods } from './port.ts';

/** The approved versions a handoff is rendered from (shared/handoff.ts). */
export const handoffPg: PgMethods<HandoffPort> = {
  approvedVersionRows(epicId) {
    return this.tx.q<Omit<ApprovedVersion, 'why'>>(
      `SELECT version, plan_path, structure, body, decided_at FROM plan_versions
      WHERE repo_id = $1 AND epic_id = $2 AND status = 'approved' ORDER BY version`,
      [this.tx.repo, epicId],
    );
  },
  async replanSignal(epicId, at) {
    return (
      await this.tx.q<NonNullable<ApprovedVersion['why']>>(
        `SELECT type, summary FROM signals WHERE repo_id = $1 AND epic_id = $2
      AND type IN ('option_viability_failure', 'adr_invalidated') AND created_at <= coalesce($3::timestamptz, 'infinity') ORDER BY id DESC LIMIT 1`,
        [this.tx.repo, epicId, at],
      )
    )[0];
  },
};
