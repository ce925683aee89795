import type { Io } from './op.ts';

/** A plan's top-level steps by claimability now, each list in step order. */
export interface StepPartition {
  readonly all: string[];
  readonly ready: string[];
  readonly completed: string[];
  readonly claimed: string[];
  readonly expired: string[];
  readonly blocked: string[];
}

/**
 * How a backend reads readiness: both keep, per top-level step, how many unfinished steps outside its
 * family it depends on (`blockers`) and per plan how many top-level steps are open, in triggers
 * (docs/postgres.md, section 3), so that claim and ready read few rows.
 */
export interface ReadinessPort {
  /** The plan's top-level steps split by claimability at the operation's time (sqlite/readiness.ts reads a large plan in one string). */
  partitionSteps(planPath: string): Io<StepPartition>;
  /** How many top-level steps are not completed. */
  countRemaining(planPath: string): Io<number>;
  /** Rewrites a plan's stored blockers and open-step counts from its steps (after its structure changed). */
  recomputeReadiness(planPath: string): Io<void>;
}
