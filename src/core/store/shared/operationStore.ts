/**
 * The Store interface over the shared operations, once for both backends: each method names its
 * operation, whether it writes, and what it passes; a backend supplies only how an operation runs
 * (its transaction and port) and what it does beyond them (PostgreSQL's one-statement claim and
 * completion, its lost replies). The step commands' methods are StepOperations' (stepOperations.ts).
 */
import type { Retrospective } from '../../epics/retrospective.ts';
import type { SignalDecision } from '../../epics/signals.ts';
import type { EpicEvent, EpicStatus, SignalType } from '../../epics/transitions.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { SchedulerSnapshot } from '../../scheduler/types.ts';
import type {
  ApproveResult,
  ContextRequest,
  ContextView,
  DebtRow,
  EpicPlans,
  EpicReport,
  EpicRow,
  NewEpic,
  Planner,
  PlanningNote,
  PlanVersionRow,
  ProposedPlan,
  ProposeResult,
  SignalLocation,
  SignalResult,
  SignalView,
  TransitionOutcome,
} from '../epicTypes.ts';
import type { CommitTrailer, PruneResult, ReconcileOptions, ReconcileResult } from '../maintenanceTypes.ts';
import type {
  AgentRunInput,
  AgentRunStart,
  NewRun,
  RunEnd,
  RunView,
  SessionCounts,
  SpendReport,
  UsageByRole,
  VerificationEntry,
  VerificationView,
} from '../runTypes.ts';
import type { EpicBudgetOverride } from '../../epics/costBudget.ts';
import type { PortBlock } from '../portTypes.ts';
import type { Store, Watch } from '../store.ts';
import type {
  Actor,
  CommitTarget,
  CompleteOptions,
  CompleteResult,
  PlanRecord,
  ReopenResult,
  StepRecord,
  TargetQuery,
} from '../types.ts';
import { beginAgentRun, recordFailedLaunch } from './agentRun.ts';
import { resolveTarget } from './commitTarget.ts';
import { completeStep } from './complete.ts';
import { buildContext } from './context.ts';
import {
  applyEpicEvent,
  approveMerge,
  blockDetails,
  countIteration,
  createEpic,
  recordWorktreeEvent,
  requireEpic,
  setPlanner,
  setPullRequest,
} from './epics.ts';
import { epicPlans, handoffText } from './handoff.ts';
import { one, type Op } from './op.ts';
import { recordPlanningNote } from './planningNotes.ts';
import {
  approvePlan,
  discardPlan,
  finishEpic,
  listVersions,
  pendingVersion,
  changesSinceInit,
  proposePlan,
  requestChanges,
  startEpic,
} from './planVersions.ts';
import type { StorePort } from './port.ts';
import { StepOperations } from './stepOperations.ts';
import { prunePlans } from './prune.ts';
import { planRecord, stepRecordOf } from './queries.ts';
import { reconcileTrailers } from './reconcile.ts';
import { epicReport, markMerged, retrospective } from './records.ts';
import { reopenStep } from './reopen.ts';
import { countSessions, findOrphans, finishRun, markOrphans, startRun } from './runs.ts';
import { schedulerSnapshot } from './schedulerSnapshot.ts';
import { decideSignal, recordSignal } from './signals.ts';
import { setEpicBudget, spendReport } from './spend.ts';
import { recordRoute, statsRows, type StatsRows } from './stats.ts';

/** An operation over a port, as a store method hands it to its backend. */
export type PortOp<T> = (port: StorePort) => Op<T>;

