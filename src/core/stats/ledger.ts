/**
 * The outcome ledger (docs/stats.md): the store's rows turned into facts per run and per step — a run's
 * preset, model and kind of step; a step's builder, whether its epic merged, what it cost (its own
 * sessions plus an equal share of its epic's sessions on no step), and whether its epic passed review
 * the first time. The figures (figures.ts) are sums over these facts.
 */
import { BUILDING_ROLE } from '../../shared/roles.ts';
import type { StatsRows, StatsRunRow, StatsStepRow } from '../store/shared/stats.ts';
import { runAgent } from './runPreset.ts';
import { filesOf, stepArea, stepSize, type StepArea, type StepSize } from './stepKind.ts';

/** Cost, tokens, agent minutes and sessions: what a run spends and a step is charged. */
export interface Spend {
  cost: number;
  tokens: number;
  minutes: number;
  sessions: number;
}

export interface LedgerRun {
  readonly row: StatsRunRow;
  readonly preset: string;
  readonly model: string;
  /** The area of the run's step; `epic` for a session on no step (planning, review). */
  readonly kind: StepArea | 'epic';
  /** It ended inside the window. */
  readonly inWindow: boolean;
  /** A builder session started after its epic's first implementation_failure. */
  readonly rework: boolean;
  readonly spend: Spend;
}

export interface LedgerStep {
  readonly epic_id: string;
  readonly plan_path: string;
  readonly anchor: string;
  readonly title: string;
  readonly kind: StepArea;
  readonly size: StepSize;
  readonly items: number;
  /** The preset and model of the builder session that last succeeded on it (else the last one); `person` when none ran. */
  readonly preset: string;
  readonly model: string;
  /** Its epic merged inside the window (and it is completed). */
  readonly merged: boolean;
  readonly merged_at: string | null;
  /** Hours from its epic's start to its merge. */
  readonly hours_to_merge: number | null;
  /** What it was charged, in all and per role of the sessions charged. */
  readonly spend: Spend;
  readonly byRole: ReadonlyMap<string, Spend>;
  /** The seed's "steps + 2 sessions" per epic, per step: 1 + 2 / the epic's steps. */
  readonly seed_sessions: number;
  /** Its epic's first review verdict is inside the window; `first_pass` when that verdict was a pass. */
  readonly reviewed: boolean;
  readonly first_pass: boolean;
  /** It merged and git shows its epic's merge reverted (reverts.ts). */
  readonly reverted: boolean;
}

export interface EpicFacts {
  readonly id: string;
  readonly title: string;
  readonly started_at: string | null;
  readonly merged_at: string | null;
  readonly first_verdict: { readonly pass: boolean; readonly at: string } | null;
  readonly first_failure_at: string | null;
  /** Failed merges for conflicts inside the window, and whether the epic merged after each. */
  readonly conflicts: { readonly met: number; readonly resolved: number };
}

export interface Ledger {
  readonly since: string | null;
  readonly read_at: string;
  readonly runs: readonly LedgerRun[];
  readonly steps: readonly LedgerStep[];
  readonly epics: ReadonlyMap<string, EpicFacts>;
  /** Each reverted epic → its reverting commit; null when git was not read. */
  readonly reverted: ReadonlyMap<string, string> | null;
}

const inWindow = (at: string, since: string | null): boolean => since === null || Date.parse(at) >= Date.parse(since);

export function zeroSpend(): Spend {
  return { cost: 0, tokens: 0, minutes: 0, sessions: 0 };
}

export function addSpend(into: Spend, s: Spend, share = 1): void {
  into.cost += s.cost * share;
  into.tokens += s.tokens * share;
  into.minutes += s.minutes * share;
  into.sessions += s.sessions * share;
}

function spendOf(r: StatsRunRow): Spend {
  return {
    cost: r.cost_usd ?? 0,
    tokens: (r.input_tokens ?? 0) + (r.output_tokens ?? 0),
    minutes: Math.max(0, Date.parse(r.ended_at) - Date.parse(r.started_at)) / 60_000,
    sessions: 1,
  };
}

