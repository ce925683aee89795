import type { ProgressMarks, RunEnd, RunStatus } from '../runTypes.ts';
import {
  BUILD_ITERATION_ROLES,
  BUILDING_ROLE,
  isRoleIn,
  PLANNING_ROLE,
  REVIEWING_ROLE,
} from '../../../shared/roles.ts';

export interface Outcome {
  readonly status: RunStatus;
  readonly reason: string | null;
}

/**
 * How a run ended, judged from its process alone (both backends; docs/scheduler-faults.md), or null
 * when it exited 0 and what it changed decides (progressOutcome). A person's stop comes first: a run
 * stopped with the scheduler is `stopped` whatever its exit code.
 */
export function processOutcome(end: RunEnd): Outcome | null {
  if (end.stopped) return { status: 'stopped', reason: end.stopped };
  if (end.limited) return { status: 'limited', reason: end.limited };
  if (end.timedOut)
    return {
      status: 'timed_out',
      reason: `ran past its timeout${end.timeoutSeconds ? ` of ${end.timeoutSeconds} s` : ''}; its process group was ended`,
    };
  if (end.stalled) return { status: 'stalled', reason: end.stalled };
  if (end.unavailable) return { status: 'unavailable', reason: end.unavailable };
  if (end.fault) return { status: 'failed', reason: end.fault };
  if (end.signal) return { status: 'failed', reason: `ended by ${end.signal}` };
  if (end.exitCode === 127)
    return {
      status: 'unavailable',
      reason: 'exit 127: the agent command, or a command it starts first, was not found',
    };
  if (end.exitCode !== 0)
    return {
      status: 'failed',
      reason: end.agentError ? `exit ${end.exitCode} — ${end.agentError}` : `exit ${end.exitCode}`,
    };
  return null;
}

/** A run that exited 0: succeeded when it moved its role's counter (or, for the builder, committed), else no_progress. */
export function progressOutcome(
  role: string,
  stepAnchor: string | null,
  before: ProgressMarks,
  now: ProgressMarks,
  progress: { completed: boolean; committed: boolean },
): Outcome {
  const ok: Outcome = { status: 'succeeded', reason: null };
  switch (role) {
    case PLANNING_ROLE:
      return now.proposals > before.proposals
        ? ok
        : { status: 'no_progress', reason: 'exited 0 without proposing a plan' };
    case REVIEWING_ROLE:
      return now.signals > before.signals
        ? ok
        : { status: 'no_progress', reason: 'exited 0 without recording a review signal' };
    case BUILDING_ROLE:
      if (progress.completed || progress.committed || now.itemsDone > before.itemsDone) return ok;
      return {
        status: 'no_progress',
        reason: stepAnchor
          ? `exited 0 without completing ${stepAnchor}, committing or ticking an item`
          : 'exited 0 without a commit',
      };
    default:
      return ok;
  }
}

/**
 * Whether an ended run spends one build iteration (the builder and the reviewer: BUILD_ITERATION_ROLES): a non-success that was work. A
 * run a person stopped, whose agent could not run at all, or that met a usage limit spent none (docs/scheduler-faults.md).
 */
export function spendsIteration(role: string, status: string): boolean {
  return isRoleIn(BUILD_ITERATION_ROLES, role) && !NO_ITERATION.includes(status);
}

const NO_ITERATION: readonly string[] = ['succeeded', 'stopped', 'unavailable', 'limited'];
