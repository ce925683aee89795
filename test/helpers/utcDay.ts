// Tests whose verdict counts today's spend (the daily budget, the dashboard's "spent today") must not
// run across UTC midnight, where the day's spend starts again from zero (docs/budgets.md). Such a
// file waits, before it starts, for a midnight closer than the span its tests may take.
import { utcDayOf } from '../../src/core/epics/costBudget.ts';

/** How long to wait, from `now`, so that `spanMs` from then on holds no UTC midnight: 0 almost always. */
export function msUntilClearOfUtcMidnight(spanMs: number, now: number): number {
  const left = Date.parse(utcDayOf(new Date(now).toISOString()).next) - now; // the store's own day
  return left > spanMs ? 0 : left + 1000;
}

/** Waits out a UTC midnight that falls within the next `spanMs` (a `before` hook: hooks have no timeout). */
export async function clearOfUtcMidnight(spanMs: number): Promise<void> {
  const wait = msUntilClearOfUtcMidnight(spanMs, Date.now());
  if (wait === 0) return;
  console.log(`# waiting ${Math.ceil(wait / 1000)} s for UTC midnight: these tests count today's spend`);
  await new Promise((resolve) => setTimeout(resolve, wait));
}
