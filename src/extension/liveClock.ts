import { Disposable } from './lifecycle.ts';
import { LEASE_WARNING_MS } from './model/needsYou.ts';
import type { Snapshot } from './model/snapshot.ts';

/** Something whose text moves with the clock: it redraws for `now` and says when it next changes. */
export interface Ticking {
  tick(now: Date): number;
}

/**
 * One timer for every clock-bound text (lease countdowns, "running 3m", "5m ago"): it sleeps until
 * the earliest moment any of them changes, and not at all when nothing on screen moves with the
 * clock. When a lease it counts down runs out, it asks for a fresh snapshot so icons and status follow.
 */
export class LiveClock extends Disposable {
  private timer: NodeJS.Timeout | undefined;
  private nextExpiry = Infinity;
  private readonly targets: readonly Ticking[];
  private readonly onExpiry: () => void;

  constructor(targets: readonly Ticking[], onExpiry: () => void) {
    super();
    this.targets = targets;
    this.onExpiry = onExpiry;
    this.register({ dispose: () => clearTimeout(this.timer) });
  }

  /** After a new snapshot: the moments that should refresh the views (wakeTimes). */
  update(moments: readonly string[]): void {
    const now = Date.now();
    this.nextExpiry = Math.min(Infinity, ...moments.map((x) => Date.parse(x)).filter((t) => t > now));
    this.run();
  }

  /** A clock-bound text came on screen: look again now, whatever the timer was set for. */
  wake(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), 0);
  }

  private run(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const now = new Date();
    if (now.getTime() >= this.nextExpiry) {
      this.nextExpiry = Infinity;
      this.onExpiry();
    }
    const wait = Math.min(...this.targets.map((t) => t.tick(now)), this.nextExpiry - now.getTime() + 1);
    if (!Number.isFinite(wait)) return;
    this.timer = setTimeout(() => this.run(), Math.min(Math.max(wait, 200), 3600_000));
  }
}

/**
 * When the views must refresh though the store has not changed: at each lease's end, ten minutes
 * before a person's (when it joins Needs you), and at each preset's usage-limit reset.
 */
export function wakeTimes(s: Snapshot, limits: readonly { until: string }[]): string[] {
  const leases = s.plans
    .flatMap((p) => p.steps.flatMap((st) => [st, ...st.substeps]))
    .filter((st) => st.status === 'claimed' || st.status === 'in_progress');
  return limits
    .map((l) => l.until)
    .concat(
      leases.flatMap((st) =>
        st.lease_expires_at
          ? [
              st.lease_expires_at,
              ...(st.agent ? [] : [new Date(Date.parse(st.lease_expires_at) - LEASE_WARNING_MS).toISOString()]),
            ]
          : [],
      ),
    );
}
