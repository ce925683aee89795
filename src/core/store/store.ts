import type { PortBlock } from './portTypes.ts';
import type { SignalDecision } from '../epics/signals.ts';
import type { EpicEvent, EpicStatus, SignalType } from '../epics/transitions.ts';
import type { PlanSource } from '../plan/types.ts';
import type { SchedulerSnapshot } from '../scheduler/types.ts';
import type {
  ApproveResult,
  ContextRequest,
  ContextView,
  DebtRow,
  EpicPlans,
  PlanningNote,
  Retrospective,
  EpicReport,
  EpicRow,
  NewEpic,
  Planner,
  PlanVersionRow,
  ProposedPlan,
  ProposeResult,
  SignalLocation,
  SignalResult,
  SignalView,
  TransitionOutcome,
} from './epicTypes.ts';
import type { CommitTrailer, PruneResult, ReconcileOptions, ReconcileResult } from './maintenanceTypes.ts';
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
} from './runTypes.ts';
import type { EpicBudgetOverride } from '../epics/costBudget.ts';
import type { StatsRows } from './shared/stats.ts';
import type {
  Actor,
  ArtifactResult,
  ClaimResult,
  CommitTarget,
  CompleteOptions,
  CompleteResult,
  EventQuery,
  EventView,
  HeartbeatResult,
  InitResult,
  ItemChange,
  PlanRecord,
  PlanView,
  ReadyResult,
  ReopenResult,
  ResetResult,
  StartResult,
  StepRecord,
  StepView,
  TargetQuery,
  UpdateOptions,
  UpdateResult,
} from './types.ts';

/** Which backend a store is and where, for messages and `doctor` (never a password). */
export interface StoreDescription {
  readonly backend: 'sqlite' | 'postgres';
  /** Where the data lives, as a person may be shown it. */
  readonly place: string;
  /** The database file, when the backend keeps one on this machine (git must never add it). */
  readonly file: string | null;
}

/** Something a watch started, to stop it. */
export interface Watch {
  dispose(): void;
}

/** How a claim is made: its lease, a resumed claim, the branch, the files rule, a chosen step. */
export interface ClaimOptions {
  readonly leaseSeconds?: number;
  readonly resume?: string;
  readonly branch?: string | null;
  /**
   * `files: false` leaves out the files rule (docs/files.md, "Claims by agents themselves"): the
   * scheduler's own decide() already chose under it, as its `filesAware` switch says.
   */
  readonly files?: boolean;
  /** The step the scheduler chose (a held epic builds another step meanwhile): claimed if claimable, else nothing is. */
  readonly anchor?: string;
}

/**
 * What the step commands ask of the store (docs/steps.md): plans, steps, claims and leases, and the
 * audit log. The step commands' bundle links a store of these operations only (docs/cli-cost.md,
 * "The step store"); every other caller has the whole Store.
 */
export interface StepStore {
  describe(): StoreDescription;
  close(): Promise<void>;

