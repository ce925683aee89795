/**
 * Cost budgets in the decision (docs/budgets.md): a role's next run on an epic whose spend has reached
 * its budget does not start — the epic is paused (budget_exhausted) until a person raises the budget
 * and retries; while today's spend of the whole store has reached the daily budget, no agent starts
 * anywhere (runs under way finish). Pure: the spend comes in the snapshot, the limits in the config.
 */
import {
  costBlockReason,
  dailySpent,
  dailyWaitMessage,
  epicBudgetLines,
  spentLine,
  utcDayOf,
  type BudgetLine,
  type DailySpend,
} from '../epics/costBudget.ts';
import type { EpicAction } from './rules.ts';
import type { EpicSnapshot, SchedulerConfig } from './types.ts';
import { BUILDING_ROLE, PERSON_ROLE } from '../../shared/roles.ts';

/** The epic's limit its spend has reached, or null (no spend known, no limit, or under every limit). */
export function epicBudgetSpent(epic: EpicSnapshot, config: SchedulerConfig): BudgetLine | null {
  if (!epic.spend) return null;
  return spentLine(epicBudgetLines(epic.spend, epic.costBudget, config.budget));
}

/** The block in place of an agent run that would start with the epic's budget spent; else the action itself. */
export function gateEpicBudget(epic: EpicSnapshot, action: EpicAction, config: SchedulerConfig): EpicAction {
  if (action.kind !== 'run') return action;
  const line = epicBudgetSpent(epic, config);
  if (!line) return action;
  return {
    kind: 'transition',
    epicId: epic.id,
    event: 'budget_exhausted',
    reason: costBlockReason(line),
    data: { role: action.role, budget: line.kind, spent: line.spent, limit: line.limit, limit_from: line.source },
  };
}

/**
 * A wait in place of anything that would start an agent (a run, or an epic's start that reserves
 * Ralph's slot) while the daily budget is spent; null otherwise.
 */
export function dailyHold(
  epic: EpicSnapshot,
  action: EpicAction,
  config: SchedulerConfig,
  today: DailySpend | undefined,
): EpicAction | null {
  if (action.kind !== 'run' && action.kind !== 'start_epic') return null;
  if (!today || !dailySpent(today, config.budget)) return null;
  const limit = config.budget?.dailyUsd as number;
  return {
    kind: 'wait',
    epicId: epic.id,
    role: action.kind === 'run' && action.role !== PERSON_ROLE ? action.role : BUILDING_ROLE,
    until: utcDayOf(`${today.day}T00:00:00.000Z`).next,
    message: dailyWaitMessage(today, limit),
    dailyBudget: { ...today, limit },
  };
}