export abstract class OperationStore extends StepOperations<StorePort> implements Store {
  abstract watch(listener: () => void): Watch;
  /** Runs a writing operation and rolls it back: exactly its checks and refusals, nothing written. */
  protected abstract preview<T>(doing: string, op: PortOp<T>): Promise<T>;
  previewComplete(
    source: PlanSource,
    anchor: string,
    actor: Actor,
    options: CompleteOptions = {},
  ): Promise<CompleteResult> {
    return this.preview('checking the completion', (port) => completeStep(port, source, anchor, actor, options));
  }
  reopen(planPath: string, anchor: string, actor: Actor, reason: string): Promise<ReopenResult> {
    return this.write('reopening the step', (port) => reopenStep(port, planPath, anchor, actor, reason));
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
  reconcileTrailers(
    trailers: readonly CommitTrailer[],
    actor: Actor | null,
    options: ReconcileOptions,
  ): Promise<ReconcileResult> {
    return this.write('reconciling', (port) => reconcileTrailers(port, trailers, actor, options));
  }
  prunePlans(roots: readonly string[], actor: Actor | null, options: { dryRun: boolean }): Promise<PruneResult> {
    const op: PortOp<PruneResult> = (port) => prunePlans(port, actor, roots, options.dryRun);
    return options.dryRun ? this.read('finding plans to prune', op) : this.write('pruning plans', op);
  }

  createEpic(
    input: NewEpic,
    actor: Actor,
    _options: { resume?: string } = {},
  ): Promise<EpicRow & { readonly resumed?: true }> {
    return this.write('creating the epic', (port) => createEpic(port, input, actor));
  }
  listEpics(status?: EpicStatus): Promise<EpicRow[]> {
    return this.read('reading epics', (port) => one(port.listEpics(status)));
  }
  getEpic(id: string): Promise<EpicRow> {
    return this.read('reading the epic', (port) => requireEpic(port, id));
  }
  applyEpicEvent(
    id: string,
    event: EpicEvent,
    actor: Actor,
    reason: string | null = null,
    data: Readonly<Record<string, unknown>> = {},
  ): Promise<TransitionOutcome> {
    return this.write('changing the epic', (port) => applyEpicEvent(port, id, event, actor, reason, { ...data }));
  }
  startEpic(epicId: string, current: PlanSource, actor: Actor): Promise<TransitionOutcome> {
    return this.write('starting the epic', (port) => startEpic(port, epicId, current, actor));
  }
  portBlocks(host: string): Promise<PortBlock[]> {
    return this.read('reading the reserved ports', (port) => one(port.portBlocks(host)));
  }
  insertPortBlock(block: PortBlock): Promise<boolean> {
    return this.write('reserving ports', (port) => one(port.insertPortBlock(block)));
  }
  releasePorts(host: string, worktree: string): Promise<number> {
    return this.write('releasing ports', (port) => one(port.releasePortBlock(host, worktree)));
  }
  setPlanner(epicId: string, planner: Planner, actor: Actor): Promise<EpicRow> {
    return this.write('changing who plans the epic', (port) => setPlanner(port, epicId, planner, actor));
  }
  approveMerge(epicId: string, actor: Actor): Promise<EpicRow> {
    return this.write('approving the merge', (port) => approveMerge(port, epicId, actor));
  }
  finishEpic(
    epicId: string,
    actor: Actor,
    reason: string,
    options: { verificationConfigured?: boolean } = {},
  ): Promise<TransitionOutcome> {
    return this.write('finishing the epic', (port) =>
      finishEpic(port, epicId, actor, reason, options.verificationConfigured ?? false),
    );
  }
  countIteration(epicId: string, actor: Actor, reason: string): Promise<boolean> {
    return this.write('counting the iteration', (port) => countIteration(port, epicId, actor, reason));
  }
  setEpicWorktree(epicId: string, path: string, branch: string): Promise<void> {
    return this.write('recording the worktree', (port) => one(port.setEpicWorktree(epicId, path, branch)));
  }
  forgetEpicWorktree(epicId: string, path: string): Promise<void> {
    return this.write('forgetting the worktree', (port) => one(port.clearEpicWorktree(epicId, path)));
  }
  recordWorktreeEvent(
    epicId: string,
    actor: Actor,
    action: string,
    reason: string,
    data?: Readonly<Record<string, unknown>>,
  ): Promise<void> {
    return this.write('recording the worktree event', (port) =>
      recordWorktreeEvent(port, epicId, actor, action, reason, data ? { ...data } : undefined),
    );
  }
  blockDetails(epicId: string): Promise<Record<string, unknown> | null> {
    return this.read('reading the epic', (port) => blockDetails(port, epicId));
  }
  epicPlans(epicId: string): Promise<EpicPlans> {
    return this.read("reading the epic's plans", (port) => epicPlans(port, epicId));
  }
  changesSinceInit(planPath: string, current: PlanSource): Promise<string[]> {
    return this.read('reading the plan', (port) => changesSinceInit(port, planPath, current));
  }
  epicReport(epicId: string): Promise<EpicReport> {
    return this.read('reading the epic report', (port) => epicReport(port, epicId));
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

  proposePlan(
    epicId: string,
    plan: ProposedPlan,
    actor: Actor,
    _options: { resume?: string } = {},
  ): Promise<ProposeResult> {
    return this.write('proposing the plan', (port) => proposePlan(port, epicId, plan, actor));
  }
  approvePlan(epicId: string, current: PlanSource, actor: Actor, version?: number): Promise<ApproveResult> {
    return this.write('approving the plan', (port) => approvePlan(port, epicId, current, actor, version));
  }
  requestChanges(epicId: string, feedback: string, actor: Actor, version?: number): Promise<PlanVersionRow> {
    return this.write('requesting changes', (port) => requestChanges(port, epicId, feedback, actor, version));
  }
  discardPlan(
    epicId: string,
    actor: Actor,
    version?: number,
    reason: string | null = null,
  ): Promise<PlanVersionRow & { transition: TransitionOutcome }> {
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

  recordSignal(
    epicId: string,
    type: SignalType,
    summary: string,
    locations: readonly SignalLocation[],
    actor: Actor,
    awaitPerson = false,
    _options: { resume?: string } = {},
  ): Promise<SignalResult> {
    return this.write('recording the signal', (port) =>
      recordSignal(port, epicId, type, summary, locations, actor, awaitPerson),
    );
  }
  signals(epicId?: string): Promise<SignalView[]> {
    return this.read('reading signals', (port) => one(port.listSignals(epicId, 100)));
  }
  decideSignal(
    signalId: number,
    decision: SignalDecision,
    actor: Actor,
    note: string | null = null,
  ): Promise<TransitionOutcome> {
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
  spend(epicId?: string): Promise<SpendReport> {
    return this.read('reading what agents spent', (port) => spendReport(port, epicId));
  }
  setEpicBudget(epicId: string, change: Partial<EpicBudgetOverride>, actor: Actor): Promise<EpicRow> {
    return this.write('setting the budget', (port) => setEpicBudget(port, epicId, change, actor));
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
  statsRows(since: string | null): Promise<StatsRows> {
    return this.read('reading the outcome ledger', (port) => statsRows(port, since));
  }
  recordRoute(
    epicId: string,
    stepAnchor: string | null,
    actor: Actor,
    reason: string,
    data: Readonly<Record<string, unknown>>,
  ): Promise<void> {
    return this.write('recording the routing choice', (port) =>
      recordRoute(port, epicId, stepAnchor, actor, reason, { ...data }),
    );
  }
  schedulerSnapshot(): Promise<SchedulerSnapshot> {
    return this.read('reading the scheduler snapshot', (port) => schedulerSnapshot(port));
  }
}
