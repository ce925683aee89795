import type { PlanSource } from '../../plan/types.ts';
import type { EpicEvent, EpicStatus } from '../../epics/transitions.ts';
import type {
  ApproveResult, ContextRequest, ContextView, DebtRow, EpicPlans, EpicRow, NewEpic, PlanningNote, PlanVersionRow, ProposedPlan, ProposeResult, TransitionOutcome,
} from '../epicTypes.ts';
import type { CommitTrailer, PruneResult, ReconcileOptions, ReconcileResult } from '../maintenanceTypes.ts';
import type { Store, StoreDescription, Watch } from '../store.ts';
import type {
  Actor, ArtifactResult, ClaimResult, CommitTarget, CompleteOptions, CompleteResult, EventQuery, EventView, HeartbeatResult, InitResult, ItemChange, PlanRecord,
  PlanView, ReadyResult, ReopenResult, ResetResult, StartResult, StepRecord, StepView, TargetQuery, UpdateOptions, UpdateResult,
} from '../types.ts';
import { claimNext, DEFAULT_LEASE_SECONDS, heartbeat, resetStep, startStep } from '../shared/claims.ts';
import { readySteps } from '../shared/queries.ts';
import { claimDirect, findClaim, resumeClaim } from './claimOne.ts';
import { completeStep, markPlanDone } from '../shared/complete.ts';
import { completeDirect, findCompletion } from './completeOne.ts';
import { findCreatedEpic } from './epics.ts';
import { applyEpicEvent, approveMerge, blockDetails, countIteration, createEpic, recordWorktreeEvent, requireEpic, setPullRequest } from '../shared/epics.ts';
import { call } from '../shared/op.ts';
import { openPool } from './connection.ts';
import { initPlan } from '../shared/initPlan.ts';
import { findArtifact } from './items.ts';
import { recordArtifact, updateItems } from '../shared/items.ts';
import { listEvents, showPlans, showStep } from './queries.ts';
import { requirePlan, requireStep, stepRecord } from './rows.ts';
import { Session, type SessionOptions, type Tx } from './session.ts';
import { watchRepository } from './watch.ts';
import { pgPort } from './port.ts';
import { runAsync, type Op } from '../shared/op.ts';
import type { StorePort } from '../shared/port.ts';
import { resolveTarget } from '../shared/commitTarget.ts';
import { reconcileTrailers } from '../shared/reconcile.ts';
import { buildContext } from './context.ts';
import { epicPlans, handoffText } from '../shared/handoff.ts';
import { recordPlanningNote } from './planningNotes.ts';
import { findProposal } from './planVersions.ts';
import { approvePlan, discardPlan, finishEpic, listVersions, pendingVersion, planDrift, proposePlan, requestChanges, startEpic } from '../shared/planVersions.ts';
import { prunePlans } from './prune.ts';
import { reopenStep } from '../shared/reopen.ts';
// pgruns
import type { SignalDecision } from '../../epics/signals.ts';
import type { SignalType } from '../../epics/transitions.ts';
import type { Retrospective } from '../../epics/retrospective.ts';
import type { SchedulerSnapshot } from '../../scheduler/types.ts';
import type { EpicReport, SignalLocation, SignalResult, SignalView } from '../epicTypes.ts';
import type { AgentRunInput, AgentRunStart, NewRun, RunEnd, RunView, SessionCounts, UsageByRole, VerificationEntry, VerificationView } from '../runTypes.ts';
import { beginAgentRun, recordFailedLaunch } from './agentRun.ts';
import { epicReport, markMerged, retrospective } from './epicRecords.ts';
import { findOrphans, finishRun, markOrphans, setAgentPid, startRun } from './runLifecycle.ts';
import { countSessions, latestRun, listRuns, runsByLaunch, usageByEpic } from './runs.ts';
import { schedulerSnapshot } from '../shared/schedulerSnapshot.ts';
import { decideSignal, findSignal, listSignals, recordSignal } from './signals.ts';
import { lastVerdict, listVerifications, recordVerifications } from './verifications.ts';


/**
 * The store on PostgreSQL (docs/postgres.md): every row scoped by the repository id, holders named by
 * host, lease times from the server's clock, claims with FOR UPDATE SKIP LOCKED in one transaction.
 */
export class PostgresCore implements Store {
  private readonly session: Session;
  private readonly watches = new Set<Watch>();
  private readonly url: string;

