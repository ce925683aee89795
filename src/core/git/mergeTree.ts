/**
 * A test merge of two commits with `git merge-tree --write-tree` (git 2.38 or later): no checkout,
 * index or working tree is touched, only objects are written. What conflict-ahead prediction runs
 * (docs/files.md, "Conflict ahead").
 */
import { firstLine, gitRunAsync } from './exec.ts';

/** The result of a test merge: the files that would conflict (empty: it merges cleanly), or why it could not be tried. */
export type TestMerge =
  { readonly ok: true; readonly conflicts: readonly string[] } | { readonly ok: false; readonly reason: string };

/** Two commit-ish to test-merge: `theirs` into `ours`. */
export interface MergePair {
  readonly ours: string;
  readonly theirs: string;
}

const OPTIONS = ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z'];
const TREE = /^[0-9a-f]{40,64}$/;

/** Test-merges `theirs` into `ours` (both commit-ish) and lists the files that would conflict. */
export async function testMerge(cwd: string, ours: string, theirs: string, env: NodeJS.ProcessEnv): Promise<TestMerge> {
  const r = await gitRunAsync(cwd, [...OPTIONS, ours, theirs], env);
  // Exit 0: clean; 1: conflicts, after the tree's id. Anything else, or no tree id (git says 1 for a bad name too), is an error.
  const [tree = '', ...files] = r.stdout.split('\0');
  if ((r.status === 0 || r.status === 1) && TREE.test(tree)) {
    return { ok: true, conflicts: r.status === 0 ? [] : unique(files) };
  }
  const why = firstLine(r.stderr) || `exit ${r.status}`;
  const old = /unknown option|usage: git merge-tree/i.test(r.stderr);
  return { ok: false, reason: old ? `git merge-tree --write-tree needs git 2.38 or later (${why})` : why };
}

/**
 * Several test merges in one git process (`--stdin`, which the git 2.39 here has): a scheduler pass
 * tests an epic against every other epic under way, and a process per pair was most of its CPU at
 * twenty epics (docs/files.md). Where that one process cannot answer them all (a git without
 * `--stdin`, a name git cannot merge), each pair is tried on its own, so a bad pair is reported as
 * testMerge would.
 */
export async function testMerges(
  cwd: string,
  pairs: readonly MergePair[],
  env: NodeJS.ProcessEnv,
): Promise<TestMerge[]> {
  if (pairs.length < 2) return Promise.all(pairs.map((p) => testMerge(cwd, p.ours, p.theirs, env)));
  const input = pairs.map((p) => `${p.ours} ${p.theirs}\n`).join('');
  const r = await gitRunAsync(cwd, [...OPTIONS, '--stdin'], env, { input });
  const all = r.status === 0 ? readStdinMerges(r.stdout) : null;
  if (all?.length === pairs.length) return all;
  return Promise.all(pairs.map((p) => testMerge(cwd, p.ours, p.theirs, env)));
}

/**
 * Parses `merge-tree --stdin --name-only -z`: per merge, its status (1 clean, 0 conflicted), the
 * tree's id, the conflicted files, then an empty field. Null when it is not that shape.
 */
export function readStdinMerges(out: string): TestMerge[] | null {
  const fields = out.split('\0');
  const merges: TestMerge[] = [];
  let i = 0;
  while (i < fields.length - 1) {
    const status = fields[i];
    const tree = fields[i + 1] ?? '';
    if ((status !== '0' && status !== '1') || !TREE.test(tree)) return null;
    let end = i + 2;
    while (end < fields.length && fields[end] !== '') end++;
    if (end >= fields.length) return null;
    merges.push({ ok: true, conflicts: status === '1' ? [] : unique(fields.slice(i + 2, end)) });
    i = end + 1;
  }
  return fields[i] === '' && i === fields.length - 1 ? merges : null;
}

const unique = (files: readonly string[]): string[] => [...new Set(files.filter((f) => f !== ''))];
