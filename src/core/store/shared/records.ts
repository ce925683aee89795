/** What is kept of a finished epic (docs/lifecycle.md): the merge's retrospective, and what its summary is made of. */
import { renderRetrospective, type Retrospective } from '../../epics/retrospective.ts';
import type { EpicReport, TransitionOutcome } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { applyEpicEvent, requireEpic } from './epics.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import { showPlans } from './queries.ts';

export interface RecordsPort {
  /** What a retrospective counts: sessions per agent role, the failed runs and verifications, the first approval, the plan versions. */
  retrospectiveRows(epicId: string): Io<{
    sessions: { role: string; n: number }[];
    failedRuns: Retrospective['failed_runs'][number][];
    verificationFailures: Retrospective['verification_failures'][number][];
    approvedAt: string | null;
    versions: number;
  }>;
  /** The epic's first plan (by age, then path). */
  firstPlanOfEpic(epicId: string): Io<string | undefined>;
  /** The plan's artifacts, oldest first. */
  planArtifacts(planPath: string): Io<EpicReport['artifacts'][number][]>;
}

/** Lovejoy's retrospective of an epic being merged now (docs/lifecycle.md), read from its runs, verifications and approvals. */
export function* retrospective(port: StorePort, epicId: string): Op<Retrospective> {
  const epic = yield* requireEpic(port, epicId);
  const r = yield* call(port.retrospectiveRows(epicId));
  const sessions: Record<string, number> = {};
  for (const s of r.sessions) sessions[s.role] = Number(s.n);
  const minutes = r.approvedAt
    ? Math.max(0, Math.round((Date.parse(port.now) - Date.parse(r.approvedAt)) / 60_000))
    : null;
  return {
    epic_id: epicId,
    sessions,
    failed_runs: r.failedRuns,
    verification_failures: r.verificationFailures,
    plan_versions: Number(r.versions),
    build_iterations: epic.iteration,
    approved_at: r.approvedAt,
    merged_at: port.now,
    approval_to_merge_minutes: minutes,
  };
}

/** The epic merged, with its retrospective (the given one, else one read now) in the event log: one transaction. */
export function* markMerged(
  port: StorePort,
  epicId: string,
  actor: Actor,
  reason: string,
  given?: Retrospective,
): Op<TransitionOutcome> {
  const t = yield* applyEpicEvent(port, epicId, 'merged', actor, reason);
  const r = given ?? (yield* retrospective(port, epicId));
  yield* call(
    port.writeEvent(actor, {
      entity: 'epic',
      action: 'retrospective',
      epicId: r.epic_id,
      reason: renderRetrospective(r).slice(2, -1).join('; '),
      data: { ...r },
    }),
  );
  return t;
}

/** What a finished epic's summary is made of: its plan's steps, verification, artifacts, signals and runs. */
export function* epicReport(port: StorePort, epicId: string): Op<EpicReport> {
  const epic = yield* requireEpic(port, epicId);
  const path = yield* call(port.firstPlanOfEpic(epicId));
  const plan = path ? ((yield* showPlans(port, path))[0] ?? null) : null;
  return {
    read_at: port.now,
    epic,
    plan,
    runs: yield* call(port.listRuns({ epicId, limit: 10_000 })),
    verifications: yield* call(port.listVerifications({ epicId, limit: 20 })),
    artifacts: plan ? yield* call(port.planArtifacts(plan.plan_path)) : [],
    signals: yield* call(port.listSignals(epicId, 100)),
    usage: yield* call(port.usageByEpic(epicId)),
  };
}