  constructor(options: SessionOptions) {
    this.url = options.url;
    this.session = new Session(openPool(options.url), options);
  }

  describe(): StoreDescription {
    return { backend: 'postgres', place: this.session.place, file: null };
  }

  async close(): Promise<void> {
    for (const w of [...this.watches]) w.dispose();
    await this.session.close();
  }

  watch(listener: () => void): Watch {
    const w = watchRepository(this.url, this.session.options.repo.id, listener, () => this.watches.delete(w));
    this.watches.add(w);
    return w;
  }

  /** A shared operation (shared/op.ts) as a write: each backend call awaited inside one transaction; with `commit` false it is rolled back. */
  private write<T>(doing: string, op: (port: StorePort) => Op<T>, commit = true): Promise<T> {
    return this.session.write(doing, (tx) => runAsync(op(pgPort(tx))), commit);
  }

  /** A shared operation as a read, in one REPEATABLE READ snapshot. */
  private read<T>(doing: string, op: (port: StorePort) => Op<T>): Promise<T> {
    return this.session.read(doing, (tx) => runAsync(op(pgPort(tx))));
  }

  /** The schema version on the server, for doctor (0 when nothing was created yet). */
  schemaVersion(): Promise<number> {
    return this.session.schemaVersion();
  }

  initPlan(source: PlanSource, actor: Actor, options: { force?: boolean; epicId?: string | null } = {}): Promise<InitResult> {
    return this.write('initialising the plan', (port) => initPlan(port, source, actor, options.force ?? false, options.epicId ?? null));
  }
  /**
   * A write an earlier process sent and lost the reply of, handed over by its operation id `resume`
   * (docs/postgres.md, section 6): what it committed, found by `find` after its backend is ended, with
   * `resumed: true`; when it committed nothing (or there is no id), `write` does it now. The server
   * still away: OutcomeUnknownError with the same id, and nothing is written.
   */
  private async resumeOr<T extends object>(resume: string | undefined, what: string, find: (tx: Tx, op: string) => Promise<T | null>, write: () => Promise<T>): Promise<T> {
    if (resume) {
      const found = await this.session.settle(`looking up ${what} whose reply was lost`, resume, find);
      if (found) return { ...found, resumed: true };
    }
    return write();
  }

  /** One round trip when it claims; when it does not, the transaction that says why (docs/postgres.md, section 5). */
  claimNext(source: PlanSource, actor: Actor, options: { leaseSeconds?: number; resume?: string; branch?: string | null } = {}): Promise<ClaimResult> {
    const lease = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    const branch = options.branch ?? null;
    // A handed-over claim counts only while its step is still this holder's under its token.
    return this.resumeOr<ClaimResult>(options.resume, 'the claim', (tx, op) => resumeClaim(tx, op, source, actor), async () =>
      (await this.session.direct('claiming', (d) => claimDirect(d, source, actor, lease, branch), (tx, op) => findClaim(tx, op, source, actor)))
        ?? this.write('claiming', (port) => claimNext(port, source, actor, lease, branch)));
  }
  start(planPath: string, anchor: string, actor: Actor): Promise<StartResult> {
    return this.write('starting the step', (port) => startStep(port, planPath, anchor, actor));
  }
  heartbeat(planPath: string, anchor: string, actor: Actor, options: { leaseSeconds?: number } = {}): Promise<HeartbeatResult> {
    return this.write('renewing the lease', (port) => heartbeat(port, planPath, anchor, actor, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS));
  }
  updateItems(source: PlanSource, anchor: string, changes: readonly ItemChange[], actor: Actor, options?: UpdateOptions): Promise<UpdateResult> {
    return this.write('updating items', (port) => updateItems(port, source, anchor, changes, actor, options));
  }
  recordArtifact(planPath: string, anchor: string, kind: string, summary: string, actor: Actor, options: { resume?: string } = {}): Promise<ArtifactResult> {
    return this.resumeOr(options.resume, 'the artifact', (tx, op) => findArtifact(tx, op, planPath, anchor, actor),
      () => this.write('recording the artifact', (port) => recordArtifact(port, planPath, anchor, kind, summary, actor)));
  }
  /** One round trip for a holder's plain completion; refusals, repeats, substeps and forced ones take the transaction. */
  async complete(source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions = {}): Promise<CompleteResult> {
    const direct = await this.session.direct('completing', (d) => completeDirect(d, source, anchor, actor, options), (tx, op) => findCompletion(tx, op, source, anchor));
    if (direct === null) return this.write('completing', (port) => completeStep(port, source, anchor, actor, options));
    if (direct.remaining_steps > 0 || direct.plan_completed) return direct;
    // Nothing open and not marked by this completion: another marked it, or the reply was lost between the
    // COMMIT and the mark after it (docs/postgres.md, section 5). Make sure; report it only if this marked it.
    const marked = await this.write('completing', (port) => markPlanDone(port, actor, source.planPath, anchor));
    return marked ? { ...direct, plan_completed: true } : direct;
  }
  previewComplete(source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions = {}): Promise<CompleteResult> {
    return this.write('checking the completion', (port) => completeStep(port, source, anchor, actor, options), false);
  }
  reset(planPath: string, anchor: string, actor: Actor, reason: string | null = null): Promise<ResetResult> {
    return this.write('resetting the step', (port) => resetStep(port, planPath, anchor, actor, reason));
  }
  ready(planPath: string): Promise<ReadyResult> {
    return this.read('reading the plan', (port) => readySteps(port, planPath));
  }
  showPlans(planPath?: string): Promise<PlanView[]> {
    return this.session.read('reading plans', (tx) => showPlans(tx, planPath));
  }
  plan(planPath: string): Promise<PlanRecord> {
    return this.session.read('reading the plan', (tx) => requirePlan(tx, planPath));
  }
  async stepRecord(planPath: string, anchor: string): Promise<StepRecord> {
    return stepRecord(await this.session.read('reading the step', (tx) => requireStep(tx, planPath, anchor)));
  }
  events(query?: EventQuery): Promise<EventView[]> {
    return this.session.read('reading events', (tx) => listEvents(tx, query));
  }

