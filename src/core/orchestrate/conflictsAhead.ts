/**
 * Conflict ahead (docs/files.md): an epic's branch test-merged, with no checkout touched, against the
 * default branch and against the branch of every other epic under way, so a conflict is seen before
 * either merges. Computed from git whenever asked; the store keeps none of it.
 */
import { readHead } from '../git/head.ts';
import { testMerges, type MergePair, type TestMerge } from '../git/mergeTree.ts';
import { changedSince, refTips } from '../git/branchFiles.ts';
import { UNDER_WAY } from '../scheduler/filesRule.ts';
import type { Store } from '../store/index.ts';
import { epicBranch } from './epicWorktree.ts';

/** A predicted conflict: with the default branch (its name) or another epic (its id), in these files. */
export interface ConflictAhead {
  readonly with: string;
  readonly files: readonly string[];
}

/** The default branch's short name and commit: what the main worktree has checked out. */
export function defaultBranch(mainRoot: string): { readonly name: string; readonly commit: string } | null {
  const head = readHead(mainRoot, process.env);
  if (!head?.commit) return null;
  return { name: head.branch?.replace(/^refs\/heads\//, '') ?? 'HEAD', commit: head.commit };
}

/** A conflict ahead with the two commits it was tested on: stale once either branch moves. */
export interface TestedConflict extends ConflictAhead {
  readonly ours: string;
  readonly theirs: string;
}

/** The ref of an epic's branch. */
export const epicRef = (id: string): string => `refs/heads/${epicBranch(id)}`;

/**
 * The conflicts `epicId`'s branch would meet: merging into the default branch, and merging with each
 * of `others` (epic ids; those without a branch are skipped). Empty when its branch does not exist.
 * Between two epics, a conflict counts only in files both changed since they left the default branch:
 * a change one inherited from it is the other's conflict with the default branch.
 * A test merge git cannot try is reported through `onError` and left out.
 */
export async function conflictsAhead(
  mainRoot: string,
  epicId: string,
  others: readonly string[],
  onError: (why: string) => void = () => undefined,
): Promise<ConflictAhead[]> {
  return (await testConflicts(mainRoot, epicId, others, onError)).map((c) => ({ with: c.with, files: c.files }));
}

/** Test merges of pairs of commits: git's, unless the caller remembers the answers (ConflictForecast). */
export type MergeTester = (mainRoot: string, pairs: readonly MergePair[]) => Promise<TestMerge[]>;

const askGit: MergeTester = (mainRoot, pairs) => testMerges(mainRoot, pairs, process.env);

/** conflictsAhead with the commits each test merge was made on. */
export async function testConflicts(
  mainRoot: string,
  epicId: string,
  others: readonly string[],
  onError: (why: string) => void = () => undefined,
  merge: MergeTester = askGit,
): Promise<TestedConflict[]> {
  const ids = others.filter((o) => o !== epicId);
  const tips = await refTips(mainRoot, [epicRef(epicId), ...ids.map(epicRef)], process.env);
  const ours = tips.get(epicRef(epicId));
  const main = defaultBranch(mainRoot);
  if (!ours) return [];
  const targets: { with: string; commit: string }[] = main ? [{ with: main.name, commit: main.commit }] : [];
  for (const id of ids) {
    const commit = tips.get(epicRef(id));
    if (commit) targets.push({ with: id, commit });
  }
  const changed = (commit: string) => (main ? changedSince(mainRoot, main.commit, commit, process.env) : null);
  // The test merges are made at once (a scheduler's pass may wait for them), then read in order.
  const [ownFiles, merges] = await Promise.all([
    targets.length > 1 ? changed(ours) : null,
    merge(
      mainRoot,
      targets.map((t) => ({ ours: t.commit, theirs: ours })),
    ),
  ]);
  const out: TestedConflict[] = [];
  for (const [i, t] of targets.entries()) {
    const r = merges[i];
    if (!r) continue;
    if (!r.ok) {
      onError(`cannot test-merge ${epicBranch(epicId)} with ${t.with}: ${r.reason}`);
      continue;
    }
    let files = r.conflicts;
    if (files.length > 0 && t.with !== main?.name && ownFiles) {
      const theirFiles = await changed(t.commit);
      if (theirFiles) files = files.filter((f) => ownFiles.includes(f) && theirFiles.includes(f));
    }
    if (files.length > 0) out.push({ with: t.with, files, ours, theirs: t.commit });
  }
  return out;
}

/**
 * What `epic show` reports: an epic under way test-merged now against the default branch and the
 * other epics under way; nothing for an epic in any other status, or when git cannot say.
 */
export async function epicConflictsAhead(
  store: Store,
  mainRoot: string | null,
  epicId: string,
): Promise<ConflictAhead[]> {
  if (!mainRoot) return [];
  const underWay = (await store.listEpics()).filter((e) => UNDER_WAY.includes(e.status)).map((e) => e.id);
  if (!underWay.includes(epicId)) return [];
  return conflictsAhead(mainRoot, epicId, underWay).catch(() => []);
}

/** `sf-b: conflict ahead with main in src/a.ts; with sf-a in src/b.ts, src/c.ts`, or null when none. */
export function describeConflicts(epicId: string, conflicts: readonly ConflictAhead[]): string | null {
  if (conflicts.length === 0) return null;
  const parts = conflicts.map(
    (c) =>
      `with ${c.with} in ${c.files.slice(0, 3).join(', ')}${c.files.length > 3 ? ` and ${c.files.length - 3} more` : ''}`,
  );
  return `${epicId}: conflict ahead ${parts.join('; ')}`;
}
