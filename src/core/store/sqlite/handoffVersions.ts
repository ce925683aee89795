import type { ApprovedVersion } from '../epicTypes.ts';
import type { Database } from './sqlite.ts';

/** The epic's approved plan versions, oldest first, each with the re-plan signal that preceded its approval. */
export function approvedVersions(db: Database, epicId: string): ApprovedVersion[] {
  const rows = db.prepare(`SELECT version, plan_path, structure, body, decided_at FROM plan_versions WHERE epic_id = ? AND status = 'approved' ORDER BY version`)
    .all(epicId) as Omit<ApprovedVersion, 'why'>[];
  const why = db.prepare(`SELECT type, summary FROM signals WHERE epic_id = ? AND type IN ('option_viability_failure', 'adr_invalidated') AND created_at <= ? ORDER BY id DESC LIMIT 1`);
  return rows.map((v, i) => ({ ...v, why: i === 0 ? null : (why.get(epicId, v.decided_at ?? '9999') as ApprovedVersion['why'] | undefined) ?? null }));
}
