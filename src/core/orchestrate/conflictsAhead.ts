/**
 * Conflict ahead (docs/files.md): an epic's branch test-merged, with no checkout touched, against the
 * default branch and against the branch of every other epic under way, so a conflict is seen before
 * either merges. Computed from git whenever asked; the store keeps none of it.
 */
import { readHead } from '../git/head.ts';
import { testMerge } from '../git/mergeTree.ts';
import { refTips } from '../git/branchFiles.ts';
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

/**
 * The conflicts `epicId`'s branch would meet: merging into the default branch, and merging with each
 * of `others` (epic ids; those without a branch are skipped). Empty when its branch does not exist.
 * A test merge git cannot try is reported through `onError` and left out.
 */
export async function conflictsAhead(
  mainRoot: string,
  epicId: string,
  others: readonly string[],
  onError: (why: string) => void = () => undefined,
): Promise<ConflictAhead[]> {
  const ref = (id: string) => `refs/heads/${epicBranch(id)}`;
  const ids = others.filter((o) => o !== epicId);
  const tips = await refTips(mainRoot, [ref(epicId), ...ids.map(ref)], process.env);
  const ours = tips.get(ref(epicId));
  const main = defaultBranch(mainRoot);
  if (!ours) return [];
  const targets: { with: string; commit: string }[] = main ? [{ with: main.name, commit: main.commit }] : [];
  for (const id of ids) {
    const commit = tips.get(ref(id));
    if (commit) targets.push({ with: id, commit });
  }
  const out: ConflictAhead[] = [];
  for (const t of targets) {
    const r = await testMerge(mainRoot, t.commit, ours, process.env);
    if (!r.ok) onError(`cannot test-merge ${epicBranch(epicId)} with ${t.with}: ${r.reason}`);
    else if (r.conflicts.length > 0) out.push({ with: t.with, files: r.conflicts });
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
