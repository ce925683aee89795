import {
  assertBudgetRaised,
  budgetLine,
  configPathFor,
  type EpicBudgetOverride,
  type EpicBudgetView,
  epicBudgetView,
  isCostBlockReason,
  loadRoleCommands,
  type Store,
  type EpicRow,
  UsageError,
} from '../../core/index.ts';
import { flag, str } from '../args.ts';
import { arg, EPIC_ARG, type Command } from '../command.ts';
import type { CliContext } from '../cliContext.ts';
import { output } from '../output.ts';
import { planningStore } from '../planning.ts';

/** `--usd 20`, `--tokens 2000000`, `--minutes 90`: a positive number (tokens: whole). */
export function budgetValue(text: string | undefined, option: string, whole = false): number | undefined {
  if (text === undefined) return undefined;
  const n = /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : NaN;
  if (!(n > 0) || !Number.isFinite(n) || (whole && !Number.isSafeInteger(n))) {
    throw new UsageError('bad_budget', `${option} needs a positive ${whole ? 'whole ' : ''}number, got '${text}'`);
  }
  return n;
}

/** The limits `epic create --budget-*` gives an epic of its own; empty when none is given. */
export function budgetOptions(ctx: CliContext, prefix: string): Partial<EpicBudgetOverride> {
  const usd = budgetValue(str(ctx.args, `${prefix}usd`), `--${prefix}usd`);
  const tokens = budgetValue(str(ctx.args, `${prefix}tokens`), `--${prefix}tokens`, true);
  const minutes = budgetValue(str(ctx.args, `${prefix}minutes`), `--${prefix}minutes`);
  return {
    ...(usd !== undefined ? { usd } : {}),
    ...(tokens !== undefined ? { tokens } : {}),
    ...(minutes !== undefined ? { minutes } : {}),
  };
}

/** The budget section of `epic show` and `epic budget`'s JSON. */
export function budgetJson(view: EpicBudgetView) {
  const line = (l: EpicBudgetView['usd']) => ({ spent: l.spent, limit: l.limit, limit_from: l.source });
  return {
    usd: line(view.usd),
    tokens: line(view.tokens),
    minutes: line(view.minutes),
    spent: view.spent,
    runs: view.runs,
    today: view.today,
  };
}

/** Reads the epic's budget view with the config's limits. */
export async function budgetOf(ctx: CliContext, store: Store, epic: EpicRow): Promise<EpicBudgetView> {
  return epicBudgetView(store, epic, loadRoleCommands(configPathFor(ctx.stateFile)).budget);
}

/** Before a retry: refused while the epic is paused by a budget that is still spent. */
export async function checkBudgetBeforeRetry(ctx: CliContext, store: Store, epic: EpicRow): Promise<void> {
  await assertBudgetRaised(store, epic, loadRoleCommands(configPathFor(ctx.stateFile)).budget);
}

export const epicBudget: Command = {
  name: 'epic budget',
  summary: "show an epic's spend against its budget, or set its own budget (raise it to resume a paused epic)",
  positionals: [EPIC_ARG],
  options: [
    {
      name: 'usd',
      type: 'string',
      placeholder: 'N',
      description: 'the dollars its agents may spend (their reported cost)',
    },
    { name: 'tokens', type: 'string', placeholder: 'N', description: 'the tokens (in + out) its agents may use' },
    {
      name: 'minutes',
      type: 'string',
      placeholder: 'N',
      description: 'the minutes of agent time its runs that report no cost may take',
    },
    {
      name: 'clear',
      type: 'boolean',
      description: 'drop its own limits: the "budget" of .springfield/config.json applies again',
    },
  ],
  details: [
    'Without an option, shows what its agents spent against each limit and what all epics spent today (UTC).',
    'A limit given here is the epic\'s own and wins over "epicUsd", "epicTokens" and "epicMinutes" of config.json.',
    'An epic paused by its budget (blocked: budget_exhausted) resumes with springfield epic retry once the budget',
    'is above what it spent. The daily budget ("dailyUsd") is the config\'s only. See docs/budgets.md.',
  ].join('\n'),
  async run(ctx) {
    const change: Partial<EpicBudgetOverride> = flag(ctx.args, 'clear')
      ? { usd: null, tokens: null, minutes: null }
      : budgetOptions(ctx, '');
    if (flag(ctx.args, 'clear') && Object.keys(budgetOptions(ctx, '')).length > 0)
      throw new UsageError('bad_option', '--clear cannot be given with --usd, --tokens or --minutes');
    const setting = Object.keys(change).length > 0;
    const store = planningStore(ctx, setting ? 'write' : 'read');
    const epic = setting ? await store.setEpicBudget(arg(ctx, 0), change, ctx.actor) : await store.getEpic(arg(ctx, 0));
    const view = await budgetOf(ctx, store, epic);
    const paused = epic.status === 'blocked' && isCostBlockReason(epic.status_reason);
    const next = !paused
      ? ''
      : view.spent === null
        ? `\nit is paused (${epic.status_reason ?? ''}): resume it with springfield epic retry ${epic.id}`
        : `\nit is paused (${epic.status_reason ?? ''}) and its budget is still spent: raise it further before springfield epic retry ${epic.id}`;
    return output(
      {
        epic_id: epic.id,
        status: epic.status,
        status_reason: epic.status_reason,
        changed: setting,
        budget: budgetJson(view),
      },
      `${epic.id}${setting ? ' budget set' : ''}: ${budgetLine(view)}${next}`,
    );
  },
};
