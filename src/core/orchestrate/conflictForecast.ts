/**
 * The scheduler's memory of conflicts ahead (docs/files.md): after each build, the epic's branch is
 * test-merged against the default branch and the other epics under way; what was found is logged
 * once, kept for `between` (decide() merges the epic that goes first first) and forgotten with the
 * scheduler. `epic show` and the dry run ask git again instead.
 */
import { UNDER_WAY } from '../scheduler/filesRule.ts';
import type { EpicSnapshot } from '../scheduler/types.ts';
import { conflictsAhead, describeConflicts, type ConflictAhead } from './conflictsAhead.ts';
import type { ConflictWith } from './stepFiles.ts';

export class ConflictForecast {
  private readonly ahead = new Map<string, ConflictAhead[]>();
  private underWay: string[] = [];
  private started = false;

  private readonly mainRoot: string;
  private readonly logOnce: (key: string, line: string) => void;

  constructor(mainRoot: string, logOnce: (key: string, line: string) => void) {
    this.mainRoot = mainRoot;
    this.logOnce = logOnce;
  }

  /** Each pass: which epics are under way; at the first, every one of them is test-merged, so a restarted scheduler knows what the last one knew. */
  async start(epics: readonly EpicSnapshot[]): Promise<void> {
    this.underWay = epics
      .filter((e) => UNDER_WAY.includes(e.status))
      .map((e) => e.id)
      .sort();
    if (this.started) return;
    this.started = true;
    for (const id of this.underWay) await this.after(id);
  }

  /** After a build of `epicId`: its conflicts ahead, recorded for both sides of each pair of epics, and logged when new. */
  async after(epicId: string): Promise<readonly ConflictAhead[]> {
    const found = await conflictsAhead(this.mainRoot, epicId, this.underWay, (why) =>
      this.logOnce(`forecast:${why}`, why),
    );
    this.ahead.set(epicId, found);
    for (const other of this.underWay) {
      if (other === epicId) continue;
      const theirs = (this.ahead.get(other) ?? []).filter((c) => c.with !== epicId);
      const pair = found.find((c) => c.with === other);
      this.ahead.set(other, pair ? [...theirs, { with: epicId, files: pair.files }] : theirs);
    }
    const line = describeConflicts(epicId, found);
    if (line)
      this.logOnce(
        `forecast:${line}`,
        `${line} (a test merge, nothing touched; of two epics the one that goes first merges first, the other rebases after)`,
      );
    return found;
  }

  /** What the last test merges found, per epic under way (those without a conflict have an empty list): what the editor shows. */
  get all(): ReadonlyMap<string, readonly ConflictAhead[]> {
    return new Map(this.underWay.map((id) => [id, this.ahead.get(id) ?? []]));
  }

  /** Per epic under way, the other epics under way its branch conflicts with: what decide() orders merges by. */
  between(epics: readonly EpicSnapshot[]): Map<string, ConflictWith[]> {
    const ids = new Set(epics.filter((e) => UNDER_WAY.includes(e.status)).map((e) => e.id));
    const out = new Map<string, ConflictWith[]>();
    for (const id of ids)
      out.set(
        id,
        (this.ahead.get(id) ?? []).filter((c) => ids.has(c.with)).map((c) => ({ epicId: c.with, files: c.files })),
      );
    return out;
  }
}
