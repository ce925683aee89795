/**
 * The scheduler's input and output (SPEC §7): a snapshot of the store in, actions out.
 * Everything decide() knows arrives here; the caller builds the snapshot in one read transaction.
 */
import type { Complexity } from '../epics/complexity.ts';
import type { Priority } from '../epics/ids.ts';
import type { EpicEvent, EpicStatus, Role } from '../epics/transitions.ts';

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

export interface EpicSnapshot {
  readonly id: string;
  readonly title: string;
  readonly status: EpicStatus;
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
}

/** A run whose status is `running` in the store. */
export interface RunSnapshot {
  readonly id: number;
  readonly epicId: string | null;
  readonly stepAnchor: string | null;
  readonly role: Role;
  /** ISO 8601. */
  readonly startedAt: string;
}

export interface SchedulerSnapshot {
  readonly epics: readonly EpicSnapshot[];
  readonly runs: readonly RunSnapshot[];
}

export interface SchedulerConfig {
  readonly maxParallelAgents: number;
  readonly runTimeoutMs: number;
  /** The same verification failure this many times in a row blocks the epic. */
  readonly sameFailureLimit: number;
  /** Configured agent commands; a role without a (non-empty) command is never started. */
  readonly roles: Readonly<Partial<Record<Role, readonly string[]>>>;
  readonly verificationConfigured: boolean;
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
    readonly kind: 'run'; readonly role: Role; readonly epicId: string; readonly stepAnchor: string | null;
    readonly worktree: string | null; readonly newIteration: boolean; readonly reason: string;
  }
  | { readonly kind: 'transition'; readonly epicId: string; readonly event: EpicEvent; readonly reason: string }
  /** Run the configured verification commands in the epic's worktree (the executor's verification pool). */
  | { readonly kind: 'verify'; readonly epicId: string }
  /** Every step completed and verification passed (or none configured): write SUMMARY, apply steps_completed. */
  | { readonly kind: 'complete_mechanically'; readonly epicId: string }
  /** Put the verified epic in the merge queue (rebase, re-verify, merge, one at a time). */
  | { readonly kind: 'merge'; readonly epicId: string }
  | { readonly kind: 'stop_run'; readonly runId: number; readonly reason: string }
  /** A person is needed. */
  | { readonly kind: 'surface'; readonly epicId: string; readonly message: string };

export type ActionKind = Action['kind'];
