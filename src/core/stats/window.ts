import { UsageError } from '../errors.ts';
import { STATS_BY, type StatsBy } from './figures.ts';

const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * The start of a stats window from `--since`: a span back from `now` (30m, 12h, 7d, 2w) or a date
 * (2026-11-01, or a full ISO time); refused with one line naming the option otherwise.
 */
export function windowStart(since: string, now: Date): string {
  const span = /^(\d{1,6})([mhdw])$/.exec(since);
  if (span) return new Date(now.getTime() - Number(span[1]) * UNIT_MS[span[2]!]!).toISOString();
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+Z?)?$/.test(since) && Number.isFinite(Date.parse(since)))
    return new Date(Date.parse(since)).toISOString();
  throw new UsageError(
    'bad_option',
    `--since needs a span like 30m, 12h, 7d or 2w, or a date like 2026-11-01, got '${since}'`,
  );
}

/** `--by`'s value, refused with one line when it is not a grouping stats knows. */
export function statsBy(value: string | undefined): StatsBy {
  if (value === undefined) return 'preset';
  if ((STATS_BY as readonly string[]).includes(value)) return value as StatsBy;
  throw new UsageError('bad_option', `--by must be one of ${STATS_BY.join(', ')}, got '${value}'`);
}
