import type { ApprovedVersion } from '../epicTypes.ts';
import type { HandoffPort } from '../shared/handoff.ts';
import type { SqliteMethods } from './port.ts';

/** The approved versions a handoff is rendered from (shared/handoff.ts). */
export const handoffSql: SqliteMethods<HandoffPort> = {
  approvedVersionRows(epicId) {
    return this.db
      .prepare(
        `SELECT version, plan_path, structure, body, decided_at FROM plan_versions WHERE epic_id = ? AND status = 'approved' ORDER BY version`,
      )
      .all(epicId) as Omit<ApprovedVersion, 'why'>[];
  },
  replanSignal(epicId, at) {
    return this.db
      .prepare(
        `SELECT type, summary FROM signals WHERE epic_id = ? AND type IN ('option_viability_failure', 'adr_invalidated') AND created_at <= ? ORDER BY id DESC LIMIT 1`,
      )
      .get(epicId, at ?? '9999') as ApprovedVersion['why'] | undefined;
  },
};
