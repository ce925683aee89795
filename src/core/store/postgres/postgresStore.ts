import type { PlanSource } from '../../plan/types.ts';
import { DEFAULT_LEASE_SECONDS } from '../sqlite/claims.ts';
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
import { claimNext, heartbeat, resetStep, startStep } from './claims.ts';
import { claimDirect, findClaim, resumeClaim } from './claimOne.ts';
import { completeStep, markPlanDone } from './complete.ts';
import { completeDirect, findCompletion } from './completeOne.ts';
import { applyEpicEvent, approveMerge, blockDetails, countIteration, createEpic, findEpic, getEpic, listEpics, setEpicWorktree, setPlanner } from './epics.ts';
import { openPool } from './connection.ts';
import { initPlan } from './initPlan.ts';
import { findArtifact, recordArtifact, updateItems } from './items.ts';
import { listEvents, readySteps, showPlans, showStep } from './queries.ts';
import { requirePlan, requireStep, stepRecord } from './rows.ts';
import { Session, type SessionOptions, type Tx } from './session.ts';
import { watchRepository } from './watch.ts';
import { resolveTarget } from './commitTarget.ts';
import { buildContext } from './context.ts';
import { listDebt } from './debt.ts';
import { epicHandoff, epicPlans } from './handoffVersions.ts';
import { recordPlanningNote } from './planningNotes.ts';
import { approvePlan, discardPlan, findProposal, finishEpic, listVersions, pendingVersion, planDrift, proposePlan, requestChanges, startEpic } from './planVersions.ts';
import { prunePlans } from './prune.ts';
import { reconcileTrailers } from './reconcile.ts';
import { reopenStep } from './reopen.ts';
// pgruns
import type { SignalDecision } from '../../epics/signals.ts';
import type { SignalType } from '../../epics/transitions.ts';
import type { Retrospective } from '../../epics/retrospective.ts';
import type { SchedulerSnapshot } from '../../scheduler/types.ts';
import type { EpicReport, Planner, SignalLocation, SignalResult, SignalView } from '../epicTypes.ts';
import type { AgentRunInput, AgentRunStart, NewRun, RunEnd, RunView, SessionCounts, UsageByRole, VerificationEntry, VerificationView } from '../runTypes.ts';
import { beginAgentRun, recordFailedLaunch } from './agentRun.ts';
import { epicReport, markMerged, markPullRequestChecked, recordWorktreeEvent, retrospective, setPullRequest } from './epicRecords.ts';
import { findOrphans, finishRun, markOrphans, setAgentPid, startRun } from './runLifecycle.ts';
import { countSessions, latestRun, listRuns, runsByLaunch, usageByEpic } from './runs.ts';
import { schedulerSnapshot } from './schedulerSnapshot.ts';
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

  /** The schema version on the server, for doctor (0 when nothing was created yet). */
  schemaVersion(): Promise<number> {
    return this.session.schemaVersion();
  }

  initPlan(source: PlanSource, actor: Actor, options: { force?: boolean; epicId?: string | null } = {}): Promise<InitResult> {
    return this.session.write('initialising the plan', (tx) => initPlan(tx, source, actor, options.force ?? false, options.epicId ?? null));
  }
  /**
   * A write an earlier process sent and lost the reply of, handed over by its operation id `resume`
   * (docs/postgres.md, "Failures, retries, idempotence"): what it committed, found by `find` after its backend is ended, with
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

  /** One round trip when it claims; when it does not, the transaction that says why (docs/postgres.md, "Concurrency"). */
  claimNext(source: PlanSource, actor: Actor, options: { leaseSeconds?: number; resume?: string; branch?: string | null } = {}): Promise<ClaimResult> {
    const lease = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    const branch = options.branch ?? null;
    // A handed-over claim counts only while its step is still this holder's under its token.
    return this.resumeOr<ClaimResult>(options.resume, 'the claim', (tx, op) => resumeClaim(tx, op, source, actor), async () =>
      (await this.session.direct('claiming', (d) => claimDirect(d, source, actor, lease, branch), (tx, op) => findClaim(tx, op, source, actor)))
        ?? this.session.write('claiming', (tx) => claimNext(tx, source, actor, lease, branch)));
  }
  start(planPath: string, anchor: string, actor: Actor): Promise<StartResult> {
    return this.session.write('starting the step', (tx) => startStep(tx, planPath, anchor, actor));
  }
  heartbeat(planPath: string, anchor: string, actor: Actor, options: { leaseSeconds?: number } = {}): Promise<HeartbeatResult> {
    return this.session.write('renewing the lease', (tx) => heartbeat(tx, planPath, anchor, actor, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS));
  }
  updateItems(source: PlanSource, anchor: string, changes: readonly ItemChange[], actor: Actor, options?: UpdateOptions): Promise<UpdateResult> {
    return this.session.write('updating items', (tx) => updateItems(tx, source, anchor, changes, actor, options));
  }
  recordArtifact(planPath: string, anchor: string, kind: string, summary: string, actor: Actor, options: { resume?: string } = {}): Promise<ArtifactResult> {
    return this.resumeOr(options.resume, 'the artifact', (tx, op) => findArtifact(tx, op, planPath, anchor, actor),
      () => this.session.write('recording the artifact', (tx) => recordArtifact(tx, planPath, anchor, kind, summary, actor)));
  }
  /** One round trip for a holder's plain completion; refusals, repeats, substeps and forced ones take the transaction. */
  async complete(source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions = {}): Promise<CompleteResult> {
    const direct = await this.session.direct('completing', (d) => completeDirect(d, source, anchor, actor, options), (tx, op) => findCompletion(tx, op, source, anchor));
    if (direct === null) return this.session.write('completing', (tx) => completeStep(tx, source, anchor, actor, options));
    if (direct.remaining_steps > 0 || direct.plan_completed) return direct;
    // Nothing open and not marked by this completion: another marked it, or the reply was lost between the
    // COMMIT and the mark after it (docs/postgres.md, "Concurrency"). Make sure; report it only if this marked it.
    const marked = await this.session.write('completing', (tx) => markPlanDone(tx, actor, source.planPath, `last step ${anchor} completed`));
    return marked ? { ...direct, plan_completed: true } : direct;
  }
  previewComplete(source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions = {}): Promise<CompleteResult> {
    return this.session.write('checking the completion', (tx) => completeStep(tx, source, anchor, actor, options), false);
  }
  reset(planPath: string, anchor: string, actor: Actor, reason: string | null = null): Promise<ResetResult> {
    return this.session.write('resetting the step', (tx) => resetStep(tx, planPath, anchor, actor, reason));
  }
  ready(planPath: string): Promise<ReadyResult> {
    return this.session.read('reading the plan', (tx) => readySteps(tx, planPath));
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
    return this.resumeOr(options.resume, 'the epic', (tx, op) => findEpic(tx, op, input, actor), () => this.session.write('creating the epic', (tx) => createEpic(tx, input, actor)));
  }
  listEpics(status?: EpicStatus): Promise<EpicRow[]> {
    return this.session.read('reading epics', (tx) => listEpics(tx, status));
  }
  getEpic(id: string): Promise<EpicRow> {
    return this.session.read('reading the epic', (tx) => getEpic(tx, id));
  }
  applyEpicEvent(id: string, event: EpicEvent, actor: Actor, reason: string | null = null, data: Readonly<Record<string, unknown>> = {}): Promise<TransitionOutcome> {
    return this.session.write('changing the epic', (tx) => applyEpicEvent(tx, id, event, actor, reason, { ...data }));
  }
  approveMerge(epicId: string, actor: Actor): Promise<EpicRow> {
    return this.session.write('approving the merge', (tx) => approveMerge(tx, epicId, actor));
  }
  setPlanner(epicId: string, planner: Planner, actor: Actor): Promise<EpicRow> {
    return this.session.write('changing who plans the epic', (tx) => setPlanner(tx, epicId, planner, actor));
  }
  countIteration(epicId: string, actor: Actor, reason: string): Promise<boolean> {
    return this.session.write('counting the iteration', (tx) => countIteration(tx, epicId, actor, reason));
  }
  blockDetails(epicId: string): Promise<Record<string, unknown> | null> {
    return this.session.read('reading the epic', (tx) => blockDetails(tx, epicId));
  }

  // branch postgres: plan versions and approval, the epic's lifecycle, maintenance (one line each; the SQL is in the files named).
  proposePlan(epicId: string, plan: ProposedPlan, actor: Actor, options: { resume?: string } = {}): Promise<ProposeResult> {
    return this.resumeOr(options.resume, 'the proposal', (tx, op) => findProposal(tx, op, epicId, plan, actor), () => this.session.write('proposing the plan', (tx) => proposePlan(tx, epicId, plan, actor)));
  }
  approvePlan(epicId: string, current: PlanSource, actor: Actor, version?: number): Promise<ApproveResult> {
    return this.session.write('approving the plan', (tx) => approvePlan(tx, epicId, current, actor, version));
  }
  requestChanges(epicId: string, feedback: string, actor: Actor, version?: number): Promise<PlanVersionRow> {
    return this.session.write('requesting changes', (tx) => requestChanges(tx, epicId, feedback, actor, version));
  }
  discardPlan(epicId: string, actor: Actor, version?: number, reason: string | null = null): Promise<PlanVersionRow & { transition: TransitionOutcome }> {
    return this.session.write('discarding the plan', (tx) => discardPlan(tx, epicId, actor, version, reason));
  }
  pendingPlanVersion(epicId: string, version?: number): Promise<PlanVersionRow> {
    return this.session.read('reading plan versions', (tx) => pendingVersion(tx, epicId, version));
  }
  planVersions(epicId: string): Promise<PlanVersionRow[]> {
    return this.session.read('reading plan versions', (tx) => listVersions(tx, epicId));
  }
  handoffText(epicId: string): Promise<string | null> {
    return this.session.read('reading the handoff', (tx) => epicHandoff(tx, epicId));
  }
  planDrift(planPath: string, current: PlanSource): Promise<string[]> {
    return this.session.read('reading the plan', (tx) => planDrift(tx, planPath, current));
  }
  epicPlans(epicId: string): Promise<EpicPlans> {
    return this.session.read('reading the epic\'s plans', (tx) => epicPlans(tx, epicId));
  }
  recordPlanningNote(epicId: string, kind: string, summary: string, actor: Actor): Promise<PlanningNote> {
    return this.session.write('recording the note', (tx) => recordPlanningNote(tx, epicId, kind, summary, actor));
  }
  debt(options: { all?: boolean } = {}): Promise<DebtRow[]> {
    return this.session.read('reading the debt register', (tx) => listDebt(tx, options));
  }
  startEpic(epicId: string, current: PlanSource, actor: Actor): Promise<TransitionOutcome> {
    return this.session.write('starting the epic', (tx) => startEpic(tx, epicId, current, actor));
  }
  finishEpic(epicId: string, actor: Actor, reason: string, options: { verificationConfigured?: boolean } = {}): Promise<TransitionOutcome> {
    return this.session.write('finishing the epic', (tx) => finishEpic(tx, epicId, actor, reason, options.verificationConfigured ?? false));
  }
  setEpicWorktree(epicId: string, path: string, branch: string): Promise<void> {
    return this.session.write('recording the worktree', (tx) => setEpicWorktree(tx, epicId, path, branch));
  }
  commitTarget(query: TargetQuery): Promise<CommitTarget> {
    return this.session.read('finding the step', (tx) => resolveTarget(tx, query));
  }
  reopen(planPath: string, anchor: string, actor: Actor, reason: string): Promise<ReopenResult> {
    return this.session.write('reopening the step', (tx) => reopenStep(tx, planPath, anchor, actor, reason));
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
    return this.session.write('reconciling', (tx) => reconcileTrailers(tx, trailers, actor, options));
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
    return this.session.read('reading the scheduler snapshot', (tx) => schedulerSnapshot(tx));
  }
  recordWorktreeEvent(epicId: string, actor: Actor, action: string, reason: string, data?: Readonly<Record<string, unknown>>): Promise<void> {
    return this.session.write('recording the worktree event', (tx) => recordWorktreeEvent(tx, epicId, actor, action, reason, data ? { ...data } : undefined));
  }
  setPullRequest(epicId: string, url: string, actor: Actor, data: Readonly<Record<string, unknown>>): Promise<void> {
    return this.session.write('recording the pull request', (tx) => setPullRequest(tx, epicId, url, actor, { ...data }));
  }
  markPullRequestChecked(epicId: string): Promise<void> {
    return this.session.write('recording the pull request check', (tx) => markPullRequestChecked(tx, epicId));
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
