/** Time source for leases, so tests can move time without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock whose time the caller sets; for tests and for `--now`-style tooling. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(at: Date | number): void {
    this.current = typeof at === 'number' ? at : at.getTime();
  }
}

/**
 * ISO-8601 with milliseconds in UTC, exactly as `toISOString()` writes it: sortable as text, which the
 * lease queries rely on. Written out because V8's first `toISOString()` in a process sets up its
 * date cache and time zone (0.2–1 ms, more than a claim's own statements: docs/cli-cost.md); the
 * UTC fields need none of it. Years outside 0–9999 (and an invalid date, which throws) are left to
 * `toISOString()`.
 */
export function iso(date: Date): string {
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return date.toISOString();
  return (
    `${pad(year, 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}` +
    `T${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}` +
    `.${pad(date.getUTCMilliseconds(), 3)}Z`
  );
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}
