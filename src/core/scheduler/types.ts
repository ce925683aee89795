/**
 * The scheduler's input and output (docs/scheduler.md): a snapshot of the store in, actions out.
 * Everything decide() knows arrives here; the caller builds the snapshot in one read transaction.
 */
import type { Complexity } from '../epics/complexity.ts';
import type { Priority } from '../epics/ids.ts';
import type { EpicEvent, EpicStatus, Role } from '../epics/transitions.ts';
import type { FaultRole, MERGING_ROLE, PLANNING_ROLE, SETUP_ROLE } from '../../shared/roles.ts';
import type { BudgetConfig, DailySpend, EpicBudgetOverride, Spend } from '../epics/costBudget.ts';

export interface StepsSnapshot {
  readonly total: number;
  readonly completed: number;
  /** Claimable top-level anchors in step_index order (dependencies met; pending or lease expired). */
  readonly ready: readonly string[];
  /** Top-level anchors claimed under a lease that has not expired. */
  readonly claimedLive: readonly string[];
}

export interface VerificationSnapshot {
  /** The latest verification verdict since the epic last entered in_progress; null if none. */
  readonly lastVerdict: 'pass' | 'fail' | null;
  /** Consecutive latest verifications that failed the same way, counted within the current plan. */
  readonly sameFailureStreak: number;
  /** Verification commands are running in the epic's worktree now. */
  readonly running: boolean;
  /** A Ralph run ended after lastVerdict (or, with no verdict, since the epic entered in_progress). */
  readonly unverifiedBuild: boolean;
}

export interface ReviewSnapshot {
  /** Signals recorded for the epic in its current iteration (any status). */
  readonly signalsThisIteration: number;
  /** Bart runs of the current iteration that have ended. */
  readonly bartRunsThisIteration: number;
}

/** The roles whose runs the scheduler counts faults of: the agents it starts, and worktree setup (the role registry's). */
export { FAULT_ROLES, type FaultRole } from '../../shared/roles.ts';

/** One role's recent failures on one epic (docs/scheduler-faults.md). */
export interface RoleFaults {
  /** Non-successes in a row since the role's last success or a person's retry; 0 when the last run succeeded. */
  readonly consecutive: number;
  /** When the last of them ended (ISO 8601): the backoff counts from here. */
  readonly lastEndedAt: string;
  readonly lastRunId: number;
  /** failed, timed_out, lost or no_progress. */
  readonly lastOutcome: string;
  readonly lastExitCode: number | null;
  readonly lastReason: string | null;
  /** The last lines of its output. */
  readonly lastOutput: string;
}

export interface EpicSnapshot {
  readonly id: string;
  readonly title: string;
  readonly status: EpicStatus;
  /** Why the epic has its status (for a block: `agent_failed: …`, `plan_drift: …`, …). */
  readonly statusReason: string | null;
  readonly priority: Priority;
  readonly complexity: Complexity;
  /** Build iterations used (the store counts each entry to in_progress; the executor counts retries). */
  readonly iteration: number;
  readonly buildBudget: number;
  readonly planIteration: number;
  readonly planBudget: number;
  /** The approved plan's path, null before approval. */
  readonly planPath: string | null;
  /** A proposed plan version waits for a person. */
  readonly awaitingApproval: boolean;
  /** Who writes its plan: the scheduler starts Lisa only for `lisa` (docs/lifecycle.md, "Who plans"). */
  readonly planner?: typeof PLANNING_ROLE | 'person';
  readonly steps: StepsSnapshot;
  /** The epic's worktree once created. */
  readonly worktree: string | null;
  readonly verification: VerificationSnapshot;
  /** The epic last entered in_progress through Bart's implementation_failure and no Ralph run has ended since. */
  readonly reworkPending: boolean;
  readonly review: ReviewSnapshot;
  /** Signals recorded with status awaiting_person. */
  readonly signalsAwaitingPerson: number;
  readonly mergeApprovedByPerson: boolean;
  /** The epic waits in, or is being handled by, the merge queue. */
  readonly mergeQueued: boolean;
  /** Recent failures per role; a role without an entry has none. */
  readonly faults: Readonly<Partial<Record<FaultRole, RoleFaults>>>;
  /** Setup has succeeded in the epic's current worktree. */
  readonly setupDone: boolean;
  /** PR mode: the pull request the verified epic waits on, and when its state was last asked (ISO 8601). */
  readonly pullRequest?: { readonly url: string; readonly checkedAt: string | null } | null;
  /**
   * The files its work touches, added by the orchestrator from the plan and git after the store's
   * snapshot (docs/files.md); absent when files-aware scheduling is off or nothing is known.
   */
  readonly files?: EpicFiles;
  /** What its agent runs have spent so far (docs/budgets.md); absent: nothing known, nothing held. */
  readonly spend?: Spend;
  /** Its own limits, where a person set them (`epic create --budget-usd`, `epic budget`); else the config's. */
  readonly costBudget?: EpicBudgetOverride;
}

