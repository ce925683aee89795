/**
 * An epic's spend against its budget, as a person reads it (`epic show`, `epic budget`), and the
 * check a retry of a paused epic passes first (docs/budgets.md): the store's spend, the config's limits.
 */
import {
  BUDGET_OPTION,
  budgetOverrideOf,
  epicBudgetLines,
  formatUsd,
  isCostBlockReason,
  spendText,
  spentLine,
  type BudgetConfig,
  type BudgetKind,
  type BudgetLine,
} from '../epics/costBudget.ts';
import { RefusedError } from '../errors.ts';
import type { EpicRow, Store } from '../store/index.ts';

/** An epic's budget, per limit, with today's spend of the whole store against the daily budget. */
export interface EpicBudgetView {
  readonly usd: BudgetLine;
  readonly tokens: BudgetLine;
  readonly minutes: BudgetLine;
  /** The limit its spend has reached (the next run pauses it), or null. */
  readonly spent: BudgetKind | null;
  /** Agent runs that ended, counted or not. */
  readonly runs: number;
  readonly today: {
    readonly day: string;
    readonly usd: number;
    readonly limit: number | null;
    readonly spent: boolean;
  };
}

/** Reads the epic's spend and today's, and puts them against the epic's limits and the config's. */
export async function epicBudgetView(
  store: Store,
  epic: EpicRow,
  config: BudgetConfig | undefined,
): Promise<EpicBudgetView> {
  const report = await store.spend(epic.id);
  const s = report.epics.find((e) => e.epic_id === epic.id) ?? { usd: 0, tokens: 0, minutes: 0, runs: 0 };
  const lines = epicBudgetLines(s, budgetOverrideOf(epic), config);
  const [usd, tokens, minutes] = lines as [BudgetLine, BudgetLine, BudgetLine];
  const daily = config?.dailyUsd ?? null;
  return {
    usd,
    tokens,
    minutes,
    spent: spentLine(lines)?.kind ?? null,
    runs: s.runs,
    today: { ...report.today, limit: daily, spent: daily !== null && report.today.usd >= daily },
  };
}

/** `spend: $12.40 of $20 (epic) · 1,200 tokens · 3.5 agent minutes · today $40 of $100 (all epics)`. */
export function budgetLine(view: EpicBudgetView): string {
  const part = (l: BudgetLine) => `${spendText(l)}${l.source === 'epic' ? ' (its own)' : ''}`;
  const parts = [part(view.usd), part(view.tokens), part(view.minutes)];
  const today = `today ${formatUsd(view.today.usd)}${view.today.limit !== null ? ` of ${formatUsd(view.today.limit)}` : ''} (UTC, all epics)`;
  return `spend: ${parts.join(' · ')} · ${today}${view.spent ? ' — budget spent: its next run pauses it' : ''}`;
}

/**
 * Refuses to retry an epic paused by its budget while the budget is still spent: the scheduler would
 * pause it again before any run, so a person raises it first.
 */
export async function assertBudgetRaised(store: Store, epic: EpicRow, config: BudgetConfig | undefined): Promise<void> {
  if (epic.status !== 'blocked' || !isCostBlockReason(epic.status_reason)) return;
  const view = await epicBudgetView(store, epic, config);
  if (view.spent === null) return;
  const line = view[view.spent];
  throw new RefusedError(
    'budget_still_spent',
    `${epic.id} is still paused: it has spent ${spendText(line)}; raise its budget first (springfield epic budget ${epic.id} ${BUDGET_OPTION[view.spent]} N, or "budget" in .springfield/config.json), then retry`,
  );
}
