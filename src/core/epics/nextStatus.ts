import { BUDGET_BLOCK, budgetBlockReason, isBudgetBlockReason } from './budget.ts';
import { buildBudget, type Complexity } from './complexity.ts';
import { transition, type EpicEvent, type EpicStatus, type Role } from './transitions.ts';

/** Where an event takes an epic: its new status, the role to act next, the reason to record and the build iteration. */
export interface EpicMove {
  readonly to: EpicStatus;
  readonly nextRole: Role | null;
  readonly why: string | null;
  readonly iteration: number;
}

/**
 * The transition table plus the build budget (docs/state-machine.md), one rule for both stores: each
 * entry to in_progress (not a retry) counts a build iteration, a new plan after a block starts from
 * zero, and an entry past the budget blocks the epic with the one budget wording instead.
 */
export function nextStatus(
  epic: {
    readonly status: EpicStatus;
    readonly iteration: number;
    readonly max_iterations: number | null;
    readonly complexity: Complexity;
  },
  event: EpicEvent,
  reason: string | null,
  blockedFrom?: EpicStatus,
): EpicMove {
  const step = transition(epic.status, event, blockedFrom);
  const budget = buildBudget(epic);
  const why =
    event === BUDGET_BLOCK && !isBudgetBlockReason(reason)
      ? budgetBlockReason(epic.iteration, budget, reason ?? 'no build iteration left')
      : reason;
  // A new plan after a block is a fresh attempt: its build iterations count from zero.
  const iteration =
    (event === 'new_plan_approved' ? 0 : epic.iteration) + (step.to === 'in_progress' && event !== 'retry' ? 1 : 0);
  if (step.to !== 'in_progress' || event === 'retry' || iteration <= budget)
    return { to: step.to, nextRole: step.nextRole, why, iteration };
  const blocked = transition('in_progress', BUDGET_BLOCK);
  return {
    to: blocked.to,
    nextRole: blocked.nextRole,
    why: budgetBlockReason(epic.iteration, budget, `${event} would start build iteration ${iteration}`),
    iteration: epic.iteration,
  };
}
