import { systemClock, type Clock } from '../clock.ts';
import { buildContext, type ContextRequest, type ContextView } from '../epics/context.ts';
import { applyEpicEvent, approveMerge, createEpic, getEpic, listEpics, type EpicRow, type NewEpic, type TransitionOutcome } from '../epics/epicStore.ts';
import { approvePlan, discardPlan, finishEpic, listVersions, startEpic, proposePlan, requestChanges, type ApproveResult, type PlanVersionRow, type ProposedPlan, type ProposeResult } from '../epics/planApproval.ts';
import { decideSignal, listSignals, recordSignal, type SignalDecision, type SignalLocation, type SignalResult, type SignalView } from '../epics/signals.ts';
import type { EpicEvent, EpicStatus, SignalType } from '../epics/transitions.ts';
import { claimNext, DEFAULT_LEASE_SECONDS, heartbeat, resetStep, startStep } from './claims.ts';
import { completeStep } from './complete.ts';
import { initPlan } from './initPlan.ts';
import { recordArtifact, updateItems, type UpdateOptions } from './items.ts';
import { openDatabase, writeTransaction, type OpenOptions } from './open.ts';
import { listEvents, readySteps, showPlans } from './queries.ts';
import { planHash } from '../plan/hash.ts';
import { countReady } from './readiness.ts';
import { listRuns, listVerifications, type RunView, type VerificationView } from './runs.ts';
import { mapSqliteError, type Database } from './sqlite.ts';
import type {
  Actor, ArtifactResult, ClaimResult, CompleteOptions, CompleteResult, EventQuery, EventView, HeartbeatResult, InitResult,
  ItemChange, PlanSource, PlanView, ReadyResult, ResetResult, StartResult, StateStore, UpdateResult,
} from './types.ts';

export interface SqliteStoreOptions extends OpenOptions {
  readonly clock?: Clock;
}

