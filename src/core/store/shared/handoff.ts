/** The handoff an epic's branch carries, and where its plan stands (docs/lifecycle.md). */
import { handoffText as renderHandoffText, type ApprovedVersion } from '../../epics/handoffVersions.ts';
import type { EpicPlans } from '../epicTypes.ts';
import { requireEpic } from './epics.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';

export interface HandoffPort {
  /** The epic's approved plan versions, oldest first. */
  approvedVersionRows(epicId: string): Io<Omit<ApprovedVersion, 'why'>[]>;
  /** The latest re-plan signal (option_viability_failure, adr_invalidated) recorded up to `at` (null: ever). */
  replanSignal(epicId: string, at: string | null): Io<ApprovedVersion['why'] | undefined>;
}

/** The epic's approved plan versions, oldest first, each (but the first) with the re-plan signal that preceded its approval. */
export function* approvedVersions(port: StorePort, epicId: string): Op<ApprovedVersion[]> {
  const out: ApprovedVersion[] = [];
  for (const [i, v] of (yield* call(port.approvedVersionRows(epicId))).entries()) {
    out.push({ ...v, why: i === 0 ? null : ((yield* call(port.replanSignal(epicId, v.decided_at))) ?? null) });
  }
  return out;
}

/** The handoff the epic's branch carries (null before approval). */
export function* handoffText(port: StorePort, epicId: string): Op<string | null> {
  return renderHandoffText(yield* requireEpic(port, epicId), yield* approvedVersions(port, epicId));
}

/** The epic's live plan path and its approved version, with the handoff. */
export function* epicPlans(port: StorePort, epicId: string): Op<EpicPlans> {
  const epic = yield* requireEpic(port, epicId);
  const approved = yield* call(port.approvedVersion(epic.id));
  const handoff = approved ? (renderHandoffText(epic, yield* approvedVersions(port, epicId)) ?? undefined) : undefined;
  return {
    livePlanPath: yield* call(port.livePlanPath(epicId)),
    approved: approved
      ? { planPath: approved.plan_path, body: approved.body, version: approved.version, handoff }
      : null,
  };
}
