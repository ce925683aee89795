import { systemClock, type Clock } from '../../clock.ts';
import type { SignalDecision } from '../../epics/signals.ts';
import type { EpicEvent, EpicStatus, SignalType } from '../../epics/transitions.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { SchedulerSnapshot } from '../../scheduler/types.ts';
import type {
  ApproveResult, ContextRequest, ContextView, DebtRow, EpicPlans, PlanningNote, EpicReport, EpicRow, NewEpic, PlanVersionRow, ProposedPlan, ProposeResult,
  SignalLocation, SignalResult, SignalView, TransitionOutcome,
} from '../epicTypes.ts';
import type { CommitTrailer, PruneResult, ReconcileOptions, ReconcileResult } from '../maintenanceTypes.ts';
import type { AgentRunInput, AgentRunStart, NewRun, RunEnd, RunView, SessionCounts, UsageByRole, VerificationEntry, VerificationView } from '../runTypes.ts';
import type { Store, StoreDescription, Watch } from '../store.ts';
import type {
  Actor, ArtifactResult, ClaimResult, CommitTarget, CompleteOptions, CompleteResult, EventQuery, EventView, HeartbeatResult, InitResult,
  ItemChange, PlanRecord, PlanView, ReadyResult, ReopenResult, ResetResult, StartResult, StepRecord, StepView, TargetQuery, UpdateOptions, UpdateResult,
} from '../types.ts';
import type { Retrospective } from '../../epics/retrospective.ts';
import { beginAgentRun, recordFailedLaunch } from '../shared/agentRun.ts';
import { claimNext, DEFAULT_LEASE_SECONDS, heartbeat, resetStep, startStep } from '../shared/claims.ts';
import { resolveTarget } from '../shared/commitTarget.ts';
import { completeStep } from '../shared/complete.ts';
import { buildContext } from '../shared/context.ts';
import { applyEpicEvent, approveMerge, blockDetails, countIteration, createEpic, recordWorktreeEvent, requireEpic, setPullRequest } from '../shared/epics.ts';
import { epicPlans, handoffText } from '../shared/handoff.ts';
import { initPlan } from '../shared/initPlan.ts';
import { recordArtifact, updateItems } from '../shared/items.ts';
import { one, runSync, type Op } from '../shared/op.ts';
import { recordPlanningNote } from '../shared/planningNotes.ts';
import { approvePlan, discardPlan, finishEpic, listVersions, pendingVersion, planDrift, proposePlan, requestChanges, startEpic } from '../shared/planVersions.ts';
import type { StorePort } from '../shared/port.ts';
import { prunePlans } from '../shared/prune.ts';
import { listEvents, planRecord, readySteps, showPlans, showStep, stepRecordOf } from '../shared/queries.ts';
import { reconcileTrailers } from '../shared/reconcile.ts';
import { epicReport, markMerged, retrospective } from '../shared/records.ts';
import { reopenStep } from '../shared/reopen.ts';
import { countSessions, findOrphans, finishRun, markOrphans, startRun } from '../shared/runs.ts';
import { schedulerSnapshot } from '../shared/schedulerSnapshot.ts';
import { decideSignal, recordSignal } from '../shared/signals.ts';
import { openDatabase, rolledBackTransaction, writeTransaction, type OpenOptions } from './open.ts';
import { sqlitePort } from './port.ts';
import { mapSqliteError, type Database } from './sqlite.ts';
import { watchDatabase } from './watch.ts';

export interface SqliteStoreOptions extends OpenOptions {
  readonly clock?: Clock;
}

const connections = new WeakMap<SqliteStore, Database>();

/** The store's own connection, for benches that time SQLite itself (bench/); nothing in src outside the store may import it. */
export function sqliteConnection(store: SqliteStore): Database {
  const db = connections.get(store);
  if (!db) throw new Error('not a SqliteStore');
  return db;
}

/**
 * The SQLite store: every operation is one transaction on one connection (writes BEGIN IMMEDIATE),
 * run synchronously inside it, so no other operation of this process interleaves with it.
 */
