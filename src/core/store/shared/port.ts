/**
 * The port: everything a store operation asks of its backend, one method per query (or per statement
 * batch), each answering with rows, never deciding. The operations in this folder hold the rules,
 * refusals, result shapes and events once; `sqlite/port.ts` and `postgres/port.ts` answer the port
 * with their own SQL, the only place SQL lives (docs/architecture.md, "Where SQL lives").
 */
import type { AgentRunPort } from './agentRun.ts';
import type { ClaimsPort } from './claims.ts';
import type { CommitTargetPort } from './commitTarget.ts';
import type { CompletePort } from './complete.ts';
import type { ContextPort } from './context.ts';
import type { EpicVerificationPort } from './epicVerification.ts';
import type { EpicsPort } from './epics.ts';
import type { FilesClaimPort } from './filesClaim.ts';
import type { HandoffPort } from './handoff.ts';
import type { InitPlanPort } from './initPlan.ts';
import type { ItemsPort } from './items.ts';
import type { PlanVersionsPort } from './planVersions.ts';
import type { PlanningNotesPort } from './planningNotes.ts';
import type { PortBlocksPort } from './portBlocks.ts';
import type { PrunePort } from './prune.ts';
import type { QueriesPort } from './queries.ts';
import type { ReadinessPort } from './readiness.ts';
import type { ReconcilePort } from './reconcile.ts';
import type { RecordsPort } from './records.ts';
import type { ReopenPort } from './reopen.ts';
import type { RowsPort } from './rows.ts';
import type { RunsPort } from './runs.ts';
import type { SchedulerPort } from './schedulerSnapshot.ts';
import type { SignalsPort } from './signals.ts';
import type { SpendPort } from './spend.ts';
import type { StatsPort } from './stats.ts';

/**
 * What the step commands' operations ask (stepOperations.ts). The step commands' bundle links only
 * the backend methods answering this part (docs/cli-cost.md, "The step store").
 */
export interface StepPort
  extends RowsPort, ReadinessPort, ClaimsPort, CompletePort, ItemsPort, InitPlanPort, QueriesPort, FilesClaimPort {}

export interface StorePort
  extends
    StepPort,
    CommitTargetPort,
    ReconcilePort,
    ReopenPort,
    EpicsPort,
    PlanVersionsPort,
    EpicVerificationPort,
    SchedulerPort,
    HandoffPort,
    SignalsPort,
    PlanningNotesPort,
    RunsPort,
    AgentRunPort,
    ContextPort,
    RecordsPort,
    PrunePort,
    SpendPort,
    StatsPort,
    PortBlocksPort {}

/** What a port's method table leaves to the port object itself: the transaction's time and host. */
export type PortState = 'now' | 'host';

/** A table of one backend's methods answering part of a port `P`; each sees its transaction's state `This` as `this`. */
export type PortMethods<P, This> = Omit<P, PortState> & ThisType<This>;

/** A port object: one backend's method table (its SQL) over one transaction's state, which its methods see as `this`. */
export function portOver<P extends StepPort, S extends { readonly now: string; readonly host: string | null }>(
  methods: Omit<P, PortState>,
  state: S,
): P {
  const port: P = Object.create(methods);
  return Object.assign(port, state);
}
