import { systemClock, type Clock } from '../../clock.ts';
import type { SignalDecision } from '../../epics/signals.ts';
import type { EpicEvent, EpicStatus, SignalType } from '../../epics/transitions.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { SchedulerSnapshot } from '../../scheduler/types.ts';
import type {
  ApproveResult, ContextRequest, ContextView, DebtRow, EpicPlans, PlanningNote, EpicReport, EpicRow, NewEpic, Planner, PlanVersionRow, ProposedPlan, ProposeResult,
  SignalLocation, SignalResult, SignalView, TransitionOutcome,
} from '../epicTypes.ts';
import type { CommitTrailer, PruneResult, ReconcileOptions, ReconcileResult } from '../maintenanceTypes.ts';
import type { AgentRunInput, AgentRunStart, NewRun, RunEnd, RunView, SessionCounts, UsageByRole, VerificationEntry, VerificationView } from '../runTypes.ts';
import type { Store, StoreDescription, Watch } from '../store.ts';
import type {
  Actor, ArtifactResult, ClaimResult, CommitTarget, CompleteOptions, CompleteResult, EventQuery, EventView, HeartbeatResult, InitResult,
  ItemChange, PlanRecord, PlanView, ReadyResult, ReopenResult, ResetResult, StartResult, StepRecord, StepView, TargetQuery, UpdateOptions, UpdateResult,
} from '../types.ts';
import { beginAgentRun, recordFailedLaunch } from './agentRun.ts';
import { claimNext, DEFAULT_LEASE_SECONDS, heartbeat, resetStep, startStep } from './claims.ts';
import { resolveTarget } from './commitTarget.ts';
import { completeStep } from './complete.ts';
import { buildContext } from './context.ts';
import { epicReport } from './epicReport.ts';
import { applyEpicEvent, approveMerge, blockDetails, countIteration, createEpic, getEpic, listEpics, markPullRequestChecked, recordWorktreeEvent, setEpicWorktree, setPlanner, setPullRequest } from './epics.ts';
import { initPlan } from './initPlan.ts';
import { recordArtifact, updateItems } from './items.ts';
import { openDatabase, rolledBackTransaction, writeTransaction, type OpenOptions } from './open.ts';
import { approvedVersion, approvePlan, discardPlan, finishEpic, listVersions, livePlanPath, pendingVersion, planDrift, proposePlan, requestChanges, startEpic } from './planVersions.ts';
import { recordPlanningNote } from './planningNotes.ts';
import { recordRetrospective, retrospective } from './retrospective.ts';
import { approvedVersions } from './handoffVersions.ts';
import { listDebt } from './debt.ts';
import { handoffText } from '../../epics/handoffVersions.ts';
import type { Retrospective } from '../../epics/retrospective.ts';
import { prunePlans } from './prune.ts';
import { listEvents, readySteps, showPlans, showStep } from './queries.ts';
import { reconcileTrailers } from './reconcile.ts';
import { reopenStep } from './reopen.ts';
import { requirePlan, requireStep } from './rows.ts';
import { findOrphans, finishRun, markOrphans, setAgentPid, startRun, countSessions } from './runLifecycle.ts';
import { lastVerdict, latestRun, listRuns, listVerifications, recordVerification, runsByLaunch, usageByEpic } from './runs.ts';
import { schedulerSnapshot } from './schedulerSnapshot.ts';
import { decideSignal, listSignals, recordSignal } from './signals.ts';
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

  private guard<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(mapSqliteError(err, this.path));
    }
  }

  initPlan(source: PlanSource, actor: Actor, options: { force?: boolean; epicId?: string | null } = {}): Promise<InitResult> {
    return this.write((db, now) => initPlan(db, now.toISOString(), source, actor, options.force ?? false, options.epicId ?? null));
  }
  /** The claim and its counts are one transaction. */
  claimNext(source: PlanSource, actor: Actor, options: { leaseSeconds?: number; branch?: string | null } = {}): Promise<ClaimResult> {
    return this.write((db, now) => claimNext(db, now, source, actor, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS, options.branch ?? null));
  }
  start(planPath: string, anchor: string, actor: Actor): Promise<StartResult> {
    return this.write((db, now) => startStep(db, now, planPath, anchor, actor));
  }
  heartbeat(planPath: string, anchor: string, actor: Actor, options: { leaseSeconds?: number } = {}): Promise<HeartbeatResult> {
    return this.write((db, now) => heartbeat(db, now, planPath, anchor, actor, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS));
  }
  updateItems(source: PlanSource, anchor: string, changes: readonly ItemChange[], actor: Actor, options?: UpdateOptions): Promise<UpdateResult> {
    return this.write((db, now) => updateItems(db, now, source, anchor, changes, actor, options));
  }
  recordArtifact(planPath: string, anchor: string, kind: string, summary: string, actor: Actor): Promise<ArtifactResult> {
    return this.write((db, now) => recordArtifact(db, now, planPath, anchor, kind, summary, actor));
  }
  complete(source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions = {}): Promise<CompleteResult> {
    return this.write((db, now) => completeStep(db, now, source, anchor, actor, options));
  }
  previewComplete(source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions = {}): Promise<CompleteResult> {
    return this.guard(() => rolledBackTransaction(this.db, () => completeStep(this.db, this.clock.now(), source, anchor, actor, options)));
  }
  reset(planPath: string, anchor: string, actor: Actor, reason: string | null = null): Promise<ResetResult> {
    return this.write((db, now) => resetStep(db, now, planPath, anchor, actor, reason));
  }
  reopen(planPath: string, anchor: string, actor: Actor, reason: string): Promise<ReopenResult> {
    return this.write((db, now) => reopenStep(db, now, planPath, anchor, actor, reason));
  }
  ready(planPath: string): Promise<ReadyResult> {
    return this.read((db, now) => readySteps(db, now, planPath));
  }
  showPlans(planPath?: string): Promise<PlanView[]> {
    return this.read((db, now) => showPlans(db, now, planPath));
  }
  showStep(planPath: string, anchor: string): Promise<StepView> {
    return this.read((db, now) => showStep(db, now, planPath, anchor));
  }
  plan(planPath: string): Promise<PlanRecord> {
    return this.read((db) => requirePlan(db, planPath));
  }
  stepRecord(planPath: string, anchor: string): Promise<StepRecord> {
    return this.read((db) => requireStep(db, planPath, anchor));
  }
  commitTarget(query: TargetQuery): Promise<CommitTarget> {
    return this.read((db) => resolveTarget(db, query));
  }
  events(query?: EventQuery): Promise<EventView[]> {
    return this.read((db) => listEvents(db, query));
  }
  reconcileTrailers(trailers: readonly CommitTrailer[], actor: Actor | null, options: ReconcileOptions): Promise<ReconcileResult> {
    return this.write((db, now) => reconcileTrailers(db, now, trailers, actor, options));
  }
  prunePlans(roots: readonly string[], actor: Actor | null, options: { dryRun: boolean }): Promise<PruneResult> {
    return options.dryRun ? this.read((db, now) => prunePlans(db, now, actor, roots, true)) : this.write((db, now) => prunePlans(db, now, actor, roots, false));
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
  applyEpicEvent(id: string, event: EpicEvent, actor: Actor, reason: string | null = null, data: Readonly<Record<string, unknown>> = {}): Promise<TransitionOutcome> {
    return this.write((db, now) => applyEpicEvent(db, now.toISOString(), id, event, actor, reason, { ...data }));
  }
  startEpic(epicId: string, current: PlanSource, actor: Actor): Promise<TransitionOutcome> {
    return this.write((db, now) => startEpic(db, now.toISOString(), epicId, current, actor));
  }
  approveMerge(epicId: string, actor: Actor): Promise<EpicRow> {
    return this.write((db, now) => approveMerge(db, now.toISOString(), epicId, actor));
  }
  setPlanner(epicId: string, planner: Planner, actor: Actor): Promise<EpicRow> {
    return this.write((db, now) => setPlanner(db, now.toISOString(), epicId, planner, actor));
  }
  finishEpic(epicId: string, actor: Actor, reason: string, options: { verificationConfigured?: boolean } = {}): Promise<TransitionOutcome> {
    return this.write((db, now) => finishEpic(db, now.toISOString(), epicId, actor, reason, options.verificationConfigured ?? false));
  }
  countIteration(epicId: string, actor: Actor, reason: string): Promise<boolean> {
    return this.write((db, now) => countIteration(db, now.toISOString(), epicId, actor, reason));
  }
  setEpicWorktree(epicId: string, path: string, branch: string): Promise<void> {
    return this.write((db, now) => setEpicWorktree(db, now.toISOString(), epicId, path, branch));
  }
  recordWorktreeEvent(epicId: string, actor: Actor, action: string, reason: string, data?: Readonly<Record<string, unknown>>): Promise<void> {
    return this.write((db, now) => recordWorktreeEvent(db, now.toISOString(), epicId, actor, action, reason, data ? { ...data } : undefined));
  }
  blockDetails(epicId: string): Promise<Record<string, unknown> | null> {
    return this.read((db) => blockDetails(db, getEpic(db, epicId)));
  }
  epicPlans(epicId: string): Promise<EpicPlans> {
    return this.read((db) => {
      const epic = getEpic(db, epicId);
      const approved = approvedVersion(db, epic);
      const handoff = approved ? handoffText(epic, approvedVersions(db, epicId)) ?? undefined : undefined;
      return { livePlanPath: livePlanPath(db, epicId), approved: approved ? { planPath: approved.plan_path, body: approved.body, version: approved.version, handoff } : null };
    });
  }
  handoffText(epicId: string): Promise<string | null> {
    return this.read((db) => handoffText(getEpic(db, epicId), approvedVersions(db, epicId)));
  }
  setPullRequest(epicId: string, url: string, actor: Actor, data: Readonly<Record<string, unknown>>): Promise<void> {
    return this.write((db, now) => setPullRequest(db, now.toISOString(), epicId, url, actor, { ...data }));
  }
  markPullRequestChecked(epicId: string): Promise<void> {
    return this.write((db, now) => markPullRequestChecked(db, now.toISOString(), epicId));
  }
  retrospective(epicId: string): Promise<Retrospective> {
    return this.read((db, now) => retrospective(db, now, epicId));
  }
  markMerged(epicId: string, actor: Actor, reason: string, retro?: Retrospective): Promise<TransitionOutcome> {
    return this.write((db, now) => {
      const t = applyEpicEvent(db, now.toISOString(), epicId, 'merged', actor, reason);
      recordRetrospective(db, now.toISOString(), retro ?? retrospective(db, now, epicId), actor);
      return t;
    });
  }
  debt(options: { all?: boolean } = {}): Promise<DebtRow[]> {
    return this.read((db) => listDebt(db, options));
  }
  planDrift(planPath: string, current: PlanSource): Promise<string[]> {
    return this.read((db) => planDrift(db, planPath, current));
  }
  epicReport(epicId: string): Promise<EpicReport> {
    return this.read((db, now) => epicReport(db, now, epicId));
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
  discardPlan(epicId: string, actor: Actor, version?: number, reason: string | null = null): Promise<PlanVersionRow & { transition: TransitionOutcome }> {
    return this.write((db, now) => discardPlan(db, now.toISOString(), epicId, actor, version, reason));
  }
  planVersions(epicId: string): Promise<PlanVersionRow[]> {
    return this.read((db) => listVersions(db, epicId));
  }
  pendingPlanVersion(epicId: string, version?: number): Promise<PlanVersionRow> {
    return this.read((db) => pendingVersion(db, epicId, version));
  }
  recordPlanningNote(epicId: string, kind: string, summary: string, actor: Actor): Promise<PlanningNote> {
    return this.write((db, now) => recordPlanningNote(db, now.toISOString(), epicId, kind, summary, actor));
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

  beginAgentRun(input: AgentRunInput): Promise<AgentRunStart> {
    return this.write((db, now) => beginAgentRun(db, now, input));
  }
  startRun(run: NewRun, actor: Actor | null): Promise<RunView> {
    return this.write((db, now) => startRun(db, now, run, actor));
  }
  setAgentPid(runId: number, pid: number): Promise<void> {
    return this.write((db) => setAgentPid(db, runId, pid));
  }
  finishRun(runId: number, end: RunEnd, actor: Actor | null): Promise<RunView> {
    return this.write((db, now) => finishRun(db, now, runId, end, actor));
  }
  recordFailedLaunch(run: Omit<NewRun, 'iteration'>, end: RunEnd, actor: Actor | null): Promise<RunView> {
    return this.write((db, now) => recordFailedLaunch(db, now, run, end, actor));
  }
  findOrphans(isAlive: (pid: number) => boolean): Promise<RunView[]> {
    return this.read((db) => findOrphans(db, isAlive));
  }
  markOrphans(isAlive: (pid: number) => boolean, actor: Actor | null): Promise<RunView[]> {
    return this.write((db, now) => markOrphans(db, isAlive, now, actor));
  }
  runs(options: { active?: boolean; epicId?: string; limit?: number } = {}): Promise<RunView[]> {
    return this.read((db) => listRuns(db, options));
  }
  runsByLaunch(launchIds: readonly string[]): Promise<RunView[]> {
    return this.read((db) => runsByLaunch(db, launchIds));
  }
  latestRun(epicId: string, role?: string): Promise<RunView | null> {
    return this.read((db) => latestRun(db, epicId, role));
  }
  sessionCounts(epicId?: string): Promise<Record<string, SessionCounts>> {
    return this.read((db) => countSessions(db, epicId));
  }
  usageByEpic(epicId?: string): Promise<UsageByRole[]> {
    return this.read((db) => usageByEpic(db, epicId));
  }
  verifications(options: { epicId?: string; limit?: number } = {}): Promise<VerificationView[]> {
    return this.read((db) => listVerifications(db, options));
  }
  recordVerifications(entries: readonly VerificationEntry[]): Promise<void> {
    return this.write((db, now) => {
      for (const v of entries) recordVerification(db, now.toISOString(), v);
    });
  }
  lastVerdict(epicId: string): Promise<'pass' | 'fail' | null> {
    return this.read((db) => lastVerdict(db, epicId));
  }
  schedulerSnapshot(): Promise<SchedulerSnapshot> {
    return this.read((db, now) => schedulerSnapshot(db, now));
  }
}