  initPlan(
    source: PlanSource,
    actor: Actor,
    options?: { force?: boolean; epicId?: string | null },
  ): Promise<InitResult>;
  /**
   * `branch`: the branch the claimer's worktree is on; a step of an epic's plan is claimed only in
   * the epic's worktree or on its branch (store/shared/claims.ts).
   * `resume`: the operation id of an earlier claim whose reply was lost (PostgreSQL only; the CLI's
   * pending.json, docs/postgres-design.md, "Failures, retries, idempotence"): the step it claimed is returned (`resumed: true`) if it
   * committed and is still this holder's; else a claim is made as usual. SQLite never gets one.
   */
  claimNext(source: PlanSource, actor: Actor, options?: ClaimOptions): Promise<ClaimResult>;
  start(planPath: string, anchor: string, actor: Actor): Promise<StartResult>;
  heartbeat(
    planPath: string,
    anchor: string,
    actor: Actor,
    options?: { leaseSeconds?: number },
  ): Promise<HeartbeatResult>;
  updateItems(
    source: PlanSource,
    anchor: string,
    changes: readonly ItemChange[],
    actor: Actor,
    options?: UpdateOptions,
  ): Promise<UpdateResult>;
  /** `resume`: as claimNext's, for an artifact whose reply was lost (PostgreSQL only). */
  recordArtifact(
    planPath: string,
    anchor: string,
    kind: string,
    summary: string,
    actor: Actor,
    options?: { resume?: string },
  ): Promise<ArtifactResult>;
  complete(source: PlanSource, anchor: string, actor: Actor, options?: CompleteOptions): Promise<CompleteResult>;
  reset(planPath: string, anchor: string, actor: Actor, reason?: string | null): Promise<ResetResult>;
  /** With `actor`, its own claims hold none of its steps back (docs/files.md, "Claims by agents themselves"). */
  ready(planPath: string, actor?: Actor | null): Promise<ReadyResult>;
  showPlans(planPath?: string): Promise<PlanView[]>;
  /** One step with its substeps, reading only their rows. */
  showStep(planPath: string, anchor: string): Promise<StepView>;
  /** The audit log, oldest first; `epicId` takes the epic's own events and every event of its plans (pruned ones too). */
  events(query?: EventQuery): Promise<EventView[]>;
}

/**
 * The state store: every query Springfield makes, as domain operations (docs/architecture.md).
 * Each operation is one transaction and returns a promise; no caller sees a database handle or
 * knows the backend. Refusals and failures are SpringfieldErrors with the codes of docs/cli-contract.md.
 */
export interface Store extends StepStore {
  /** Calls `listener` soon after any process commits a write (and now and then regardless); cheap while nothing changes. */
  watch(listener: () => void): Watch;

  /** What `complete` would do, refusing exactly as it would, with nothing written (commit checks before git runs). */
  previewComplete(source: PlanSource, anchor: string, actor: Actor, options?: CompleteOptions): Promise<CompleteResult>;
  reopen(planPath: string, anchor: string, actor: Actor, reason: string): Promise<ReopenResult>;
  /** The plan's record; an unknown plan is refused (unknown_plan). */
  plan(planPath: string): Promise<PlanRecord>;
  /** The step's record; an unknown plan or step is refused. */
  stepRecord(planPath: string, anchor: string): Promise<StepRecord>;
  /** The step a commit completes: the named one, else the single top-level step the worktree holds. */
  commitTarget(query: TargetQuery): Promise<CommitTarget>;
  /** Completes steps from commit trailers (newest first), in one transaction. */
  reconcileTrailers(
    trailers: readonly CommitTrailer[],
    actor: Actor | null,
    options: ReconcileOptions,
  ): Promise<ReconcileResult>;
  /** Removes plans whose file is in none of `roots` (or, with dryRun, says which it would). */
  prunePlans(roots: readonly string[], actor: Actor | null, options: { dryRun: boolean }): Promise<PruneResult>;

