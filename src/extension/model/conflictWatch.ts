/**
 * Conflicts ahead as the editor shows them (docs/files.md, docs/extension.md): the forecast of the
 * scheduler when it runs in this window, else test merges of its own for the epics under way —
 * throttled, since each `git merge-tree` is a process: at most once per `minIntervalMs`, and only when
 * the set of epics under way or a branch tip changed (tips read from the ref files, no git process).
 * Never awaited by a view: the rows show what the last test merges found. No vscode here.
 */
import {
  type ConflictAhead,
  conflictsAhead,
  defaultBranch,
  epicBranch,
  refFromFiles,
  UNDER_WAY,
} from '../../core/index.ts';
import type { Snapshot } from './snapshot.ts';

export type ConflictsAhead = ReadonlyMap<string, readonly ConflictAhead[]>;

export interface ConflictWatchOptions {
  /** The main worktree (read when needed: the store host finds the repository after activation). */
  readonly mainRoot: () => string | null;
  /** The forecast of the scheduler running in this window; undefined while it does not run here. */
  readonly forecast: () => ConflictsAhead | undefined;
  /** What this watch found changed (not called for the scheduler's forecast: its pass says so). */
  readonly onChange: () => void;
  /** The least time between two rounds of test merges; 30 s unless told. */
  readonly minIntervalMs?: number;
  /** The test merge of one epic's branch (tests give their own); core's conflictsAhead unless told. */
  readonly test?: (mainRoot: string, epicId: string, others: readonly string[]) => Promise<ConflictAhead[]>;
}

export class ConflictWatch {
  private readonly forecast: ConflictWatchOptions['forecast'];
  private readonly mainRoot: ConflictWatchOptions['mainRoot'];
  private readonly minIntervalMs: ConflictWatchOptions['minIntervalMs'];
  private readonly test: ConflictWatchOptions['test'];
  private readonly onChange: ConflictWatchOptions['onChange'];
  private found: ConflictsAhead = new Map();
  /** The epics under way and the tips their test merges were computed for; the key of the last round. */
  private doneKey = '';
  private wantedKey = '';
  private wantedIds: string[] = [];
  /** Where each branch (epic id, or the default branch's name) is now, and where it was when `found` was tested. */
  private tipsNow = new Map<string, string>();
  private tipsTested = new Map<string, string>();
  private lastRun = -Infinity;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(options: ConflictWatchOptions) {
    this.forecast = options.forecast;
    this.mainRoot = options.mainRoot;
    this.minIntervalMs = options.minIntervalMs;
    this.test = options.test;
    this.onChange = options.onChange;
  }

  /** Per epic under way, what its branch would conflict with: the scheduler's forecast, or the last round here. */
  get current(): ConflictsAhead {
    return this.forecast() ?? this.fresh();
  }

  /** What the last round found, without epics no longer under way and pairs of which either branch moved since. */
  private fresh(): ConflictsAhead {
    const still = (name: string) => this.tipsNow.has(name) && this.tipsNow.get(name) === this.tipsTested.get(name);
    return new Map(
      [...this.found]
        .filter(([id]) => this.wantedIds.includes(id))
        .map(([id, cs]) => [id, still(id) ? cs.filter((c) => still(c.with)) : []]),
    );
  }

  /** A new snapshot: cheap (ref files only); a round of test merges starts later if anything it depends on moved. */
  update(s: Snapshot): void {
    const root = this.mainRoot();
    if (!root || this.disposed) return;
    const ids = s.epics
      .filter((e) => UNDER_WAY.includes(e.status))
      .map((e) => e.id)
      .sort();
    const main = defaultBranch(root);
    this.tipsNow = new Map(ids.map((id) => [id, refFromFiles(root, `refs/heads/${epicBranch(id)}`) ?? '']));
    if (main) this.tipsNow.set(main.name, main.commit);
    this.wantedIds = ids;
    this.wantedKey = [...this.tipsNow].map(([k, v]) => `${k}=${v}`).join(' ');
    this.schedule();
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.forecast()) {
      // The scheduler's forecast is used meanwhile; once it stops, the next update test-merges afresh.
      this.doneKey = '';
      return;
    }
    if (this.running || this.timer || this.wantedKey === this.doneKey) return;
    const wait = Math.max(0, this.lastRun + (this.minIntervalMs ?? 30_000) - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.round();
    }, wait);
    this.timer.unref?.();
  }

  /** One round: each pair of branches test-merged once, and each branch against the default branch. */
  private async round(): Promise<void> {
    const root = this.mainRoot();
    if (!root || this.disposed || this.forecast()) return;
    this.running = true;
    this.lastRun = Date.now();
    const key = this.wantedKey;
    const ids = this.wantedIds;
    const tips = this.tipsNow;
    const test = this.test ?? ((r, id, others) => conflictsAhead(r, id, others));
    try {
      const out = new Map<string, ConflictAhead[]>(ids.map((id) => [id, []]));
      for (const [i, id] of ids.entries()) {
        const found = await test(root, id, ids.slice(i + 1)).catch(() => []);
        for (const c of found) {
          out.get(id)?.push(c);
          // The same conflict seen from the other branch.
          if (ids.includes(c.with)) out.get(c.with)?.push({ with: id, files: c.files });
        }
      }
      this.doneKey = key;
      this.tipsTested = tips;
      const changed = JSON.stringify([...out]) !== JSON.stringify([...this.found]);
      this.found = out;
      if (changed && !this.disposed) this.onChange();
    } finally {
      this.running = false;
    }
    this.schedule();
  }
}
