/**
 * A test merge of two commits with `git merge-tree --write-tree` (git 2.38 or later): no checkout,
 * index or working tree is touched, only objects are written. What conflict-ahead prediction runs
 * (docs/files.md, "Conflict ahead").
 */
import { firstLine, gitRunAsync } from './exec.ts';

/** The result of a test merge: the files that would conflict (empty: it merges cleanly), or why it could not be tried. */
export type TestMerge =
  { readonly ok: true; readonly conflicts: readonly string[] } | { readonly ok: false; readonly reason: string };

/** Test-merges `theirs` into `ours` (both commit-ish) and lists the files that would conflict. */
export async function testMerge(cwd: string, ours: string, theirs: string, env: NodeJS.ProcessEnv): Promise<TestMerge> {
  const r = await gitRunAsync(
    cwd,
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', ours, theirs],
    env,
  );
  // Exit 0: clean; 1: conflicts, after the tree's id. Anything else, or no tree id (git says 1 for a bad name too), is an error.
  const [tree = '', ...files] = r.stdout.split('\0');
  if ((r.status === 0 || r.status === 1) && /^[0-9a-f]{40,64}$/.test(tree)) {
    return { ok: true, conflicts: r.status === 0 ? [] : [...new Set(files.filter((f) => f !== ''))] };
  }
  const why = firstLine(r.stderr) || `exit ${r.status}`;
  const old = /unknown option|usage: git merge-tree/i.test(r.stderr);
  return { ok: false, reason: old ? `git merge-tree --write-tree needs git 2.38 or later (${why})` : why };
}