/** The SQLite backend of StateStore: every write is one BEGIN IMMEDIATE transaction. */
export class SqliteStore implements StateStore {
  readonly location: string;
  readonly db: Database;
  private readonly clock: Clock;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.location = path;
    this.db = openDatabase(path, options);
    this.clock = options.clock ?? systemClock;
  }

  /** Runs a write in an IMMEDIATE transaction with the current time, mapping SQLite failures. */
  write<T>(fn: (db: Database, now: Date) => T): Promise<T> {
    return this.guard(() => writeTransaction(this.db, () => fn(this.db, this.clock.now())));
  }

  /** Runs a read in one deferred transaction, so it sees a single consistent snapshot. */
  read<T>(fn: (db: Database, now: Date) => T): Promise<T> {
    return this.guard(() => this.db.transaction(() => fn(this.db, this.clock.now()))());
  }

  private guard<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(mapSqliteError(err, this.location));
    }
  }

  initPlan(source: PlanSource, actor: Actor, options: { force?: boolean; epicId?: string | null } = {}): Promise<InitResult> {
    return this.write((db, now) => initPlan(db, now.toISOString(), source, actor, options.force ?? false, options.epicId ?? null));
  }
  /** The lock is held only for the claim itself: the plan is hashed before, the ready count read after. */
  async claimNext(source: PlanSource, actor: Actor, options: { leaseSeconds?: number } = {}): Promise<ClaimResult> {
    planHash(source.plan);
    const result = await this.write((db, now) => claimNext(db, now, source, actor, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS));
    if (!result.claimed) return result;
    return { ...result, remaining_ready: await this.read((db, now) => countReady(db, source.planPath, now.toISOString())) };
  }
  start(planPath: string, anchor: string, actor: Actor): Promise<StartResult> {
    return this.write((db, now) => startStep(db, now, planPath, anchor, actor));
  }
  heartbeat(planPath: string, anchor: string, actor: Actor, options: { leaseSeconds?: number } = {}): Promise<HeartbeatResult> {
    return this.write((db, now) => heartbeat(db, now, planPath, anchor, actor, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS));
  }
  updateItems(source: PlanSource, anchor: string, changes: readonly ItemChange[], actor: Actor, options?: UpdateOptions): Promise<UpdateResult> {
    planHash(source.plan);
    return this.write((db, now) => updateItems(db, now, source, anchor, changes, actor, options));
  }
  recordArtifact(planPath: string, anchor: string, kind: string, summary: string, actor: Actor): Promise<ArtifactResult> {
    return this.write((db, now) => recordArtifact(db, now, planPath, anchor, kind, summary, actor));
  }
  complete(source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions = {}): Promise<CompleteResult> {
    planHash(source.plan);
    return this.write((db, now) => completeStep(db, now, source, anchor, actor, options));
  }
  reset(planPath: string, anchor: string, actor: Actor, reason: string | null = null): Promise<ResetResult> {
    return this.write((db, now) => resetStep(db, now, planPath, anchor, actor, reason));
  }
  ready(planPath: string): Promise<ReadyResult> {
    return this.read((db, now) => readySteps(db, now, planPath));
  }
  showPlans(planPath?: string): Promise<PlanView[]> {
    return this.read((db, now) => showPlans(db, now, planPath));
  }
  events(query?: EventQuery): Promise<EventView[]> {
    return this.read((db) => listEvents(db, query));
  }
  createEpic(input: NewEpic, actor: Actor): Promise<EpicRow> {
    return this.write((db, now) => createEpic(db, now.toISOString(), input, actor));
  }
  listEpics(status?: EpicStatus): Promise<EpicRow[]> {
    return this.read((db) => listEpics(db, status));
  }
  getEpic(id: string): Promise<EpicRow> {
    return this.read((db) => getEpic(db, id));
  }
  applyEpicEvent(id: string, event: EpicEvent, actor: Actor, reason: string | null = null): Promise<TransitionOutcome> {
    return this.write((db, now) => applyEpicEvent(db, now.toISOString(), id, event, actor, reason));
  }
  approveMerge(epicId: string, actor: Actor): Promise<EpicRow> {
    return this.write((db, now) => approveMerge(db, now.toISOString(), epicId, actor));
  }
  startEpic(epicId: string, current: PlanSource, actor: Actor): Promise<TransitionOutcome> {
    return this.write((db, now) => startEpic(db, now.toISOString(), epicId, current, actor));
  }
  finishEpic(epicId: string, actor: Actor, reason: string): Promise<TransitionOutcome> {
    return this.write((db, now) => finishEpic(db, now.toISOString(), epicId, actor, reason));
  }
  proposePlan(epicId: string, plan: ProposedPlan, actor: Actor): Promise<ProposeResult> {
    return this.write((db, now) => proposePlan(db, now.toISOString(), epicId, plan, actor));
  }
  approvePlan(epicId: string, current: PlanSource, actor: Actor, version?: number): Promise<ApproveResult> {
    return this.write((db, now) => approvePlan(db, now.toISOString(), epicId, current, actor, version));
  }
  requestChanges(epicId: string, feedback: string, actor: Actor, version?: number): Promise<PlanVersionRow> {
    return this.write((db, now) => requestChanges(db, now.toISOString(), epicId, feedback, actor, version));
  }
  discardPlan(epicId: string, actor: Actor, version?: number, reason: string | null = null): Promise<PlanVersionRow> {
    return this.write((db, now) => discardPlan(db, now.toISOString(), epicId, actor, version, reason));
  }
  planVersions(epicId: string): Promise<PlanVersionRow[]> {
    return this.read((db) => listVersions(db, epicId));
  }
  recordSignal(epicId: string, type: SignalType, summary: string, locations: readonly SignalLocation[], actor: Actor, awaitPerson = false): Promise<SignalResult> {
    return this.write((db, now) => recordSignal(db, now.toISOString(), epicId, type, summary, locations, actor, awaitPerson));
  }
  signals(epicId?: string): Promise<SignalView[]> {
    return this.read((db) => listSignals(db, epicId));
  }
  decideSignal(signalId: number, decision: SignalDecision, actor: Actor, note: string | null = null): Promise<TransitionOutcome> {
    return this.write((db, now) => decideSignal(db, now.toISOString(), signalId, decision, actor, note));
  }
  context(request: ContextRequest): Promise<ContextView> {
    return this.read((db, now) => buildContext(db, now, request));
  }
  runs(options: { active?: boolean; epicId?: string; limit?: number } = {}): Promise<RunView[]> {
    return this.read((db) => listRuns(db, options));
  }
  verifications(options: { epicId?: string; limit?: number } = {}): Promise<VerificationView[]> {
    return this.read((db) => listVerifications(db, options));
  }
  dataVersion(): Promise<number> {
    return this.read((db) => Number(db.pragma('data_version', { simple: true })));
  }
  close(): void {
    if (this.db.open) this.db.close();
  }
}
