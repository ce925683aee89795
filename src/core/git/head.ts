import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gitRun, gitRunAsync } from './exec.ts';

/** Where a worktree's HEAD points: its commit (null before the first) and branch (null when detached). */
export interface Head {
  readonly commit: string | null;
  /** The full ref, e.g. `refs/heads/springfield/sf-a3f8`. */
  readonly branch: string | null;
}

/**
 * The worktree's HEAD, or null when `cwd` is not a git worktree root (or git cannot say). Read from
 * the git dir's files when they are plain (loose or packed refs): it runs at every agent's start
 * and end, on the scheduler's reaction path; anything unusual asks git.
 */
export function readHead(cwd: string, env: NodeJS.ProcessEnv): Head | null {
  return headFromFiles(cwd) ?? headFromGit(cwd, env);
}

/** The worktree's git dir, from its `.git` (a directory, or a `gitdir:` file); null if there is none. */
export function gitDirOf(worktree: string): string | null {
  const dotGit = join(worktree, '.git');
  try {
    if (statSync(dotGit).isDirectory()) return dotGit;
    const target = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim();
    return target ? resolve(worktree, target) : null;
  } catch {
    return null;
  }
}

function headFromFiles(worktree: string): Head | null {
  const gitDir = gitDirOf(worktree);
  if (!gitDir) return null;
  try {
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    if (/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(head)) return { commit: head, branch: null };
    const ref = /^ref: (refs\/\S+)$/.exec(head)?.[1];
    if (!ref) return null;
    const common = existsSync(join(gitDir, 'commondir'))
      ? resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim())
      : gitDir;
    if (existsSync(join(common, 'reftable'))) return null;
    const commit = looseRef(common, ref) ?? packedRef(common, ref);
    // An unborn branch has neither; git tells that apart from a ref we cannot read.
    return commit ? { commit, branch: ref } : null;
  } catch {
    return null;
  }
}

/**
 * The commit `ref` (a full name: `refs/heads/…`) points at, read from the files of the repository
 * `worktree` belongs to (loose, then packed refs), with no git process; null when it is not there
 * or the repository keeps its refs some other way (reftable): then ask git.
 */
export function refFromFiles(worktree: string, ref: string): string | null {
  const gitDir = gitDirOf(worktree);
  if (!gitDir) return null;
  try {
    const common = existsSync(join(gitDir, 'commondir'))
      ? resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim())
      : gitDir;
    if (existsSync(join(common, 'reftable'))) return null;
    return looseRef(common, ref) ?? packedRef(common, ref);
  } catch {
    return null;
  }
}

function looseRef(common: string, ref: string): string | null {
  try {
    const value = readFileSync(join(common, ref), 'utf8').trim();
    return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(value) ? value : null;
  } catch {
    return null;
  }
}

function packedRef(common: string, ref: string): string | null {
  try {
    for (const line of readFileSync(join(common, 'packed-refs'), 'utf8').split('\n')) {
      const [hash, name] = line.split(' ');
      if (name === ref && hash && /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(hash)) return hash;
    }
  } catch {
    // no packed refs
  }
  return null;
}

function headFromGit(cwd: string, env: NodeJS.ProcessEnv): Head | null {
  try {
    const branch = gitRun(cwd, ['symbolic-ref', '-q', 'HEAD'], env);
    const commit = gitRun(cwd, ['rev-parse', '--verify', '-q', 'HEAD'], env);
    if (branch.status > 1) return null;
    return {
      commit: commit.status === 0 ? commit.stdout.trim() : null,
      branch: branch.status === 0 ? branch.stdout.trim() : null,
    };
  } catch {
    return null;
  }
}

/** True when `commit` is reachable from `ref` (both resolvable in `cwd`). */
export function isAncestor(cwd: string, commit: string, ref: string, env: NodeJS.ProcessEnv): boolean {
  try {
    return gitRun(cwd, ['merge-base', '--is-ancestor', commit, ref], env).status === 0;
  } catch {
    return false;
  }
}

/**
 * How many commits `to` has that `from` has not (`git rev-list --count from..to`), without blocking
 * the event loop; null when git cannot tell (a commit gone, no such directory, no git).
 */
export async function commitsBetween(
  cwd: string,
  from: string,
  to: string,
  env: NodeJS.ProcessEnv,
): Promise<number | null> {
  try {
    const r = await gitRunAsync(cwd, ['rev-list', '--count', `${from}..${to}`], env);
    const count = Number(r.stdout.trim());
    return r.status === 0 && r.stdout.trim() !== '' && Number.isFinite(count) ? count : null;
  } catch {
    return null;
  }
}

/** "refs/heads/x" → "x". */
export function shortRef(ref: string): string {
  return ref.replace(/^refs\/heads\//, '');
}
