/**
 * The dashboard's Stats view model (docs/stats.md): from the outcome ledger, the three charts a person
 * reads at a glance — cost per merged step per preset by week, first-pass acceptance per preset and
 * kind of step, sessions per merged step per preset — with the numbers each is drawn from.
 */
import { buildLedger, groupFigures, type Ledger, type LedgerStep } from '../../core/stats/index.ts';
import type { StatsRows } from '../../core/store/shared/stats.ts';
import type { StatsDto } from '../../protocol/messages.ts';

/** The weeks the view covers. */
export const STATS_WEEKS = 8;
const DAY_MS = 86_400_000;

/** The view's window: the Monday (UTC) STATS_WEEKS − 1 weeks before `now`'s week. */
export function statsSince(now: Date): string {
  return new Date(Date.parse(weekOf(now.toISOString())) - (STATS_WEEKS - 1) * 7 * DAY_MS).toISOString();
}

/** The Monday (UTC, YYYY-MM-DD) of the week holding `iso`. */
export function weekOf(iso: string): string {
  const d = new Date(iso);
  const monday = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - ((d.getUTCDay() + 6) % 7) * DAY_MS;
  return new Date(monday).toISOString().slice(0, 10);
}

const sortedKeys = <T>(items: readonly T[], key: (t: T) => string): string[] => [...new Set(items.map(key))].sort();

/** The view's data from the rows of its window. */
export function statsData(rows: StatsRows): StatsDto {
  const ledger = buildLedger(rows);
  const merged = ledger.steps.filter((s) => s.merged);
  const presets = sortedKeys(
    ledger.steps.filter((s) => s.merged || s.reviewed),
    (s) => s.preset,
  );
  return {
    since: rows.since ?? '',
    costOverTime: costOverTime(ledger, merged),
    acceptance: presets.flatMap((preset) =>
      sortedKeys(
        ledger.steps.filter((s) => s.preset === preset && s.reviewed),
        (s) => s.kind,
      ).map((kind) => {
        const fp = figuresOf(ledger, (s) => s.preset === preset && s.kind === kind).first_pass;
        return { preset, kind, accepted: fp.accepted, reviewed: fp.reviewed, rate: fp.rate ?? 0 };
      }),
    ),
    sessions: presets
      .map((preset) => ({ preset, f: figuresOf(ledger, (s) => s.preset === preset) }))
      .filter(({ f }) => f.merged_steps > 0)
      .map(({ preset, f }) => ({
        preset,
        steps: f.merged_steps,
        perStep: f.sessions_per_merged_step ?? 0,
        seed: f.seed_sessions_per_merged_step ?? 0,
      })),
  };
}

function figuresOf(ledger: Ledger, which: (s: LedgerStep) => boolean) {
  return groupFigures('', ledger, [], ledger.steps.filter(which));
}

function costOverTime(ledger: Ledger, merged: readonly LedgerStep[]): StatsDto['costOverTime'] {
  const weeks = sortedKeys(merged, (s) => weekOf(s.merged_at ?? ''));
  return {
    weeks,
    series: sortedKeys(merged, (s) => s.preset).map((preset) => ({
      preset,
      points: weeks.flatMap((week) => {
        const f = figuresOf(ledger, (s) => s.merged && s.preset === preset && weekOf(s.merged_at ?? '') === week);
        return f.merged_steps === 0 ? [] : [{ week, costPerStep: f.cost_per_merged_step ?? 0, steps: f.merged_steps }];
      }),
    })),
  };
}
