/**
 * The figures of `springfield stats` (docs/stats.md, every definition there): per group of runs and
 * steps, and over everything. Pure: a ledger in, plain numbers out.
 */
import { BUILDING_ROLE } from '../../shared/roles.ts';
import { addSpend, type Ledger, type LedgerRun, type LedgerStep, zeroSpend } from './ledger.ts';

export const STATS_BY = ['preset', 'model', 'role', 'kind', 'epic'] as const;
export type StatsBy = (typeof STATS_BY)[number];

export interface GroupFigures {
  readonly group: string;
  readonly runs: number;
  readonly outcomes: Readonly<Record<string, number>>;
  readonly cost_usd: number;
  readonly tokens: number;
  readonly agent_minutes: number;
  readonly merged_steps: number;
  /** Merged steps whose epic's merge git shows reverted; null when git was not read. */
  readonly reverted_steps: number | null;
  readonly cost_per_merged_step: number | null;
  readonly tokens_per_merged_step: number | null;
  readonly minutes_per_merged_step: number | null;
  readonly sessions_per_merged_step: number | null;
  /** The seed's "steps + 2 sessions" per epic, per merged step of the group. */
  readonly seed_sessions_per_merged_step: number | null;
  readonly first_pass: { readonly accepted: number; readonly reviewed: number; readonly rate: number | null };
  readonly rework_sessions: number;
  readonly hours_to_merge: number | null;
  readonly conflicts: { readonly met: number; readonly resolved: number };
}

export interface StatsReport {
  readonly since: string | null;
  readonly read_at: string;
  readonly by: StatsBy;
  readonly groups: readonly GroupFigures[];
  readonly total: GroupFigures;
}

/** The group a run falls in (by role its own role; otherwise its preset, model, kind of step or epic). */
export function runGroup(r: LedgerRun, by: StatsBy): string {
  return by === 'preset'
    ? r.preset
    : by === 'model'
      ? r.model
      : by === 'role'
        ? r.row.role
        : by === 'kind'
          ? r.kind
          : r.row.epic_id;
}

/** The group a step falls in: its builder's preset or model, the builder role, its kind, its epic. */
export function stepGroup(s: LedgerStep, by: StatsBy): string {
  return by === 'preset'
    ? s.preset
    : by === 'model'
      ? s.model
      : by === 'role'
        ? BUILDING_ROLE
        : by === 'kind'
          ? s.kind
          : s.epic_id;
}

/** Rounded for reading: 4 decimals (dollars, ratios), so a figure is the same on every backend. */
export function round(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}

const per = (n: number, d: number): number | null => (d === 0 ? null : round(n / d));

/**
 * One group's figures from its runs and steps. `roleShare`: by role, a merged step's spend is the
 * role's share of it and every merged step counts (the roles' figures add up to the total).
 */
export function groupFigures(
  group: string,
  ledger: Ledger,
  runs: readonly LedgerRun[],
  steps: readonly LedgerStep[],
  roleShare: string | null = null,
): GroupFigures {
  const windowRuns = runs.filter((r) => r.inWindow);
  const outcomes: Record<string, number> = {};
  const spent = zeroSpend();
  for (const r of windowRuns) {
    outcomes[r.row.status] = (outcomes[r.row.status] ?? 0) + 1;
    addSpend(spent, r.spend);
  }
  const merged = steps.filter((s) => s.merged);
  const charged = zeroSpend();
  for (const s of merged) {
    const share = roleShare === null ? s.spend : s.byRole.get(roleShare);
    if (share) addSpend(charged, share);
  }
  const judged = roleShare === null || roleShare === BUILDING_ROLE ? steps.filter((s) => s.reviewed) : [];
  const accepted = judged.filter((s) => s.first_pass).length;
  const epicIds = new Set(merged.map((s) => s.epic_id));
  const hours = [...epicIds].map((id) => merged.find((s) => s.epic_id === id)?.hours_to_merge ?? null);
  const known = hours.filter((h): h is number => h !== null);
  const conflicts = { met: 0, resolved: 0 };
  for (const id of new Set(steps.map((s) => s.epic_id))) {
    const c = ledger.epics.get(id)?.conflicts;
    if (c) {
      conflicts.met += c.met;
      conflicts.resolved += c.resolved;
    }
  }
  return {
    group,
    runs: windowRuns.length,
    outcomes,
    cost_usd: round(spent.cost),
    tokens: round(spent.tokens),
    agent_minutes: round(spent.minutes),
    merged_steps: merged.length,
    reverted_steps: ledger.reverted === null ? null : merged.filter((s) => s.reverted).length,
    cost_per_merged_step: per(charged.cost, merged.length),
    tokens_per_merged_step: per(charged.tokens, merged.length),
    minutes_per_merged_step: per(charged.minutes, merged.length),
    sessions_per_merged_step: per(charged.sessions, merged.length),
    seed_sessions_per_merged_step: per(
      merged.reduce((n, s) => n + s.seed_sessions, 0),
      merged.length,
    ),
    first_pass: { accepted, reviewed: judged.length, rate: per(accepted, judged.length) },
    rework_sessions: windowRuns.filter((r) => r.rework).length,
    hours_to_merge: known.length === 0 ? null : round(known.reduce((a, b) => a + b, 0) / known.length),
    conflicts,
  };
}

/** The figures per group of `by` (groups sorted by name) and over everything. */
export function statsReport(ledger: Ledger, by: StatsBy): StatsReport {
  const names = new Set<string>([
    ...ledger.runs.filter((r) => r.inWindow).map((r) => runGroup(r, by)),
    ...ledger.steps.filter((s) => s.merged || s.reviewed).map((s) => stepGroup(s, by)),
  ]);
  const groups = [...names].sort().map((g) =>
    by === 'role'
      ? groupFigures(
          g,
          ledger,
          ledger.runs.filter((r) => r.row.role === g),
          ledger.steps,
          g,
        )
      : groupFigures(
          g,
          ledger,
          ledger.runs.filter((r) => runGroup(r, by) === g),
          ledger.steps.filter((s) => stepGroup(s, by) === g),
        ),
  );
  return {
    since: ledger.since,
    read_at: ledger.read_at,
    by,
    groups,
    total: groupFigures('total', ledger, ledger.runs, ledger.steps),
  };
}
