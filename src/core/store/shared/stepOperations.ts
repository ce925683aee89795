/**
 * The step commands' part of the Store (StepStore) over the shared operations, once for both backends
 * and both surfaces: OperationStore adds the rest. The step commands' bundle builds its SQLite store on
 * this class alone, so it links only the operations (and the backend methods, StepPort) these reach
 * (docs/cli-cost.md, "The step store").
 */
import type { PlanSource } from '../../plan/types.ts';
import type { ClaimOptions, StepStore, StoreDescription } from '../store.ts';
import type {
  Actor,
  ArtifactResult,
  ClaimResult,
  CompleteOptions,
  CompleteResult,
  EventQuery,
  EventView,
  HeartbeatResult,
  InitResult,
  ItemChange,
  PlanView,
  ReadyResult,
  ResetResult,
  StartResult,
  StepView,
  UpdateOptions,
  UpdateResult,
} from '../types.ts';
import { claimNext, DEFAULT_LEASE_SECONDS, heartbeat, resetStep, startStep } from './claims.ts';
import { completeStep } from './complete.ts';
import { initPlan } from './initPlan.ts';
import { recordArtifact, updateItems } from './items.ts';
import type { Op } from './op.ts';
import type { StepPort } from './port.ts';
import { listEvents, readySteps, showPlans, showStep } from './queries.ts';

export abstract class StepOperations<P extends StepPort> implements StepStore {
  abstract describe(): StoreDescription;
  abstract close(): Promise<void>;
  /** Runs a writing operation as one transaction; `doing` says what it does, for a failure's message. */
  protected abstract write<T>(doing: string, op: (port: P) => Op<T>): Promise<T>;
  /** Runs a reading operation in one consistent snapshot. */
  protected abstract read<T>(doing: string, op: (port: P) => Op<T>): Promise<T>;

  initPlan(
    source: PlanSource,
    actor: Actor,
    options: { force?: boolean; epicId?: string | null } = {},
  ): Promise<InitResult> {
    return this.write('initialising the plan', (port) =>
      initPlan(port, source, actor, options.force ?? false, options.epicId ?? null),
    );
  }
  claimNext(source: PlanSource, actor: Actor, options: ClaimOptions = {}): Promise<ClaimResult> {
    return this.write('claiming', (port) =>
      claimNext(
        port,
        source,
        actor,
        options.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
        options.branch ?? null,
        options.files ?? true,
        options.anchor ?? null,
      ),
    );
  }
  start(planPath: string, anchor: string, actor: Actor): Promise<StartResult> {
    return this.write('starting the step', (port) => startStep(port, planPath, anchor, actor));
  }
  heartbeat(
    planPath: string,
    anchor: string,
    actor: Actor,
    options: { leaseSeconds?: number } = {},
  ): Promise<HeartbeatResult> {
    return this.write('renewing the lease', (port) =>
      heartbeat(port, planPath, anchor, actor, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS),
    );
  }
  updateItems(
    source: PlanSource,
    anchor: string,
    changes: readonly ItemChange[],
    actor: Actor,
    options?: UpdateOptions,
  ): Promise<UpdateResult> {
    return this.write('updating items', (port) => updateItems(port, source, anchor, changes, actor, options));
  }
  recordArtifact(
    planPath: string,
    anchor: string,
    kind: string,
    summary: string,
    actor: Actor,
    _options: { resume?: string } = {},
  ): Promise<ArtifactResult> {
    return this.write('recording the artifact', (port) => recordArtifact(port, planPath, anchor, kind, summary, actor));
  }
  complete(source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions = {}): Promise<CompleteResult> {
    return this.write('completing', (port) => completeStep(port, source, anchor, actor, options));
  }
  reset(planPath: string, anchor: string, actor: Actor, reason: string | null = null): Promise<ResetResult> {
    return this.write('resetting the step', (port) => resetStep(port, planPath, anchor, actor, reason));
  }
  ready(planPath: string, actor: Actor | null = null): Promise<ReadyResult> {
    return this.read('reading the plan', (port) => readySteps(port, planPath, actor));
  }
  showPlans(planPath?: string): Promise<PlanView[]> {
    return this.read('reading plans', (port) => showPlans(port, planPath));
  }
  showStep(planPath: string, anchor: string): Promise<StepView> {
    return this.read('reading the step', (port) => showStep(port, planPath, anchor));
  }
  events(query?: EventQuery): Promise<EventView[]> {
    return this.read('reading events', (port) => listEvents(port, query));
  }
}
