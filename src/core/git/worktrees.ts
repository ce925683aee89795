import { existsSync, realpathSync } from 'node:fs';
import { gitOut } from './exec.ts';

/** One entry of `git worktree list`. */
export interface WorktreeEntry {
  /** Real path when the directory exists, else the path git recorded. */
  readonly path: string;
  readonly bare: boolean;
  /** The directory is gone (git reports it prunable, or it does not exist). */
  readonly missing: boolean;
  readonly branch: string | null;
}

/** The repository's worktrees from `git worktree list --porcelain -z`. */
export function listWorktrees(cwd: string, env: NodeJS.ProcessEnv): WorktreeEntry[] {
  return parseWorktreeList(gitOut(cwd, ['worktree', 'list', '--porcelain', '-z'], env));
}

/** Parses the NUL-separated porcelain format: attribute lines, a blank entry between worktrees. */
export function parseWorktreeList(text: string): WorktreeEntry[] {
  const out: WorktreeEntry[] = [];
  let current: { path: string; bare: boolean; prunable: boolean; branch: string | null } | null = null;
  const flush = () => {
    if (!current) return;
    const exists = existsSync(current.path);
    out.push({
      path: exists ? realpathSync(current.path) : current.path,
      bare: current.bare,
      missing: current.prunable || !exists,
      branch: current.branch,
    });
    current = null;
  };
  for (const line of text.split('\0')) {
    if (line === '') {
      flush();
      continue;
    }
    const space = line.indexOf(' ');
    const key = space < 0 ? line : line.slice(0, space);
    const value = space < 0 ? '' : line.slice(space + 1);
    if (key === 'worktree') {
      flush();
      current = { path: value, bare: false, prunable: false, branch: null };
    } else if (current && key === 'bare') current.bare = true;
    else if (current && key === 'prunable') current.prunable = true;
    else if (current && key === 'branch') current.branch = value;
  }
  flush();
  return out;
}