function epicFacts(rows: StatsRows): Map<string, EpicFacts> {
  const out = new Map<string, EpicFacts>();
  for (const e of rows.epics) {
    const events = rows.events.filter((v) => v.epic_id === e.id && v.entity === 'epic');
    const merges = events.filter((v) => v.action === 'merged');
    const verdict = events.find((v) => v.action === 'signal_pass' || v.action === 'signal_implementation_failure');
    const mergedAt = merges.at(-1)?.at ?? null;
    const conflicts = events.filter(
      (v) => v.action === 'merge_failed' && /conflict/i.test(v.reason ?? '') && inWindow(v.at, rows.since),
    );
    out.set(e.id, {
      id: e.id,
      title: e.title,
      started_at: events.find((v) => v.action === 'start')?.at ?? null,
      merged_at: mergedAt !== null && inWindow(mergedAt, rows.since) ? mergedAt : null,
      first_verdict: verdict ? { pass: verdict.action === 'signal_pass', at: verdict.at } : null,
      first_failure_at: events.find((v) => v.action === 'signal_implementation_failure')?.at ?? null,
      conflicts: {
        met: conflicts.length,
        resolved: conflicts.filter((c) => merges.some((m) => m.id > c.id)).length,
      },
    });
  }
  return out;
}

const stepKey = (planPath: string | null, anchor: string | null) => `${planPath ?? ''}\u0000${anchor ?? ''}`;

/** The ledger of one window's rows, with the epics git shows reverted (revertedEpics) when it was read. */
export function buildLedger(rows: StatsRows, reverted: ReadonlyMap<string, string> | null = null): Ledger {
  const epics = epicFacts(rows);
  const stepRows = new Map<string, StatsStepRow>(rows.steps.map((s) => [stepKey(s.plan_path, s.anchor), s]));
  const areaOf = (s: StatsStepRow) => stepArea(filesOf(s.files), s.title);
  const runs: LedgerRun[] = rows.runs.map((row) => {
    const step = row.step_anchor ? stepRows.get(stepKey(row.plan_path, row.step_anchor)) : undefined;
    const failure = epics.get(row.epic_id)?.first_failure_at ?? null;
    return {
      row,
      ...runAgent(row.command),
      kind: step ? areaOf(step) : 'epic',
      inWindow: inWindow(row.ended_at, rows.since),
      rework: row.role === BUILDING_ROLE && failure !== null && Date.parse(row.started_at) > Date.parse(failure),
      spend: spendOf(row),
    };
  });
  const steps = rows.steps.map((s) => ledgerStep(s, rows, runs, epics, areaOf(s), reverted));
  return { since: rows.since, read_at: rows.read_at, runs, steps, epics, reverted };
}

function ledgerStep(
  s: StatsStepRow,
  rows: StatsRows,
  runs: readonly LedgerRun[],
  epics: ReadonlyMap<string, EpicFacts>,
  kind: StepArea,
  reverted: ReadonlyMap<string, string> | null,
): LedgerStep {
  const epic = epics.get(s.epic_id);
  const siblings = rows.steps.filter((x) => x.epic_id === s.epic_id).length;
  const own = runs.filter((r) => r.row.plan_path === s.plan_path && r.row.step_anchor === s.anchor);
  const builds = own.filter((r) => r.row.role === BUILDING_ROLE);
  const builder = builds.filter((r) => r.row.status === 'succeeded').at(-1) ?? builds.at(-1);
  const spend = zeroSpend();
  const byRole = new Map<string, Spend>();
  const charge = (r: LedgerRun, share: number) => {
    addSpend(spend, r.spend, share);
    const role = byRole.get(r.row.role) ?? zeroSpend();
    addSpend(role, r.spend, share);
    byRole.set(r.row.role, role);
  };
  for (const r of own) charge(r, 1);
  for (const r of runs) if (r.row.epic_id === s.epic_id && r.row.step_anchor === null) charge(r, 1 / siblings);
  const mergedAt = epic?.merged_at ?? null;
  const verdict = epic?.first_verdict ?? null;
  const reviewed = verdict !== null && inWindow(verdict.at, rows.since);
  return {
    epic_id: s.epic_id,
    plan_path: s.plan_path,
    anchor: s.anchor,
    title: s.title,
    kind,
    size: stepSize(s.items),
    items: s.items,
    preset: builder?.preset ?? 'person',
    model: builder?.model ?? 'person',
    merged: mergedAt !== null && s.status === 'completed',
    merged_at: mergedAt,
    hours_to_merge:
      mergedAt !== null && epic?.started_at ? (Date.parse(mergedAt) - Date.parse(epic.started_at)) / 3_600_000 : null,
    spend,
    byRole,
    seed_sessions: 1 + 2 / siblings,
    reviewed,
    first_pass: reviewed && verdict.pass,
    reverted: mergedAt !== null && s.status === 'completed' && (reverted?.has(s.epic_id) ?? false),
  };
}
