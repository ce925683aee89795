/**
 * The scheduler's memory of conflicts ahead (docs/files.md): after each build, the epic's branch is
 * test-merged against the default branch and the other epics under way; what was found is logged
 * once, kept for `between` (decide() merges the epic that goes first first) and forgotten with the
 * scheduler. A conflict is kept only while both branches stay where they were tested and both sides
 * are still under way; when the default branch moves, every epic under way is tested again.
 * A test merge of two commits always gives the same answer, so each pair is asked of git once: when
 * main moves, only the merges with main are new, not every pair of epics (docs/files.md).
 * `epic show` and the dry run ask git again instead.
 */
import { refTips } from '../git/branchFiles.ts';
import { UNDER_WAY } from '../scheduler/filesRule.ts';
import type { EpicSnapshot } from '../scheduler/types.ts';
import { testMerges, type MergePair, type TestMerge } from '../git/mergeTree.ts';
import {
  defaultBranch,
  describeConflicts,
  epicRef,
  testConflicts,
  type ConflictAhead,
  type TestedConflict,
} from './conflictsAhead.ts';
import type { ConflictWith } from './stepFiles.ts';

export class ConflictForecast {
  private readonly ahead = new Map<string, TestedConflict[]>();
  private underWay: string[] = [];
  /** The commit of each epic under way's branch, and of the default branch (by its name), at this pass. */
  private tips = new Map<string, string | null>();
  private mainName: string | null = null;
  private mainTested: string | null | undefined;
  /** What git answered, by `ours theirs` commits; pairs of commits no branch is at any more are dropped each pass. */
  private readonly merges = new Map<string, TestMerge>();

  private readonly mainRoot: string;
  private readonly logOnce: (key: string, line: string) => void;

  constructor(mainRoot: string, logOnce: (key: string, line: string) => void) {
    this.mainRoot = mainRoot;
    this.logOnce = logOnce;
  }

  /**
   * Each pass: which epics are under way and where their branches are. At the first pass, and whenever
   * the default branch moved, every one of them is test-merged, so a restarted scheduler knows what
   * the last one knew and a merge into main is seen from every other branch.
   */
  async start(epics: readonly EpicSnapshot[]): Promise<void> {
    this.underWay = epics
      .filter((e) => UNDER_WAY.includes(e.status))
      .map((e) => e.id)
      .sort();
    const main = defaultBranch(this.mainRoot);
    const tips = await refTips(this.mainRoot, this.underWay.map(epicRef), process.env);
    this.tips = new Map(this.underWay.map((id) => [id, tips.get(epicRef(id)) ?? null]));
    this.mainName = main?.name ?? null;
    if (main) this.tips.set(main.name, main.commit);
    const current = new Set(this.tips.values());
    for (const key of this.merges.keys()) if (!key.split(' ').every((c) => current.has(c))) this.merges.delete(key);
    if (this.mainTested === (main?.commit ?? null)) return;
    this.mainTested = main?.commit ?? null;
    // At once: the pass that saw main move waits for them before it starts anything.
    await Promise.all(this.underWay.map((id) => this.after(id)));
  }

  /** After a build of `epicId`: its conflicts ahead, recorded for both sides of each pair of epics, and logged when new. */
  async after(epicId: string): Promise<readonly ConflictAhead[]> {
    const found = await testConflicts(
      this.mainRoot,
      epicId,
      this.underWay,
      (why) => this.logOnce(`forecast:${why}`, why),
      (root, pairs) => this.merge(root, pairs),
    );
    this.ahead.set(epicId, found);
    for (const other of this.underWay) {
      if (other === epicId) continue;
      const theirs = (this.ahead.get(other) ?? []).filter((c) => c.with !== epicId);
      const pair = found.find((c) => c.with === other);
      this.ahead.set(
        other,
        pair ? [...theirs, { ...pair, with: epicId, ours: pair.theirs, theirs: pair.ours }] : theirs,
      );
    }
    for (const c of found) this.tips.set(c.with, c.theirs);
    if (found[0]) this.tips.set(epicId, found[0].ours);
    const line = describeConflicts(epicId, found);
    if (line)
      this.logOnce(
        `forecast:${line}`,
        `${line} (a test merge, nothing touched; of two epics the one that goes first merges first, the other rebases after)`,
      );
    return found;
  }

  /** git's test merges of these pairs, asking only for those not known yet; one git could not try is asked again next time. */
  private async merge(root: string, pairs: readonly MergePair[]): Promise<TestMerge[]> {
    const key = (p: MergePair) => `${p.ours} ${p.theirs}`;
    const unknown = pairs.filter((p) => !this.merges.has(key(p)));
    const asked = await testMerges(root, unknown, process.env);
    const answers = new Map(unknown.map((p, i) => [key(p), asked[i]]));
    for (const [k, r] of answers) if (r?.ok) this.merges.set(k, r);
    return pairs.map(
      (p) => this.merges.get(key(p)) ?? answers.get(key(p)) ?? { ok: false, reason: 'git gave no answer' },
    );
  }

  /** What the last test merges found and still holds, per epic under way (those without a conflict have an empty list): what the editor shows. */
  get all(): ReadonlyMap<string, readonly ConflictAhead[]> {
    return new Map(this.underWay.map((id) => [id, this.fresh(id).map((c) => ({ with: c.with, files: c.files }))]));
  }

  /** Per epic under way, the other epics under way its branch conflicts with: what decide() orders merges by. */
  between(epics: readonly EpicSnapshot[]): Map<string, ConflictWith[]> {
    const ids = new Set(epics.filter((e) => UNDER_WAY.includes(e.status)).map((e) => e.id));
    const out = new Map<string, ConflictWith[]>();
    for (const id of ids)
      out.set(
        id,
        this.fresh(id)
          .filter((c) => ids.has(c.with))
          .map((c) => ({ epicId: c.with, files: c.files })),
      );
    return out;
  }

  /** An epic's conflicts whose other side is still under way (or the default branch) and neither branch moved since. */
  private fresh(id: string): TestedConflict[] {
    return (this.ahead.get(id) ?? []).filter(
      (c) =>
        (c.with === this.mainName || this.underWay.includes(c.with)) &&
        this.tips.get(id) === c.ours &&
        this.tips.get(c.with) === c.theirs,
    );
  }
}
