import type { SignalDecision } from '../../epics/signals.ts';
import type { EpicEvent, EpicStatus, SignalType } from '../../epics/transitions.ts';
import type { Retrospective } from '../../epics/retrospective.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { SchedulerSnapshot } from '../../scheduler/types.ts';
import type {
  ApproveResult, ContextRequest, ContextView, DebtRow, EpicPlans, EpicReport, EpicRow, NewEpic, PlanningNote, PlanVersionRow, ProposedPlan, ProposeResult,
  SignalLocation, SignalResult, SignalView, TransitionOutcome,
} from '../epicTypes.ts';
import type { CommitTrailer, PruneResult, ReconcileOptions, ReconcileResult } from '../maintenanceTypes.ts';
import type { AgentRunInput, AgentRunStart, NewRun, RunEnd, RunView, SessionCounts, UsageByRole, VerificationEntry, VerificationView } from '../runTypes.ts';
import type { Store, StoreDescription, Watch } from '../store.ts';
import type {
  Actor, ArtifactResult, ClaimResult, CommitTarget, CompleteOptions, CompleteResult, EventQuery, EventView, HeartbeatResult, InitResult, ItemChange, PlanRecord,
  PlanView, ReadyResult, ReopenResult, ResetResult, StartResult, StepRecord, StepView, TargetQuery, UpdateOptions, UpdateResult,
} from '../types.ts';
import { beginAgentRun, recordFailedLaunch } from '../shared/agentRun.ts';
import { claimNext, DEFAULT_LEASE_SECONDS, heartbeat, resetStep, startStep } from '../shared/claims.ts';
import { resolveTarget } from '../shared/commitTarget.ts';
import { completeStep, markPlanDone } from '../shared/complete.ts';
import { buildContext } from '../shared/context.ts';
import { applyEpicEvent, approveMerge, blockDetails, countIteration, createEpic, recordWorktreeEvent, requireEpic, setPullRequest } from '../shared/epics.ts';
import { epicPlans, handoffText } from '../shared/handoff.ts';
import { initPlan } from '../shared/initPlan.ts';
import { recordArtifact, updateItems } from '../shared/items.ts';
import { one, runAsync, type Op } from '../shared/op.ts';
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
import { claimDirect, findClaim, resumeClaim } from './claimOne.ts';
import { completeDirect, findCompletion } from './completeOne.ts';
import { openPool } from './connection.ts';
import { findCreatedEpic } from './epics.ts';
import { findArtifact } from './items.ts';
import { findProposal } from './planVersions.ts';
import { pgPort } from './port.ts';
import { Session, type SessionOptions, type Tx } from './session.ts';
import { findSignal } from './signals.ts';
import { watchRepository } from './watch.ts';

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
  reopen(planPath: string, anchor: string, actor: Actor, reason: string): Promise<ReopenResult> {
    return this.write('reopening the step', (port) => reopenStep(port, planPath, anchor, actor, reason));
  }
  ready(planPath: string): Promise<ReadyResult> {
    return this.read('reading the plan', (port) => readySteps(port, planPath));
  }
  showPlans(planPath?: string): Promise<PlanView[]> {
    return this.read('reading plans', (port) => showPlans(port, planPath));
  }
  showStep(planPath: string, anchor: string): Promise<StepView> {
    return this.read('reading the step', (port) => showStep(port, planPath, anchor));
  }
  plan(planPath: string): Promise<PlanRecord> {
    return this.read('reading the plan', (port) => planRecord(port, planPath));
  }
  stepRecord(planPath: string, anchor: string): Promise<StepRecord> {
    return this.read('reading the step', (port) => stepRecordOf(port, planPath, anchor));
  }
  commitTarget(query: TargetQuery): Promise<CommitTarget> {
    return this.read('finding the step', (port) => resolveTarget(port, query));
  }
  events(query?: EventQuery): Promise<EventView[]> {
    return this.read('reading events', (port) => listEvents(port, query));
  }
  reconcileTrailers(trailers: readonly CommitTrailer[], actor: Actor | null, options: ReconcileOptions): Promise<ReconcileResult> {
    return this.write('reconciling', (port) => reconcileTrailers(port, trailers, actor, options));
  }
  prunePlans(roots: readonly string[], actor: Actor | null, options: { dryRun: boolean }): Promise<PruneResult> {
    const op = (port: StorePort) => prunePlans(port, actor, roots, options.dryRun);
    return options.dryRun ? this.read('finding plans to prune', op) : this.write('pruning plans', op);
  }

  createEpic(input: NewEpic, actor: Actor, options: { resume?: string } = {}): Promise<EpicRow & { readonly resumed?: true }> {
    return this.resumeOr(options.resume, 'the epic', (tx, op) => findCreatedEpic(tx, op, input, actor), () => this.write('creating the epic', (port) => createEpic(port, input, actor)));
  }
  listEpics(status?: EpicStatus): Promise<EpicRow[]> {
    return this.read('reading epics', (port) => one(port.listEpics(status)));
  }
  getEpic(id: string): Promise<EpicRow> {
    return this.read('reading the epic', (port) => requireEpic(port, id));
  }
  applyEpicEvent(id: string, event: EpicEvent, actor: Actor, reason: string | null = null, data: Readonly<Record<string, unknown>> = {}): Promise<TransitionOutcome> {
    return this.write('changing the epic', (port) => applyEpicEvent(port, id, event, actor, reason, { ...data }));
  }
  startEpic(epicId: string, current: PlanSource, actor: Actor): Promise<TransitionOutcome> {
    return this.write('starting the epic', (port) => startEpic(port, epicId, current, actor));
  }
  approveMerge(epicId: string, actor: Actor): Promise<EpicRow> {
    return this.write('approving the merge', (port) => approveMerge(port, epicId, actor));
  }
  finishEpic(epicId: string, actor: Actor, reason: string, options: { verificationConfigured?: boolean } = {}): Promise<TransitionOutcome> {
    return this.write('finishing the epic', (port) => finishEpic(port, epicId, actor, reason, options.verificationConfigured ?? false));
  }
  countIteration(epicId: string, actor: Actor, reason: string): Promise<boolean> {
    return this.write('counting the iteration', (port) => countIteration(port, epicId, actor, reason));
  }
  setEpicWorktree(epicId: string, path: string, branch: string): Promise<void> {
    return this.write('recording the worktree', (port) => one(port.setEpicWorktree(epicId, path, branch)));
  }
  recordWorktreeEvent(epicId: string, actor: Actor, action: string, reason: string, data?: Readonly<Record<string, unknown>>): Promise<void> {
    return this.write('recording the worktree event', (port) => recordWorktreeEvent(port, epicId, actor, action, reason, data ? { ...data } : undefined));
  }
  blockDetails(epicId: string): Promise<Record<string, unknown> | null> {
    return this.read('reading the epic', (port) => blockDetails(port, epicId));
  }
  epicPlans(epicId: string): Promise<EpicPlans> {
    return this.read('reading the epic\'s plans', (port) => epicPlans(port, epicId));
  }
  handoffText(epicId: string): Promise<string | null> {
    return this.read('reading the handoff', (port) => handoffText(port, epicId));
  }
  setPullRequest(epicId: string, url: string, actor: Actor, data: Readonly<Record<string, unknown>>): Promise<void> {
    return this.write('recording the pull request', (port) => setPullRequest(port, epicId, url, actor, { ...data }));
  }
  markPullRequestChecked(epicId: string): Promise<void> {
    return this.write('recording the pull request check', (port) => one(port.markPullRequestChecked(epicId)));
  }
  retrospective(epicId: string): Promise<Retrospective> {
    return this.read('reading the retrospective', (port) => retrospective(port, epicId));
  }
  markMerged(epicId: string, actor: Actor, reason: string, retro?: Retrospective): Promise<TransitionOutcome> {
    return this.write('recording the merge', (port) => markMerged(port, epicId, actor, reason, retro));
  }
  debt(options: { all?: boolean } = {}): Promise<DebtRow[]> {
    return this.read('reading the debt register', (port) => one(port.listDebt(options.all ?? false)));
  }
  planDrift(planPath: string, current: PlanSource): Promise<string[]> {
    return this.read('reading the plan', (port) => planDrift(port, planPath, current));
  }
  epicReport(epicId: string): Promise<EpicReport> {
    return this.read('reading the epic report', (port) => epicReport(port, epicId));
  }

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
  planVersions(epicId: string): Promise<PlanVersionRow[]> {
    return this.read('reading plan versions', (port) => listVersions(port, epicId));
  }
  pendingPlanVersion(epicId: string, version?: number): Promise<PlanVersionRow> {
    return this.read('reading plan versions', (port) => pendingVersion(port, epicId, version));
  }
  recordPlanningNote(epicId: string, kind: string, summary: string, actor: Actor): Promise<PlanningNote> {
    return this.write('recording the note', (port) => recordPlanningNote(port, epicId, kind, summary, actor));
  }

  recordSignal(epicId: string, type: SignalType, summary: string, locations: readonly SignalLocation[], actor: Actor, awaitPerson = false, options: { resume?: string } = {}): Promise<SignalResult> {
    return this.resumeOr(options.resume, 'the signal', (tx, op) => findSignal(tx, op, epicId, type, summary, actor, awaitPerson),
      () => this.write('recording the signal', (port) => recordSignal(port, epicId, type, summary, locations, actor, awaitPerson)));
  }
  signals(epicId?: string): Promise<SignalView[]> {
    return this.read('reading signals', (port) => one(port.listSignals(epicId, 100)));
  }
  decideSignal(signalId: number, decision: SignalDecision, actor: Actor, note: string | null = null): Promise<TransitionOutcome> {
    return this.write('deciding the signal', (port) => decideSignal(port, signalId, decision, actor, note));
  }
  context(request: ContextRequest): Promise<ContextView> {
    return this.read('reading the context', (port) => buildContext(port, request));
  }

  beginAgentRun(input: AgentRunInput): Promise<AgentRunStart> {
    return this.write('recording the run', (port) => beginAgentRun(port, input));
  }
  startRun(run: NewRun, actor: Actor | null): Promise<RunView> {
    return this.write('recording the run', (port) => startRun(port, run, actor));
  }
  setAgentPid(runId: number, pid: number): Promise<void> {
    return this.write('recording the agent', (port) => one(port.setAgentPid(runId, pid)));
  }
  finishRun(runId: number, end: RunEnd, actor: Actor | null): Promise<RunView> {
    return this.write('finishing the run', (port) => finishRun(port, runId, end, actor));
  }
  recordFailedLaunch(run: Omit<NewRun, 'iteration'>, end: RunEnd, actor: Actor | null): Promise<RunView> {
    return this.write('recording the failed launch', (port) => recordFailedLaunch(port, run, end, actor));
  }
  findOrphans(isAlive: (pid: number) => boolean): Promise<RunView[]> {
    return this.read('reading runs', (port) => findOrphans(port, isAlive));
  }
  markOrphans(isAlive: (pid: number) => boolean, actor: Actor | null): Promise<RunView[]> {
    return this.write('marking lost runs', (port) => markOrphans(port, isAlive, actor));
  }
  runs(options: { active?: boolean; epicId?: string; limit?: number } = {}): Promise<RunView[]> {
    return this.read('reading runs', (port) => one(port.listRuns(options)));
  }
  runsByLaunch(launchIds: readonly string[]): Promise<RunView[]> {
    return this.read('reading runs', (port) => one(port.runsByLaunch(launchIds)));
  }
  async latestRun(epicId: string, role?: string): Promise<RunView | null> {
    return (await this.read('reading runs', (port) => one(port.latestRun(epicId, role)))) ?? null;
  }
  sessionCounts(epicId?: string): Promise<Record<string, SessionCounts>> {
    return this.read('reading runs', (port) => countSessions(port, epicId));
  }
  usageByEpic(epicId?: string): Promise<UsageByRole[]> {
    return this.read('reading runs', (port) => one(port.usageByEpic(epicId)));
  }
  verifications(options: { epicId?: string; limit?: number } = {}): Promise<VerificationView[]> {
    return this.read('reading verifications', (port) => one(port.listVerifications(options)));
  }
  recordVerifications(entries: readonly VerificationEntry[]): Promise<void> {
    return this.write('recording verifications', (port) => one(port.insertVerifications(entries)));
  }
  lastVerdict(epicId: string): Promise<'pass' | 'fail' | null> {
    return this.read('reading verifications', (port) => one(port.lastVerdict(epicId)));
  }
  schedulerSnapshot(): Promise<SchedulerSnapshot> {
    return this.read('reading the scheduler snapshot', (port) => schedulerSnapshot(port));
  }
}

/** The Store on PostgreSQL: every operation of the interface (docs/postgres.md). */
export function postgresStore(options: SessionOptions): Store & { schemaVersion(): Promise<number> } {
  return new PostgresCore(options);
}
