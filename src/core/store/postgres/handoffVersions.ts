import { handoffText } from '../../epics/handoffVersions.ts';
import type { ApprovedVersion, EpicPlans } from '../epicTypes.ts';
import { getEpic } from './epics.ts';
import { approvedVersion, livePlanPath } from './planVersions.ts';
import type { Tx } from './session.ts';

/** The epic's approved plan versions, oldest first, each with the re-plan signal that preceded its approval. */
export async function approvedVersions(tx: Tx, epicId: string): Promise<ApprovedVersion[]> {
  return tx.q<ApprovedVersion>(`SELECT v.version, v.plan_path, v.structure, v.body, v.decided_at,
      CASE WHEN v.version = first.version THEN NULL ELSE (SELECT json_build_object('type', s.type, 'summary', s.summary) FROM signals s
        WHERE s.repo_id = v.repo_id AND s.epic_id = v.epic_id AND s.type IN ('option_viability_failure', 'adr_invalidated')
          AND s.created_at <= coalesce(v.decided_at, 'infinity') ORDER BY s.id DESC LIMIT 1) END AS why
    FROM plan_versions v, LATERAL (SELECT min(version) AS version FROM plan_versions f WHERE f.repo_id = v.repo_id AND f.epic_id = v.epic_id AND f.status = 'approved') first
    WHERE v.repo_id = $1 AND v.epic_id = $2 AND v.status = 'approved' ORDER BY v.version`, [tx.repo, epicId]);
}

/** The handoff the epic's branch carries (null before approval). */
export async function epicHandoff(tx: Tx, epicId: string): Promise<string | null> {
  return handoffText(await getEpic(tx, epicId), await approvedVersions(tx, epicId));
}

/** The epic's live plan path and its approved version, with the handoff. */
export async function epicPlans(tx: Tx, epicId: string): Promise<EpicPlans> {
  const epic = await getEpic(tx, epicId);
  const approved = await approvedVersion(tx, epic);
  const handoff = approved ? handoffText(epic, await approvedVersions(tx, epicId)) ?? undefined : undefined;
  return { livePlanPath: await livePlanPath(tx, epicId), approved: approved ? { planPath: approved.plan_path, body: approved.body, version: approved.version, handoff } : null };
}
