import { Disposable } from './lifecycle.ts';

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

  /** After a new snapshot: the leases still running, whose expiry should refresh the views. */
  update(leaseExpiries: readonly string[]): void {
    const now = Date.now();
    this.nextExpiry = Math.min(Infinity, ...leaseExpiries.map((x) => Date.parse(x)).filter((t) => t > now));
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