/** What files-aware scheduling knows of one epic (docs/files.md). */
export interface EpicFiles {
  /** Unfinished top-level steps → the globs each touches (declared, else inferred); a step not listed has none known. */
  readonly openSteps: Readonly<Record<string, readonly string[]>>;
  /** Files changed on the epic's branch since it left the default branch: not merged yet. */
  readonly changed: readonly string[];
  /** When the epic was created (ISO 8601): of two epics of one priority and wave, the older goes first. */
  readonly createdAt: string;
  /** Of two epics of one priority whose files meet, the lower wave goes first (waves.ts); absent: 0. */
  readonly wave?: number;
  /** Other epics whose branches are predicted to conflict with this one's, and in which files (conflict ahead). */
  readonly conflictsWith: readonly { readonly epicId: string; readonly files: readonly string[] }[];
}

/** Files-aware scheduling holds a step back: the file it shares, and with which epic and step (null: its unmerged changes). */
export interface FileShare {
  readonly file: string;
  readonly epicId: string;
  readonly stepAnchor: string | null;
}

/** A run whose status is `running` in the store. */
export interface RunSnapshot {
  readonly id: number;
  readonly epicId: string | null;
  readonly stepAnchor: string | null;
  /** `setup`: the scheduler's own setup of a worktree; it takes no agent slot. */
  readonly role: Role | typeof SETUP_ROLE;
  /** ISO 8601. */
  readonly startedAt: string;
  /** The supervising process and the agent's process group, for stopping a run (decide() ignores them). */
  readonly pid?: number | null;
  readonly agentPid?: number | null;
}

export interface SchedulerSnapshot {
  readonly epics: readonly EpicSnapshot[];
  readonly runs: readonly RunSnapshot[];
  /** What the agent runs of every epic that ended today (UTC, by the store's clock) cost: the daily budget's spend. */
  readonly today?: DailySpend;
  /** The fleet's view of the machine (docs/scheduler.md, "The fleet"); absent: no admission, no heavy work under way. */
  readonly fleet?: {
    /** Why admission holds new heavy work now ("0.9 GB free, needs 1 GB"), or null. */
    readonly admission: string | null;
    /** Verification and setup commands under way now. */
    readonly heavy: { readonly verification: number; readonly setup: number };
  };
}