  // Epics and their state machine (docs/state-machine.md).
  /** `resume`: as claimNext's, for an epic whose reply was lost (PostgreSQL only): the epic it created, as it is now. */
  createEpic(
    input: NewEpic,
    actor: Actor,
    options?: { resume?: string },
  ): Promise<EpicRow & { readonly resumed?: true }>;
  listEpics(status?: EpicStatus): Promise<EpicRow[]>;
  getEpic(id: string): Promise<EpicRow>;
  applyEpicEvent(
    id: string,
    event: EpicEvent,
    actor: Actor,
    reason?: string | null,
    data?: Readonly<Record<string, unknown>>,
  ): Promise<TransitionOutcome>;
  startEpic(epicId: string, current: PlanSource, actor: Actor): Promise<TransitionOutcome>;
  approveMerge(epicId: string, actor: Actor): Promise<EpicRow>;
  /** Who writes the epic's plans from now on (docs/lifecycle.md, "Who plans"); refused once a plan is approved. */
  setPlanner(epicId: string, planner: Planner, actor: Actor): Promise<EpicRow>;
  /** in_progress → implemented: every step completed and, with verification configured or recorded, passed after the latest build. */
  finishEpic(
    epicId: string,
    actor: Actor,
    reason: string,
    options?: { verificationConfigured?: boolean },
  ): Promise<TransitionOutcome>;
  /** One more build iteration for a retry that stays in progress; false (and the epic blocked) past the budget. */
  countIteration(epicId: string, actor: Actor, reason: string): Promise<boolean>;
  setEpicWorktree(epicId: string, path: string, branch: string): Promise<void>;
  /** A removed worktree forgotten: the epic's worktree_path cleared while it is still `path` (its updated_at kept: housekeeping, not a change to the epic). */
  forgetEpicWorktree(epicId: string, path: string): Promise<void>;
  /** The blocks of ports reserved on `host` (docs/worktrees.md, "Ports"). */
  portBlocks(host: string): Promise<PortBlock[]>;
  /** Reserves a block; false when a block on its host starts at the same port or its worktree already has one. */
  insertPortBlock(block: PortBlock): Promise<boolean>;
  /** Releases the worktree's block on `host`; how many were released. */
  releasePorts(host: string, worktree: string): Promise<number>;
  /** Records in the event log what the scheduler did to an epic's worktree. */
  recordWorktreeEvent(
    epicId: string,
    actor: Actor,
    action: string,
    reason: string,
    data?: Readonly<Record<string, unknown>>,
  ): Promise<void>;
  /** What blocked an epic a person can retry (the blocking event's record), or null. */
  blockDetails(epicId: string): Promise<Record<string, unknown> | null>;
  epicPlans(epicId: string): Promise<EpicPlans>;
  /** How `current` differs from the initialised plan at `planPath` (empty when it matches). */
  changesSinceInit(planPath: string, current: PlanSource): Promise<string[]>;
  /** What a finished epic's summary is made of. */
  epicReport(epicId: string): Promise<EpicReport>;
  /** The handoff the epic's branch carries, rendered from its approved versions (null before approval; docs/lifecycle.md). */
  handoffText(epicId: string): Promise<string | null>;
  /** PR mode: the pull request a verified epic now waits on, recorded with an event. */
  setPullRequest(epicId: string, url: string, actor: Actor, data: Readonly<Record<string, unknown>>): Promise<void>;
  /** PR mode: the pull request's state was asked now (the rate limit counts from here). */
  markPullRequestChecked(epicId: string): Promise<void>;
  /** Lovejoy's retrospective of an epic being merged now, read from its runs, verifications and approvals. */
  retrospective(epicId: string): Promise<Retrospective>;
  /** The epic merged, with its retrospective (the given one, else one read now) in the event log: one transaction. */
  markMerged(epicId: string, actor: Actor, reason: string, retrospective?: Retrospective): Promise<TransitionOutcome>;
  /** The debt register (docs/lifecycle.md): epics set aside and why, open entries unless `all`. */
  debt(options?: { all?: boolean }): Promise<DebtRow[]>;

  // Plan versions and approval.
  /** `resume`: as claimNext's, for a proposal whose reply was lost (PostgreSQL only). */
  proposePlan(epicId: string, plan: ProposedPlan, actor: Actor, options?: { resume?: string }): Promise<ProposeResult>;
  approvePlan(epicId: string, current: PlanSource, actor: Actor, version?: number): Promise<ApproveResult>;
  requestChanges(epicId: string, feedback: string, actor: Actor, version?: number): Promise<PlanVersionRow>;
  discardPlan(
    epicId: string,
    actor: Actor,
    version?: number,
    reason?: string | null,
  ): Promise<PlanVersionRow & { transition: TransitionOutcome }>;
  planVersions(epicId: string): Promise<PlanVersionRow[]>;
  /** The proposed version a decision applies to (the given one, else the only one); refused when there is none. */
  pendingPlanVersion(epicId: string, version?: number): Promise<PlanVersionRow>;
  /** A planner's research note on the epic, shown to her next session (docs/lifecycle.md). */
  recordPlanningNote(epicId: string, kind: string, summary: string, actor: Actor): Promise<PlanningNote>;