export class SqliteStore implements Store {
  private readonly path: string;
  private readonly db: Database;
  private readonly clock: Clock;
  private readonly watches = new Set<Watch>();

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.path = path;
    this.db = openDatabase(path, options);
    this.clock = options.clock ?? systemClock;
    connections.set(this, this.db);
  }

  describe(): StoreDescription {
    return { backend: 'sqlite', place: this.path, file: this.path === ':memory:' ? null : this.path };
  }

  close(): Promise<void> {
    for (const w of [...this.watches]) w.dispose();
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }

  watch(listener: () => void): Watch {
    const w = watchDatabase(this.path, () => this.dataVersion(), listener, () => this.watches.delete(w));
    this.watches.add(w);
    return w;
  }

  /** A counter that changes whenever another connection commits a write. */
  private dataVersion(): number {
    return Number(this.db.pragma('data_version', { simple: true }));
  }

  /** Runs a write in an IMMEDIATE transaction with the current time, mapping SQLite failures. */
  private write<T>(fn: (db: Database, now: Date) => T): Promise<T> {
    return this.guard(() => writeTransaction(this.db, () => fn(this.db, this.clock.now())));
  }

  /** Runs a read in one deferred transaction, so it sees a single consistent snapshot. */
  private read<T>(fn: (db: Database, now: Date) => T): Promise<T> {
    return this.guard(() => this.db.transaction(() => fn(this.db, this.clock.now()))());
  }

  /** A shared operation (shared/op.ts) as a write: run synchronously to its end inside the IMMEDIATE transaction. */
  private writeOp<T>(op: (port: StorePort) => Op<T>): Promise<T> {
    return this.write((db, now) => runSync(op(sqlitePort(db, now))));
  }

  /** A shared operation as a read, in one deferred transaction. */
  private readOp<T>(op: (port: StorePort) => Op<T>): Promise<T> {
    return this.read((db, now) => runSync(op(sqlitePort(db, now))));
  }

  private guard<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(mapSqliteError(err, this.path));
    }
  }

  initPlan(source: PlanSource, actor: Actor, options: { force?: boolean; epicId?: string | null } = {}): Promise<InitResult> {
    return this.writeOp((port) => initPlan(port, source, actor, options.force ?? false, options.epicId ?? null));
  }
  /** The claim and its counts are one transaction. */
  claimNext(source: PlanSource, actor: Actor, options: { leaseSeconds?: number; branch?: string | null } = {}): Promise<ClaimResult> {
    return this.writeOp((port) => claimNext(port, source, actor, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS, options.branch ?? null));
  }
  start(planPath: string, anchor: string, actor: Actor): Promise<StartResult> {
    return this.writeOp((port) => startStep(port, planPath, anchor, actor));
  }
  heartbeat(planPath: string, anchor: string, actor: Actor, options: { leaseSeconds?: number } = {}): Promise<HeartbeatResult> {
    return this.writeOp((port) => heartbeat(port, planPath, anchor, actor, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS));
  }
  updateItems(source: PlanSource, anchor: string, changes: readonly ItemChange[], actor: Actor, options?: UpdateOptions): Promise<UpdateResult> {
    return this.writeOp((port) => updateItems(port, source, anchor, changes, actor, options));
  }
  recordArtifact(planPath: string, anchor: string, kind: string, summary: string, actor: Actor): Promise<ArtifactResult> {
    return this.writeOp((port) => recordArtifact(port, planPath, anchor, kind, summary, actor));
  }
  complete(source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions = {}): Promise<CompleteResult> {
    return this.writeOp((port) => completeStep(port, source, anchor, actor, options));
  }
  previewComplete(source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions = {}): Promise<CompleteResult> {
    return this.guard(() => rolledBackTransaction(this.db, () => runSync(completeStep(sqlitePort(this.db, this.clock.now()), source, anchor, actor, options))));
  }
  reset(planPath: string, anchor: string, actor: Actor, reason: string | null = null): Promise<ResetResult> {
    return this.writeOp((port) => resetStep(port, planPath, anchor, actor, reason));
  }
  reopen(planPath: string, anchor: string, actor: Actor, reason: string): Promise<ReopenResult> {
    return this.writeOp((port) => reopenStep(port, planPath, anchor, actor, reason));
  }
  ready(planPath: string): Promise<ReadyResult> {
    return this.readOp((port) => readySteps(port, planPath));
  }
  showPlans(planPath?: string): Promise<PlanView[]> {
    return this.readOp((port) => showPlans(port, planPath));
  }
  showStep(planPath: string, anchor: string): Promise<StepView> {
    return this.readOp((port) => showStep(port, planPath, anchor));
  }
  plan(planPath: string): Promise<PlanRecord> {
    return this.readOp((port) => planRecord(port, planPath));
  }
  stepRecord(planPath: string, anchor: string): Promise<StepRecord> {
    return this.readOp((port) => stepRecordOf(port, planPath, anchor));
  }
  commitTarget(query: TargetQuery): Promise<CommitTarget> {
    return this.readOp((port) => resolveTarget(port, query));
  }
  events(query?: EventQuery): Promise<EventView[]> {
    return this.readOp((port) => listEvents(port, query));
  }
  reconcileTrailers(trailers: readonly CommitTrailer[], actor: Actor | null, options: ReconcileOptions): Promise<ReconcileResult> {
    return this.writeOp((port) => reconcileTrailers(port, trailers, actor, options));
  }
  prunePlans(roots: readonly string[], actor: Actor | null, options: { dryRun: boolean }): Promise<PruneResult> {
    const op = (port: StorePort) => prunePlans(port, actor, roots, options.dryRun);
    return options.dryRun ? this.readOp(op) : this.writeOp(op);
  }

  createEpic(input: NewEpic, actor: Actor): Promise<EpicRow> {
    return this.writeOp((port) => createEpic(port, input, actor));
  }
  listEpics(status?: EpicStatus): Promise<EpicRow[]> {
    return this.readOp((port) => one(port.listEpics(status)));
  }
  getEpic(id: string): Promise<EpicRow> {
    return this.readOp((port) => requireEpic(port, id));
  }
  applyEpicEvent(id: string, event: EpicEvent, actor: Actor, reason: string | null = null, data: Readonly<Record<string, unknown>> = {}): Promise<TransitionOutcome> {
    return this.writeOp((port) => applyEpicEvent(port, id, event, actor, reason, { ...data }));
  }
  startEpic(epicId: string, current: PlanSource, actor: Actor): Promise<TransitionOutcome> {
    return this.writeOp((port) => startEpic(port, epicId, current, actor));
  }
  approveMerge(epicId: string, actor: Actor): Promise<EpicRow> {
    return this.writeOp((port) => approveMerge(port, epicId, actor));
  }
  finishEpic(epicId: string, actor: Actor, reason: string, options: { verificationConfigured?: boolean } = {}): Promise<TransitionOutcome> {
    return this.writeOp((port) => finishEpic(port, epicId, actor, reason, options.verificationConfigured ?? false));
  }
  countIteration(epicId: string, actor: Actor, reason: string): Promise<boolean> {
    return this.writeOp((port) => countIteration(port, epicId, actor, reason));
  }
  setEpicWorktree(epicId: string, path: string, branch: string): Promise<void> {
    return this.writeOp((port) => one(port.setEpicWorktree(epicId, path, branch)));
  }
  recordWorktreeEvent(epicId: string, actor: Actor, action: string, reason: string, data?: Readonly<Record<string, unknown>>): Promise<void> {
    return this.writeOp((port) => recordWorktreeEvent(port, epicId, actor, action, reason, data ? { ...data } : undefined));
  }
  blockDetails(epicId: string): Promise<Record<string, unknown> | null> {
    return this.readOp((port) => blockDetails(port, epicId));
  }
  epicPlans(epicId: string): Promise<EpicPlans> {
    return this.readOp((port) => epicPlans(port, epicId));
  }
  handoffText(epicId: string): Promise<string | null> {
    return this.readOp((port) => handoffText(port, epicId));
  }
  setPullRequest(epicId: string, url: string, actor: Actor, data: Readonly<Record<string, unknown>>): Promise<void> {
    return this.writeOp((port) => setPullRequest(port, epicId, url, actor, { ...data }));
  }
  markPullRequestChecked(epicId: string): Promise<void> {
    return this.writeOp((port) => one(port.markPullRequestChecked(epicId)));
  }
  retrospective(epicId: string): Promise<Retrospective> {
    return this.readOp((port) => retrospective(port, epicId));
  }
  markMerged(epicId: string, actor: Actor, reason: string, retro?: Retrospective): Promise<TransitionOutcome> {
    return this.writeOp((port) => markMerged(port, epicId, actor, reason, retro));
  }
  debt(options: { all?: boolean } = {}): Promise<DebtRow[]> {
    return this.readOp((port) => one(port.listDebt(options.all ?? false)));
  }
  planDrift(planPath: string, current: PlanSource): Promise<string[]> {
    return this.readOp((port) => planDrift(port, planPath, current));
  }
  epicReport(epicId: string): Promise<EpicReport> {
    return this.readOp((port) => epicReport(port, epicId));
  }

  proposePlan(epicId: string, plan: ProposedPlan, actor: Actor): Promise<ProposeResult> {
    return this.writeOp((port) => proposePlan(port, epicId, plan, actor));
  }
  approvePlan(epicId: string, current: PlanSource, actor: Actor, version?: number): Promise<ApproveResult> {
    return this.writeOp((port) => approvePlan(port, epicId, current, actor, version));
  }
  requestChanges(epicId: string, feedback: string, actor: Actor, version?: number): Promise<PlanVersionRow> {
    return this.writeOp((port) => requestChanges(port, epicId, feedback, actor, version));
  }
  discardPlan(epicId: string, actor: Actor, version?: number, reason: string | null = null): Promise<PlanVersionRow & { transition: TransitionOutcome }> {
    return this.writeOp((port) => discardPlan(port, epicId, actor, version, reason));
  }
  planVersions(epicId: string): Promise<PlanVersionRow[]> {
    return this.readOp((port) => listVersions(port, epicId));
  }
  pendingPlanVersion(epicId: string, version?: number): Promise<PlanVersionRow> {
    return this.readOp((port) => pendingVersion(port, epicId, version));
  }
  recordPlanningNote(epicId: string, kind: string, summary: string, actor: Actor): Promise<PlanningNote> {
    return this.writeOp((port) => recordPlanningNote(port, epicId, kind, summary, actor));
  }

  recordSignal(epicId: string, type: SignalType, summary: string, locations: readonly SignalLocation[], actor: Actor, awaitPerson = false): Promise<SignalResult> {
    return this.writeOp((port) => recordSignal(port, epicId, type, summary, locations, actor, awaitPerson));
  }
  signals(epicId?: string): Promise<SignalView[]> {
    return this.readOp((port) => one(port.listSignals(epicId, 100)));
  }
  decideSignal(signalId: number, decision: SignalDecision, actor: Actor, note: string | null = null): Promise<TransitionOutcome> {
    return this.writeOp((port) => decideSignal(port, signalId, decision, actor, note));
  }
  context(request: ContextRequest): Promise<ContextView> {
    return this.readOp((port) => buildContext(port, request));
  }

  beginAgentRun(input: AgentRunInput): Promise<AgentRunStart> {
    return this.writeOp((port) => beginAgentRun(port, input));
  }
  startRun(run: NewRun, actor: Actor | null): Promise<RunView> {
    return this.writeOp((port) => startRun(port, run, actor));
  }
  setAgentPid(runId: number, pid: number): Promise<void> {
    return this.writeOp((port) => one(port.setAgentPid(runId, pid)));
  }
  finishRun(runId: number, end: RunEnd, actor: Actor | null): Promise<RunView> {
    return this.writeOp((port) => finishRun(port, runId, end, actor));
  }
  recordFailedLaunch(run: Omit<NewRun, 'iteration'>, end: RunEnd, actor: Actor | null): Promise<RunView> {
    return this.writeOp((port) => recordFailedLaunch(port, run, end, actor));
  }
  findOrphans(isAlive: (pid: number) => boolean): Promise<RunView[]> {
    return this.readOp((port) => findOrphans(port, isAlive));
  }
  markOrphans(isAlive: (pid: number) => boolean, actor: Actor | null): Promise<RunView[]> {
    return this.writeOp((port) => markOrphans(port, isAlive, actor));
  }
  runs(options: { active?: boolean; epicId?: string; limit?: number } = {}): Promise<RunView[]> {
    return this.readOp((port) => one(port.listRuns(options)));
  }
  runsByLaunch(launchIds: readonly string[]): Promise<RunView[]> {
    return this.readOp((port) => one(port.runsByLaunch(launchIds)));
  }
  async latestRun(epicId: string, role?: string): Promise<RunView | null> {
    return (await this.readOp((port) => one(port.latestRun(epicId, role)))) ?? null;
  }
  sessionCounts(epicId?: string): Promise<Record<string, SessionCounts>> {
    return this.readOp((port) => countSessions(port, epicId));
  }
  usageByEpic(epicId?: string): Promise<UsageByRole[]> {
    return this.readOp((port) => one(port.usageByEpic(epicId)));
  }
  verifications(options: { epicId?: string; limit?: number } = {}): Promise<VerificationView[]> {
    return this.readOp((port) => one(port.listVerifications(options)));
  }
  recordVerifications(entries: readonly VerificationEntry[]): Promise<void> {
    return this.writeOp((port) => one(port.insertVerifications(entries)));
  }
  lastVerdict(epicId: string): Promise<'pass' | 'fail' | null> {
    return this.readOp((port) => one(port.lastVerdict(epicId)));
  }
  schedulerSnapshot(): Promise<SchedulerSnapshot> {
    return this.readOp((port) => schedulerSnapshot(port));
  }
}