  createEpic(input: NewEpic, actor: Actor, options: { resume?: string } = {}): Promise<EpicRow & { readonly resumed?: true }> {
    return this.resumeOr(options.resume, 'the epic', (tx, op) => findCreatedEpic(tx, op, input, actor), () => this.write('creating the epic', (port) => createEpic(port, input, actor)));
  }
  listEpics(status?: EpicStatus): Promise<EpicRow[]> {
    return this.read('reading epics', function* (port) { return yield* call(port.listEpics(status)); });
  }
  getEpic(id: string): Promise<EpicRow> {
    return this.read('reading the epic', (port) => requireEpic(port, id));
  }
  applyEpicEvent(id: string, event: EpicEvent, actor: Actor, reason: string | null = null, data: Readonly<Record<string, unknown>> = {}): Promise<TransitionOutcome> {
    return this.write('changing the epic', (port) => applyEpicEvent(port, id, event, actor, reason, { ...data }));
  }
  approveMerge(epicId: string, actor: Actor): Promise<EpicRow> {
    return this.write('approving the merge', (port) => approveMerge(port, epicId, actor));
  }
  countIteration(epicId: string, actor: Actor, reason: string): Promise<boolean> {
    return this.write('counting the iteration', (port) => countIteration(port, epicId, actor, reason));
  }
  blockDetails(epicId: string): Promise<Record<string, unknown> | null> {
    return this.read('reading the epic', (port) => blockDetails(port, epicId));
  }

