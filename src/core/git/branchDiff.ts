import { gitOutAsync, gitRunAsync } from './exec.ts';

/** One file a branch changes against its base: `A`dded, `M`odified, `D`eleted, `T`ype changed (renames are a delete and an add). */
export interface ChangedFile {
  readonly status: 'A' | 'M' | 'D' | 'T';
  /** Repository-relative, with forward slashes. */
  readonly path: string;
}

/** What a branch brings against the branch it would merge into: their merge base, its tip and the files between. */
export interface BranchDiff {
  readonly base: string;
  readonly tip: string;
  readonly files: readonly ChangedFile[];
}

/**
 * The changes of `branch` against `into` (e.g. the main worktree's `HEAD`), as a squash merge would
 * bring them: from their merge base to the branch's tip. Null when the branch does not exist or
 * shares no history with `into`.
 */
export async function branchDiff(
  cwd: string,
  branch: string,
  into: string,
  env: NodeJS.ProcessEnv,
): Promise<BranchDiff | null> {
  const tip = await commitOf(cwd, `refs/heads/${branch}`, env);
  const target = await commitOf(cwd, into, env);
  if (!tip || !target) return null;
  const merged = await gitRunAsync(cwd, ['merge-base', target, tip], env);
  const base = merged.stdout.trim();
  if (merged.status !== 0 || !HASH.test(base)) return null;
  const out = await gitOutAsync(
    cwd,
    ['diff', '--name-status', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', base, tip],
    env,
  );
  return { base, tip, files: parseNameStatus(out) };
}

/** Parses `git diff --name-status -z --no-renames`: a status, then its path, NUL-separated. */
export function parseNameStatus(text: string): ChangedFile[] {
  const fields = text.split('\0');
  const out: ChangedFile[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = (fields[i] as string).charAt(0);
    const path = fields[i + 1] as string;
    if (path && (status === 'A' || status === 'M' || status === 'D' || status === 'T')) out.push({ status, path });
  }
  return out;
}

/** A file's text at a commit (`git cat-file blob <commit>:<path>`), or null when the commit has no such file. */
export async function fileAtCommit(
  cwd: string,
  commit: string,
  path: string,
  env: NodeJS.ProcessEnv,
): Promise<string | null> {
  if (!HASH.test(commit)) return null;
  const r = await gitRunAsync(cwd, ['cat-file', 'blob', `${commit}:${path}`], env);
  return r.status === 0 ? r.stdout : null;
}

const HASH = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

async function commitOf(cwd: string, rev: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const r = await gitRunAsync(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], env);
  const hash = r.stdout.trim();
  return r.status === 0 && HASH.test(hash) ? hash : null;
}
