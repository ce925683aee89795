/**
 * What `springfield stats` reads (docs/stats.md): the ended agent sessions, the epic events that say
 * when an epic started, was reviewed and merged, the top-level steps of epics' plans with their files
 * and item counts, and the epics. Figures are made from these rows by src/core/stats, never here.
 */
import type { Actor } from '../types.ts';
import { requireEpic } from './epics.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';

/** An ended agent session (setup runs are none). `command` is the JSON argv the run was started with. */
export interface StatsRunRow {
  readonly id: number;
  readonly epic_id: string;
  readonly plan_path: string | null;
  readonly step_anchor: string | null;
  readonly role: string;
  readonly iteration: number;
  readonly command: string;
  readonly status: string;
  readonly started_at: string;
  readonly ended_at: string;
  readonly cost_usd: number | null;
  readonly input_tokens: number | null;
  readonly output_tokens: number | null;
}

/** An epic event stats read: `start`, review verdicts, merges and failed merges, and routing choices. */
export interface StatsEventRow {
  readonly id: number;
  readonly at: string;
  readonly epic_id: string;
  readonly entity: string;
  readonly action: string;
  readonly agent: string | null;
  readonly step_anchor: string | null;
  readonly reason: string | null;
}

/** A top-level step of an epic's plan: its declared files (a JSON array of globs, or null) and its items (with its substeps'). */
export interface StatsStepRow {
  readonly epic_id: string;
  readonly plan_path: string;
  readonly anchor: string;
  readonly title: string;
  readonly status: string;
  readonly files: string | null;
  readonly items: number;
}

export interface StatsEpicRow {
  readonly id: string;
  readonly title: string;
  readonly status: string;
}

/** Everything the figures of one window are made from. */
export interface StatsRows {
  /** The store's time when read: the window's end. */
  readonly read_at: string;
  readonly since: string | null;
  readonly runs: readonly StatsRunRow[];
  readonly events: readonly StatsEventRow[];
  readonly steps: readonly StatsStepRow[];
  readonly epics: readonly StatsEpicRow[];
}

/** The epic events stats read (entity `epic`), and the routing choices (entity `route`). */
export const STATS_EPIC_ACTIONS = [
  'start',
  'signal_pass',
  'signal_implementation_failure',
  'merged',
  'merge_failed',
] as const;

export interface StatsPort {
  /**
   * Ended agent sessions that ended at or after `since` (all with null), and every session of an epic
   * merged at or after `since`, oldest first.
   */
  statsRuns(since: string | null): Io<StatsRunRow[]>;
  /** Every event of STATS_EPIC_ACTIONS and every routing choice, oldest first (the window is applied by the figures). */
  statsEvents(): Io<StatsEventRow[]>;
  /** The top-level steps of every plan that belongs to an epic. */
  statsSteps(): Io<StatsStepRow[]>;
}

/** The rows of one window, read in one transaction. */
export function* statsRows(port: StorePort, since: string | null): Op<StatsRows> {
  return {
    read_at: port.now,
    since,
    runs: yield* call(port.statsRuns(since)),
    events: yield* call(port.statsEvents()),
    steps: yield* call(port.statsSteps()),
    epics: (yield* call(port.listEpics())).map((e) => ({ id: e.id, title: e.title, status: e.status })),
  };
}

/** A routing choice in the audit log (entity `route`, action `choose`), on an epic that must exist. */
export function* recordRoute(
  port: StorePort,
  epicId: string,
  stepAnchor: string | null,
  actor: Actor,
  reason: string,
  data: Record<string, unknown>,
): Op<void> {
  yield* requireEpic(port, epicId);
  yield* call(port.writeEvent(actor, { entity: 'route', action: 'choose', epicId, stepAnchor, reason, data }));
}
