/**
 * The one wording of a build-budget block (docs/state-machine.md, "Blocked and its reasons"): the
 * store, the scheduler and every command write this reason, so a person and a filter read one thing.
 */

/** The reason code every build-budget block starts with; it is also the event's name. */
export const BUDGET_BLOCK = 'iteration_budget_exhausted';

/** `iteration_budget_exhausted: N of M build iterations used; <cause>`. */
export function budgetBlockReason(used: number, budget: number, cause: string): string {
  return `${BUDGET_BLOCK}: ${used} of ${budget} build iterations used; ${cause}`;
}

/** True for a reason written by budgetBlockReason. */
export function isBudgetBlockReason(reason: string | null | undefined): boolean {
  return (reason ?? '').startsWith(`${BUDGET_BLOCK}: `);
}

/** Why the scheduler blocks an epic whose verification keeps failing the same way. */
export function sameFailureCause(times: number): string {
  return `the same verification failure ${times} times in a row`;
}
