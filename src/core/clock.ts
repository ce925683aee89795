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

/** ISO-8601 with milliseconds in UTC: sortable as text, which the lease queries rely on. */
export function iso(date: Date): string {
  return date.toISOString();
}