export interface SchedulerConfig {
  readonly maxParallelAgents: number;
  /** The default run timeout; `timeoutsMs` overrides it per role. */
  readonly runTimeoutMs: number;
  readonly timeoutsMs?: Readonly<Partial<Record<Role | typeof SETUP_ROLE, number>>>;
  /** `springfield run` ends a run at its timeout, with this grace before SIGKILL; a run still going after both is stopped. */
  readonly killGraceMs?: number;
  /** Consecutive non-successes of one role on one epic that block it (agent_failed). */
  readonly retryLimit: number;
  /** The wait before retrying after the n-th consecutive failure (the last value repeats). */
  readonly retryBackoffMs: readonly number[];
  /** Setup commands or a `.worktreeinclude` exist: each new epic worktree is set up before any agent. */
  readonly setupConfigured: boolean;
  /** The same verification failure this many times in a row blocks the epic. */
  readonly sameFailureLimit: number;
  /** Configured agent commands; a role without a (non-empty) command is never started. */
  readonly roles: Readonly<Partial<Record<Role, readonly string[]>>>;
  readonly verificationConfigured: boolean;
  /** PR mode: the least time between two checks of one pull request's state. */
  readonly prCheckMs?: number;
  /** Cost budgets per epic and per day (docs/budgets.md); absent: no limit. */
  readonly budget?: BudgetConfig;
  /** Verification and setup commands of different epics at once; absent: no limit. */
  readonly slots?: { readonly verification: number; readonly setup: number };
  /** While this many epics wait for a person, no new epic's planning starts; absent: no limit. */
  readonly maxWaitingOnPerson?: number;
  /** Complexities whose review is a person's, not Bart's: the built epic waits for Review changes. */
  readonly reviewedByPerson?: readonly Complexity[];
}

/**
 * What the executor should do. Only `run` and `start_epic` (which reserves a slot for the Ralph
 * run of the next tick) are limited by free agent slots. `surface` is level-triggered: it is
 * emitted on every tick while a person is needed, so show it as current state, not as a new alert.
 */
export type Action =
  /** ready → in_progress and create the epic's worktree. */
  | { readonly kind: 'start_epic'; readonly epicId: string }
  /**
   * Start an agent in the epic's worktree (null: none yet; the executor creates it). For Ralph with
   * a step the executor claims it. `newIteration`: a retry after a failed verification; count an iteration first.
   */
  | {
      readonly kind: 'run';
      readonly role: Role;
      readonly epicId: string;
      readonly stepAnchor: string | null;
      readonly worktree: string | null;
      readonly newIteration: boolean;
      readonly reason: string;
    }
  | {
      readonly kind: 'transition';
      readonly epicId: string;
      readonly event: EpicEvent;
      readonly reason: string;
      /** Recorded with the transition's event (agent_failed: the role, the failures, the last run and its output). */
      readonly data?: Readonly<Record<string, unknown>>;
    }
  /** Copy `.worktreeinclude` files and run the setup commands in the epic's new worktree. */
  | { readonly kind: 'setup'; readonly epicId: string }
  /**
   * Nothing to do for the epic now; level-triggered like surface. A role failed and its retry backs
   * off until `until` (ISO 8601); or (`until` null, `shares` set) files-aware scheduling holds its
   * builder or its merge back until another epic's work is out of the way (docs/files.md).
   */
  | {
      readonly kind: 'wait';
      readonly epicId: string;
      readonly role: FaultRole | typeof MERGING_ROLE;
      readonly until: string | null;
      readonly message: string;
      readonly shares?: FileShare;
      /** The daily budget is spent: no agent starts anywhere until `until` (the next UTC day) or until it is raised (docs/budgets.md). */
      readonly dailyBudget?: DailySpend & { readonly limit: number };
      /** The fleet holds it (fleetRule.ts): the machine has no room, no slot is free, or the person's queue is full. */
      readonly hold?: 'machine' | 'slot' | 'queue';
    }
  /** Run the configured verification commands in the epic's worktree (the executor's verification pool). */
  | { readonly kind: 'verify'; readonly epicId: string }
  /** Every step completed and verification passed (or none configured): write SUMMARY, apply steps_completed. */
  | { readonly kind: 'complete_mechanically'; readonly epicId: string }
  /** Put the verified epic in the merge queue (rebase, re-verify, merge — or push and open a pull request — one at a time). */
  | { readonly kind: 'merge'; readonly epicId: string }
  /** PR mode: ask whether the epic's pull request was merged (rate-limited by prCheckMs). */
  | { readonly kind: 'check_pr'; readonly epicId: string; readonly url: string }
  | { readonly kind: 'stop_run'; readonly runId: number; readonly reason: string }
  /** A person is needed. */
  | { readonly kind: 'surface'; readonly epicId: string; readonly message: string };

export type ActionKind = Action['kind'];
