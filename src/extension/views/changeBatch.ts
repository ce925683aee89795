/**
 * What a tree tells VS Code has changed, batched (issue 36). VS Code redraws a tree only after 200 ms
 * without a change event, and redraws one event at a time, each waiting for the window to finish the
 * last: a provider that told it of every store write (agents write several times a second) kept the
 * tree from redrawing, or queued redraws faster than a loaded window made them, and rows fell tens of
 * seconds behind the store. So nothing is said when nothing changed; changes are said at most once per
 * `gapMs`, every row since the last time in one event; and the next is said only once VS Code has asked
 * for rows again (it took the last one up), or `patienceMs` later if it never asks. No vscode here.
 */
export class ChangeBatch<T> {
  private pending: Set<T> | 'all' | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private last = Number.NEGATIVE_INFINITY;
  /** An event was said and VS Code has not asked for a row since. */
  private unasked = false;
  private readonly fire: (rows: T[] | undefined) => void;
  private readonly gapMs: number;
  private readonly patienceMs: number;
  private readonly now: () => number;

  constructor(fire: (rows: T[] | undefined) => void, gapMs = 250, now: () => number = Date.now, patienceMs = 3000) {
    this.fire = fire;
    this.gapMs = gapMs;
    this.now = now;
    this.patienceMs = patienceMs;
  }

  /** Rows that changed (undefined: the whole tree); none is nothing to say. */
  add(rows: readonly T[] | undefined): void {
    if (rows !== undefined && rows.length === 0) return;
    if (rows === undefined || this.pending === 'all') this.pending = 'all';
    else this.pending = new Set([...(this.pending ?? []), ...rows]);
    this.kick();
  }

  /** VS Code asked for a row (getTreeItem, getChildren): it has taken up what was said. */
  asked(): void {
    if (!this.unasked) return;
    this.unasked = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.kick();
  }

  /** Says what is pending now. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const p = this.pending;
    this.pending = null;
    if (p === null) return;
    this.last = this.now();
    this.unasked = true;
    this.fire(p === 'all' ? undefined : [...p]);
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = null;
  }

  private kick(): void {
    if (this.timer !== undefined || this.pending === null) return;
    const wait = this.last + (this.unasked ? this.patienceMs : this.gapMs) - this.now();
    if (wait <= 0) this.flush();
    else
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (this.unasked && this.last + this.patienceMs <= this.now()) this.unasked = false;
        this.kick();
      }, wait);
  }
}
