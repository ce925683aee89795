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
 * A top-level step's place in the partition, as one letter: c completed, r ready, b blocked, h held,
 * e its lease expired and it is claimable again, x its lease expired but it is blocked.
 */
export type StateLetter = 'c' | 'r' | 'b' | 'h' | 'e' | 'x';

/**
 * The one rule of claimability: a pending step without blockers is ready; a held one whose lease
 * expired is claimable again unless blocked (sqlite/readiness.ts writes the same rule as SQL, to
 * read a large plan as one string).
 */
export function stateLetter(status: string, leaseExpired: boolean, blockers: number): StateLetter {
  if (status === 'completed') return 'c';
  if (status === 'pending') return blockers === 0 ? 'r' : 'b';
  if (leaseExpired) return blockers === 0 ? 'e' : 'x';
  return 'h';
}

export function emptyPartition(): StepPartition {
  return { all: [], ready: [], completed: [], claimed: [], expired: [], blocked: [] };
}

/** Adds the next step (in step order) to the partition by its letter. */
export function place(p: StepPartition, anchor: string, letter: string | undefined): void {
  p.all.push(anchor);
  if (letter === 'c') p.completed.push(anchor);
  else if (letter === 'r') p.ready.push(anchor);
  else if (letter === 'b') p.blocked.push(anchor);
  else if (letter === 'h') p.claimed.push(anchor);
  else {
    p.expired.push(anchor);
    (letter === 'e' ? p.ready : p.blocked).push(anchor);
  }
}

/**
 * How a backend reads readiness: both keep, per top-level step, how many unfinished steps outside its
 * family it depends on (`blockers`) and per plan how many top-level steps are open, in triggers
 * (docs/postgres-design.md, "Schema"), so that claim and ready read few rows.
 */
export interface ReadinessPort {
  /** The plan's top-level steps split by claimability at the operation's time (sqlite/readiness.ts reads a large plan in one string). */
  partitionSteps(planPath: string): Io<StepPartition>;
  /** How many top-level steps are not completed. */
  countRemaining(planPath: string): Io<number>;
  /** Rewrites a plan's stored blockers and open-step counts from its steps (after its structure changed). */
  recomputeReadiness(planPath: string): Io<void>;
}
