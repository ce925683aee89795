import { gitRun } from './exec.ts';

/** Where a worktree's HEAD points: its commit (null before the first) and branch (null when detached). */
export interface Head {
  readonly commit: string | null;
  /** The full ref, e.g. `refs/heads/springfield/sf-a3f8`. */
  readonly branch: string | null;
}

/** The worktree's HEAD, or null when `cwd` is not in a git worktree (or git cannot say). */
export function readHead(cwd: string, env: NodeJS.ProcessEnv): Head | null {
  try {
    const branch = gitRun(cwd, ['symbolic-ref', '-q', 'HEAD'], env);
    const commit = gitRun(cwd, ['rev-parse', '--verify', '-q', 'HEAD'], env);
    if (branch.status > 1) return null;
    return { commit: commit.status === 0 ? commit.stdout.trim() : null, branch: branch.status === 0 ? branch.stdout.trim() : null };
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

/** "refs/heads/x" → "x". */
export function shortRef(ref: string): string {
  return ref.replace(/^refs\/heads\//, '');
}