  // Review signals and context recovery.
  /** `resume`: as claimNext's, for a signal whose reply was lost (PostgreSQL only). */
  recordSignal(
    epicId: string,
    type: SignalType,
    summary: string,
    locations: readonly SignalLocation[],
    actor: Actor,
    awaitPerson?: boolean,
    options?: { resume?: string },
  ): Promise<SignalResult>;
  signals(epicId?: string): Promise<SignalView[]>;
  decideSignal(
    signalId: number,
    decision: SignalDecision,
    actor: Actor,
    note?: string | null,
  ): Promise<TransitionOutcome>;
  context(request: ContextRequest): Promise<ContextView>;

  // Agent runs and verification (docs/scheduler-faults.md).
  /** Checks the epic (and that the worktree holds the step, renewing its lease) and records the run: one transaction. */
  beginAgentRun(input: AgentRunInput): Promise<AgentRunStart>;
  startRun(run: NewRun, actor: Actor | null): Promise<RunView>;
  setAgentPid(runId: number, pid: number): Promise<void>;
  /** Ends a run with its outcome and what follows (its step released, a failure counted); finishing twice changes nothing. */
  finishRun(runId: number, end: RunEnd, actor: Actor | null): Promise<RunView>;
  /** Records a launch that ended before its run was recorded, as a failed run of the epic's current iteration. */
  recordFailedLaunch(run: Omit<NewRun, 'iteration'>, end: RunEnd, actor: Actor | null): Promise<RunView>;
  /** Running runs whose supervising process `isAlive` says is gone. */
  findOrphans(isAlive: (pid: number) => boolean): Promise<RunView[]>;
  /** Marks those runs lost and releases their steps. */
  markOrphans(isAlive: (pid: number) => boolean, actor: Actor | null): Promise<RunView[]>;
  runs(options?: { active?: boolean; epicId?: string; limit?: number }): Promise<RunView[]>;
  runsByLaunch(launchIds: readonly string[]): Promise<RunView[]>;
  latestRun(epicId: string, role?: string): Promise<RunView | null>;
  /** Agent sessions spent per epic, by role (setup runs are no session). */
  sessionCounts(epicId?: string): Promise<Record<string, SessionCounts>>;
  /** Tokens and cost per epic and role, from the runs whose agents reported usage. */
  usageByEpic(epicId?: string): Promise<UsageByRole[]>;
  /** What agents spent per epic (one, or every epic with an ended run) and today over all of them (docs/budgets.md). */
  spend(epicId?: string): Promise<SpendReport>;
  /** Sets some of an epic's own cost limits (null: back to the config's); recorded as an event. */
  setEpicBudget(epicId: string, change: Partial<EpicBudgetOverride>, actor: Actor): Promise<EpicRow>;
  verifications(options?: { epicId?: string; limit?: number }): Promise<VerificationView[]>;
  /** Stores the results of one verification pass together. */
  recordVerifications(entries: readonly VerificationEntry[]): Promise<void>;
  lastVerdict(epicId: string): Promise<'pass' | 'fail' | null>;
  /** What `springfield stats` computes its figures from (docs/stats.md): `since` null reads all history. */
  statsRows(since: string | null): Promise<StatsRows>;
  /** Records a routing choice (docs/agents.md, "Routing"): which preset a role runs on for a step, and why. */
  recordRoute(
    epicId: string,
    stepAnchor: string | null,
    actor: Actor,
    reason: string,
    data: Readonly<Record<string, unknown>>,
  ): Promise<void>;
  /** Everything the scheduler's decide() reads, in one consistent read. */
  schedulerSnapshot(): Promise<SchedulerSnapshot>;
}
