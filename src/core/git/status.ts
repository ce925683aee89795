import { gitOutAsync, gitRunAsync } from './exec.ts';

/** One changed path of `git status --porcelain -z`: its index and worktree codes (`?` untracked). */
export interface StatusEntry {
  readonly index: string;
  readonly worktree: string;
  /** Repository-relative; a rename's new path. */
  readonly path: string;
}

const CONFLICTS = new Set(['DD', 'AU', 'UD', 'UA', 'DU', 'AA', 'UU']);

/** Every uncommitted change in the worktree at `cwd`, untracked files one by one (ignored ones not). */
export async function worktreeStatus(cwd: string, env: NodeJS.ProcessEnv): Promise<StatusEntry[]> {
  return parseStatus(await gitOutAsync(cwd, ['status', '--porcelain', '-z', '--untracked-files=all'], env));
}

/** Parses `git status --porcelain -z` (v1): `XY path`, a rename or copy followed by its old path. */
export function parseStatus(text: string): StatusEntry[] {
  const out: StatusEntry[] = [];
  const records = text.split('\0');
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as string;
    if (record.length < 4) continue;
    const index = record.charAt(0);
    const worktree = record.charAt(1);
    out.push({ index, worktree, path: record.slice(3) });
    if ('RC'.includes(index) || 'RC'.includes(worktree)) i++; // the old path
  }
  return out;
}

/** True for a path left in conflict by a merge (both modified, both added, deleted by one side…). */
export function isConflicted(e: StatusEntry): boolean {
  return CONFLICTS.has(e.index + e.worktree);
}

/** True when the branch `refs/heads/<name>` exists. */
export async function branchExists(cwd: string, name: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return (await gitRunAsync(cwd, ['show-ref', '--verify', '--quiet', `refs/heads/${name}`], env)).status === 0;
}
