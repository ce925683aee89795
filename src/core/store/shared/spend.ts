/**
 * What agents have spent (docs/budgets.md), read from the usage the runs recorded: per epic its cost,
 * tokens and the minutes of runs that reported no cost; per UTC day the cost of every run that ended
 * in it. And an epic's own limits, which a person sets and raises.
 */
import { budgetOverrideOf, utcDayOf, type DailySpend, type EpicBudgetOverride } from '../../epics/costBudget.ts';
import type { EpicRow } from '../epicTypes.ts';
import type { EpicSpend, SpendReport } from '../runTypes.ts';
import type { Actor } from '../types.ts';
import { requireEpic } from './epics.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import * as refuse from './refusals.ts';

export type { EpicSpend, SpendReport };

/** One epic's spend as the backend sums it: the wall time of runs without a cost in whole milliseconds (exact on both backends). */
export interface EpicSpendRow {
  readonly epic_id: string;
  readonly usd: number;
  readonly tokens: number;
  readonly ms: number;
  readonly runs: number;
}

export interface SpendPort {
  /**
   * Per epic (one, or all), over its ended agent runs (sessions, setup left out): the cost reported,
   * the tokens reported (in + out), and the wall-time milliseconds of runs that reported no cost.
   */
  spendByEpic(epicId?: string): Io<EpicSpendRow[]>;
  /** The cost reported by runs that ended at or after `since` (ISO 8601). */
  costSince(since: string): Io<number>;
  /** Sets the epic's own limits (null: the config's). */
  setEpicBudgetRow(id: string, budget: EpicBudgetOverride): Io<void>;
}

/** Each epic's spend (one, or every epic with an ended agent run), minutes counted from the summed milliseconds. */
export function* epicSpends(port: StorePort, epicId?: string): Op<EpicSpend[]> {
  return (yield* call(port.spendByEpic(epicId))).map(({ ms, ...r }) => ({
    epic_id: r.epic_id,
    usd: r.usd,
    tokens: r.tokens,
    minutes: ms / 60_000,
    runs: r.runs,
  }));
}

/** Today's spend of the whole store, by the transaction's clock. */
export function* todaySpend(port: StorePort): Op<DailySpend> {
  const { day, start } = utcDayOf(port.now);
  return { day, usd: yield* call(port.costSince(start)) };
}

/** Each epic's spend (every epic with an ended agent run, or just `epicId`'s, zero when it has none) and today's. */
export function* spendReport(port: StorePort, epicId?: string): Op<SpendReport> {
  if (epicId !== undefined) yield* requireEpic(port, epicId);
  const rows = yield* epicSpends(port, epicId);
  const epics =
    epicId !== undefined && rows.length === 0 ? [{ epic_id: epicId, usd: 0, tokens: 0, minutes: 0, runs: 0 }] : rows;
  return { epics, today: yield* todaySpend(port) };
}

/**
 * Sets some of an epic's own limits (a kind left out keeps its value; null goes back to the config's),
 * recording the change with what it was; refused for a limit that is not a positive number.
 */
export function* setEpicBudget(
  port: StorePort,
  epicId: string,
  change: Partial<EpicBudgetOverride>,
  actor: Actor,
): Op<EpicRow> {
  const epic = yield* requireEpic(port, epicId, true);
  for (const [kind, value] of Object.entries(change)) {
    if (value !== null && value !== undefined && !(Number.isFinite(value) && value > 0))
      throw refuse.badBudget(kind, value);
  }
  const before = budgetOverrideOf(epic);
  const after: EpicBudgetOverride = {
    usd: change.usd !== undefined ? change.usd : before.usd,
    tokens: change.tokens !== undefined ? change.tokens : before.tokens,
    minutes: change.minutes !== undefined ? change.minutes : before.minutes,
  };
  yield* call(port.setEpicBudgetRow(epicId, after));
  yield* call(
    port.writeEvent(actor, {
      entity: 'epic',
      action: 'budget',
      epicId,
      reason: 'budget set by a person',
      data: { from: before, to: after },
    }),
  );
  return yield* requireEpic(port, epicId);
}
