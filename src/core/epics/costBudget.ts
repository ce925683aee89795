/**
 * Cost budgets (docs/budgets.md): what an epic, and a day of the whole store, may spend on agents.
 * Pure: the spend comes from the runs' recorded usage, the limits from `.springfield/config.json`'s
 * `budget` and the epic's own override; every command and the scheduler word a spent budget here.
 */

/** `budget` in config.json: every limit optional; none set means no limit. */
export interface BudgetConfig {
  readonly epicUsd?: number;
  readonly dailyUsd?: number;
  readonly epicTokens?: number;
  readonly epicMinutes?: number;
}

/** An epic's own limits (`epic create --budget-usd`, `epic budget`); null: the config's. */
export interface EpicBudgetOverride {
  readonly usd: number | null;
  readonly tokens: number | null;
  readonly minutes: number | null;
}

/** What an epic's agent runs have spent: reported cost, reported tokens (in + out), and the minutes of runs that reported no cost. */
export interface Spend {
  readonly usd: number;
  readonly tokens: number;
  readonly minutes: number;
}

export type BudgetKind = 'usd' | 'tokens' | 'minutes';
export const BUDGET_KINDS: readonly BudgetKind[] = ['usd', 'tokens', 'minutes'];

/** One limit against its spend, and where the limit comes from. */
export interface BudgetLine {
  readonly kind: BudgetKind;
  readonly spent: number;
  /** null: no limit. */
  readonly limit: number | null;
  readonly source: 'epic' | 'config' | null;
}

/** The reason code of a spent budget's block; it is also the event's name. */
export const COST_BLOCK = 'budget_exhausted';

/** The epic's own limits as its row keeps them. */
export function budgetOverrideOf(e: {
  readonly budget_usd?: number | null;
  readonly budget_tokens?: number | null;
  readonly budget_minutes?: number | null;
}): EpicBudgetOverride {
  return { usd: e.budget_usd ?? null, tokens: e.budget_tokens ?? null, minutes: e.budget_minutes ?? null };
}

/** The epic's limits: its own where set, else the config's. */
export function epicBudgetLines(
  spend: Spend,
  override: EpicBudgetOverride | undefined,
  config: BudgetConfig | undefined,
): BudgetLine[] {
  const fromConfig: Record<BudgetKind, number | undefined> = {
    usd: config?.epicUsd,
    tokens: config?.epicTokens,
    minutes: config?.epicMinutes,
  };
  return BUDGET_KINDS.map((kind) => {
    const own = override?.[kind] ?? null;
    const limit = own ?? fromConfig[kind] ?? null;
    return { kind, spent: spend[kind], limit, source: own !== null ? 'epic' : limit !== null ? 'config' : null };
  });
}

/** The first limit the spend has reached (at or past it), or null. */
export function spentLine(lines: readonly BudgetLine[]): BudgetLine | null {
  return lines.find((l) => l.limit !== null && l.spent >= l.limit) ?? null;
}

/** `$20`, `$20.40`, `$0.0123` for amounts under a cent. */
export function formatUsd(n: number): string {
  if (Number.isInteger(n)) return `$${n}`;
  return Math.abs(n) < 0.01 && n !== 0 ? `$${Number(n.toPrecision(2))}` : `$${n.toFixed(2)}`;
}

function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** A limit of agent minutes as it was set: `240`, `0.2`, `0.25`. */
function minutesLimit(n: number): string {
  return String(Number(n.toPrecision(3)));
}

/**
 * Agent minutes spent, to a tenth and never rounded across the limit (`0.9 of 1`, `0.3 of 0.25`);
 * a spend too small for a tenth reads `under 0.1` (never `0.0`; docs/budgets.md).
 */
export function minutesSpent(n: number, limit: number | null = null): string {
  if (Number.isInteger(n)) return String(n);
  if (n > 0 && n < 0.1 && (limit === null || n < limit))
    return `under ${limit !== null && limit < 0.1 ? minutesLimit(limit) : '0.1'}`;
  const tenth = (x: number) => Math.round(x * 10) / 10;
  let r = tenth(n);
  if (limit !== null && n < limit && r >= limit) r = Math.floor(n * 10) / 10;
  if (limit !== null && n >= limit && r < limit) r = Math.ceil(n * 10) / 10;
  return String(tenth(r));
}

/** `$20.40 of $20`, `2,013,400 of 2,000,000 tokens`, `241.5 of 240 agent minutes`, `under 0.1 of 0.2 agent minutes`; without a limit, only what was spent. */
export function spendText(line: BudgetLine): string {
  const of = line.limit === null ? '' : ' of ';
  switch (line.kind) {
    case 'usd':
      return `${formatUsd(line.spent)}${of}${line.limit === null ? '' : formatUsd(line.limit)}`;
    case 'tokens':
      return `${count(line.spent)}${of}${line.limit === null ? '' : count(line.limit)} tokens`;
    case 'minutes':
      return `${minutesSpent(line.spent, line.limit)}${of}${line.limit === null ? '' : minutesLimit(line.limit)} agent minutes`;
  }
}

/** `budget_exhausted: $20.40 of $20`: the epic's status reason while it is paused. */
export function costBlockReason(line: BudgetLine): string {
  return `${COST_BLOCK}: ${spendText(line)}`;
}

/** True for a reason written by costBlockReason. */
export function isCostBlockReason(reason: string | null | undefined): boolean {
  return (reason ?? '').startsWith(`${COST_BLOCK}: `);
}

/** The option of `epic budget` that raises this limit. */
export const BUDGET_OPTION: Readonly<Record<BudgetKind, string>> = {
  usd: '--usd',
  tokens: '--tokens',
  minutes: '--minutes',
};

/** What a person does about a paused epic, in one line. */
export function resumeHint(epicId: string, kind: BudgetKind): string {
  return `paused: raise its budget (springfield epic budget ${epicId} ${BUDGET_OPTION[kind]} N), then springfield epic retry ${epicId}`;
}

/** Today's spend of the whole store against the daily limit (UTC day). */
export interface DailySpend {
  /** YYYY-MM-DD, UTC. */
  readonly day: string;
  readonly usd: number;
}

/** True when today's spend has reached the daily limit. */
export function dailySpent(today: DailySpend | undefined, config: BudgetConfig | undefined): boolean {
  return today !== undefined && config?.dailyUsd !== undefined && today.usd >= config.dailyUsd;
}

/** The scheduler's waiting line while the daily budget is spent. */
export function dailyWaitMessage(today: DailySpend, limit: number): string {
  return `waiting: daily budget spent: ${formatUsd(today.usd)} of ${formatUsd(limit)}; runs start again tomorrow (UTC) or when the budget is raised`;
}

/** The start of the UTC day of an ISO time, and of the next. */
export function utcDayOf(iso: string): { day: string; start: string; next: string } {
  const day = iso.slice(0, 10);
  const next = new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString();
  return { day, start: `${day}T00:00:00.000Z`, next };
}

/** Which limit a costBlockReason names (`$…`: dollars; `… tokens`; `… agent minutes`). */
export function costBlockKind(reason: string): BudgetKind {
  return reason.endsWith(' tokens') ? 'tokens' : reason.endsWith(' agent minutes') ? 'minutes' : 'usd';
}

/** What a person reads while an epic is paused by its budget. */
export function pausedMessage(epicId: string, reason: string): string {
  return `paused — ${reason}; ${resumeHint(epicId, costBlockKind(reason)).replace(/^paused: /, '')}`;
}