  // branch postgres: plan versions and approval, the epic's lifecycle, maintenance (one line each; the SQL is in the files named).
  proposePlan(epicId: string, plan: ProposedPlan, actor: Actor, options: { resume?: string } = {}): Promise<ProposeResult> {
    return this.resumeOr(options.resume, 'the proposal', (tx, op) => findProposal(tx, op, epicId, plan, actor), () => this.write('proposing the plan', (port) => proposePlan(port, epicId, plan, actor)));
  }
  approvePlan(epicId: string, current: PlanSource, actor: Actor, version?: number): Promise<ApproveResult> {
    return this.write('approving the plan', (port) => approvePlan(port, epicId, current, actor, version));
  }
  requestChanges(epicId: string, feedback: string, actor: Actor, version?: number): Promise<PlanVersionRow> {
    return this.write('requesting changes', (port) => requestChanges(port, epicId, feedback, actor, version));
  }
  discardPlan(epicId: string, actor: Actor, version?: number, reason: string | null = null): Promise<PlanVersionRow & { transition: TransitionOutcome }> {
    return this.write('discarding the plan', (port) => discardPlan(port, epicId, actor, version, reason));
  }
  pendingPlanVersion(epicId: string, version?: number): Promise<PlanVersionRow> {
    return this.read('reading plan versions', (port) => pendingVersion(port, epicId, version));
  }
  planVersions(epicId: string): Promise<PlanVersionRow[]> {
    return this.read('reading plan versions', (port) => listVersions(port, epicId));
  }
  handoffText(epicId: string): Promise<string | null> {
    return this.read('reading the handoff', (port) => handoffText(port, epicId));
  }
  planDrift(planPath: string, current: PlanSource): Promise<string[]> {
    return this.read('reading the plan', (port) => planDrift(port, planPath, current));
  }
  epicPlans(epicId: string): Promise<EpicPlans> {
    return this.read('reading the epic\'s plans', (port) => epicPlans(port, epicId));
  }
  recordPlanningNote(epicId: string, kind: string, summary: string, actor: Actor): Promise<PlanningNote> {
    return this.session.write('recording the note', (tx) => recordPlanningNote(tx, epicId, kind, summary, actor));
  }
  debt(options: { all?: boolean } = {}): Promise<DebtRow[]> {
    return this.read('reading the debt register', function* (port) { return yield* call(port.listDebt(options.all ?? false)); });
  }
  startEpic(epicId: string, current: PlanSource, actor: Actor): Promise<TransitionOutcome> {
    return this.write('starting the epic', (port) => startEpic(port, epicId, current, actor));
  }
  finishEpic(epicId: string, actor: Actor, reason: string, options: { verificationConfigured?: boolean } = {}): Promise<TransitionOutcome> {
    return this.write('finishing the epic', (port) => finishEpic(port, epicId, actor, reason, options.verificationConfigured ?? false));
  }
  setEpicWorktree(epicId: string, path: string, branch: string): Promise<void> {
    return this.write('recording the worktree', function* (port) { yield* call(port.setEpicWorktree(epicId, path, branch)); });
  }
  commitTarget(query: TargetQuery): Promise<CommitTarget> {
    return this.read('finding the step', (port) => resolveTarget(port, query));
  }
  reopen(planPath: string, anchor: string, actor: Actor, reason: string): Promise<ReopenResult> {
    return this.write('reopening the step', (port) => reopenStep(port, planPath, anchor, actor, reason));
  }
  showStep(planPath: string, anchor: string): Promise<StepView> {
    return this.session.read('reading the step', (tx) => showStep(tx, planPath, anchor));
  }
  context(request: ContextRequest): Promise<ContextView> {
    return this.session.read('reading the context', (tx) => buildContext(tx, request));
  }
  prunePlans(roots: readonly string[], actor: Actor | null, options: { dryRun: boolean }): Promise<PruneResult> {
    return options.dryRun
      ? this.session.read('finding plans to prune', (tx) => prunePlans(tx, actor, roots, true))
      : this.session.write('pruning plans', (tx) => prunePlans(tx, actor, roots, false));
  }
  reconcileTrailers(trailers: readonly CommitTrailer[], actor: Actor | null, options: ReconcileOptions): Promise<ReconcileResult> {
    return this.write('reconciling', (port) => reconcileTrailers(port, trailers, actor, options));
  }
  // pgruns: runs, signals, verifications, the scheduler snapshot, PR mode and the merge's retrospective.
  beginAgentRun(input: AgentRunInput): Promise<AgentRunStart> {
    return this.session.write('recording the run', (tx) => beginAgentRun(tx, input));
  }
  startRun(run: NewRun, actor: Actor | null): Promise<RunView> {
    return this.session.write('recording the run', (tx) => startRun(tx, run, actor));
  }
  setAgentPid(runId: number, pid: number): Promise<void> {
    return this.session.write('recording the agent', (tx) => setAgentPid(tx, runId, pid));
  }
  finishRun(runId: number, end: RunEnd, actor: Actor | null): Promise<RunView> {
    return this.session.write('finishing the run', (tx) => finishRun(tx, runId, end, actor));
  }
  recordFailedLaunch(run: Omit<NewRun, 'iteration'>, end: RunEnd, actor: Actor | null): Promise<RunView> {
    return this.session.write('recording the failed launch', (tx) => recordFailedLaunch(tx, run, end, actor));
  }
  findOrphans(isAlive: (pid: number) => boolean): Promise<RunView[]> {
    return this.session.read('reading runs', (tx) => findOrphans(tx, isAlive));
  }
  markOrphans(isAlive: (pid: number) => boolean, actor: Actor | null): Promise<RunView[]> {
    return this.session.write('marking lost runs', (tx) => markOrphans(tx, isAlive, actor));
  }
  runs(options: { active?: boolean; epicId?: string; limit?: number } = {}): Promise<RunView[]> {
    return this.session.read('reading runs', (tx) => listRuns(tx, options));
  }
  runsByLaunch(launchIds: readonly string[]): Promise<RunView[]> {
    return this.session.read('reading runs', (tx) => runsByLaunch(tx, launchIds));
  }
  latestRun(epicId: string, role?: string): Promise<RunView | null> {
    return this.session.read('reading runs', (tx) => latestRun(tx, epicId, role));
  }
  sessionCounts(epicId?: string): Promise<Record<string, SessionCounts>> {
    return this.session.read('reading runs', (tx) => countSessions(tx, epicId));
  }
  usageByEpic(epicId?: string): Promise<UsageByRole[]> {
    return this.session.read('reading runs', (tx) => usageByEpic(tx, epicId));
  }
  recordSignal(epicId: string, type: SignalType, summary: string, locations: readonly SignalLocation[], actor: Actor, awaitPerson = false, options: { resume?: string } = {}): Promise<SignalResult> {
    return this.resumeOr(options.resume, 'the signal', (tx, op) => findSignal(tx, op, epicId, type, summary, actor, awaitPerson),
      () => this.session.write('recording the signal', (tx) => recordSignal(tx, epicId, type, summary, locations, actor, awaitPerson)));
  }
  signals(epicId?: string): Promise<SignalView[]> {
    return this.session.read('reading signals', (tx) => listSignals(tx, epicId));
  }
  decideSignal(signalId: number, decision: SignalDecision, actor: Actor, note: string | null = null): Promise<TransitionOutcome> {
    return this.session.write('deciding the signal', (tx) => decideSignal(tx, signalId, decision, actor, note));
  }
  verifications(options: { epicId?: string; limit?: number } = {}): Promise<VerificationView[]> {
    return this.session.read('reading verifications', (tx) => listVerifications(tx, options));
  }
  recordVerifications(entries: readonly VerificationEntry[]): Promise<void> {
    return this.session.write('recording verifications', (tx) => recordVerifications(tx, entries));
  }
  lastVerdict(epicId: string): Promise<'pass' | 'fail' | null> {
    return this.session.read('reading verifications', (tx) => lastVerdict(tx, epicId));
  }
  schedulerSnapshot(): Promise<SchedulerSnapshot> {
    return this.read('reading the scheduler snapshot', (port) => schedulerSnapshot(port));
  }
  recordWorktreeEvent(epicId: string, actor: Actor, action: string, reason: string, data?: Readonly<Record<string, unknown>>): Promise<void> {
    return this.write('recording the worktree event', (port) => recordWorktreeEvent(port, epicId, actor, action, reason, data ? { ...data } : undefined));
  }
  setPullRequest(epicId: string, url: string, actor: Actor, data: Readonly<Record<string, unknown>>): Promise<void> {
    return this.write('recording the pull request', (port) => setPullRequest(port, epicId, url, actor, { ...data }));
  }
  markPullRequestChecked(epicId: string): Promise<void> {
    return this.write('recording the pull request check', function* (port) { yield* call(port.markPullRequestChecked(epicId)); });
  }
  retrospective(epicId: string): Promise<Retrospective> {
    return this.session.read('reading the retrospective', (tx) => retrospective(tx, epicId));
  }
  markMerged(epicId: string, actor: Actor, reason: string, retro?: Retrospective): Promise<TransitionOutcome> {
    return this.session.write('recording the merge', (tx) => markMerged(tx, epicId, actor, reason, retro));
  }
  epicReport(epicId: string): Promise<EpicReport> {
    return this.session.read('reading the epic report', (tx) => epicReport(tx, epicId));
  }
}

/** The Store on PostgreSQL: every operation of the interface (docs/postgres.md). */
export function postgresStore(options: SessionOptions): Store & { schemaVersion(): Promise<number> } {
  return new PostgresCore(options);
}
