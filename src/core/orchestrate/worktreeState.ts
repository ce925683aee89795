import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { EnvironmentError, RefusedError } from '../errors.ts';
import { firstLine, gitOutAsync, gitRunAsync } from '../git/exec.ts';
import { gitDirOf, isAncestor, readHead } from '../git/head.ts';
import { worktreeStatus } from '../git/status.ts';

/** What tidying a worktree found and did, for the log. */
export interface TidyReport {
  /** A stale `index.lock` (git killed mid-commit) was removed. */
  readonly clearedLock: boolean;
  /** The branch the worktree was on instead of the epic's, now restored. */
  readonly leftBranch: string | null;
  /** A branch created to keep commits made on a detached HEAD reachable. */
  readonly strayBranch: string | null;
  /** The commit that keeps uncommitted leftovers (a marked WIP commit). */
  readonly wipCommit: string | null;
}

const STALE_LOCK_MS = 10 * 60_000;

/**
 * Puts an epic's worktree in a known state before anything runs there (docs/scheduler-faults.md):
 * clears an `index.lock` no live git holds, brings back the epic's branch if an agent left it
 * (keeping what it committed reachable), and commits uncommitted leftovers as a marked WIP commit,
 * so nothing an agent wrote is lost and the next run starts clean.
 */
export async function tidyWorktree(worktree: string, branch: string, label: string): Promise<TidyReport> {
  if (!existsSync(worktree)) throw new EnvironmentError('worktree_missing', `${worktree} is gone`);
  const env = process.env;
  const gitDir = gitDirOf(worktree) ?? (await gitOutAsync(worktree, ['rev-parse', '--absolute-git-dir'], env)).trim();
  const clearedLock = clearStaleLock(worktree, gitDir);
  const head = readHead(worktree, env);
  const current = head
    ? (head.branch ?? '')
    : (await gitRunAsync(worktree, ['symbolic-ref', '-q', 'HEAD'], env)).stdout.trim();
  const wanted = `refs/heads/${branch}`;
  let leftBranch: string | null = null;
  let strayBranch: string | null = null;
  let wipCommit: string | null = null;
  if (current !== wanted) {
    leftBranch = current === '' ? 'a detached HEAD' : current.replace(/^refs\/heads\//, '');
    wipCommit = await commitLeftovers(worktree, `${label}, left on ${leftBranch}`);
    if (current === '') strayBranch = await keepDetached(worktree, branch);
    const checkout = await gitRunAsync(worktree, ['checkout', '-q', branch], env);
    if (checkout.status !== 0)
      throw new RefusedError(
        'worktree_branch',
        `cannot bring ${worktree} back to ${branch}: ${firstLine(checkout.stderr) || `exit ${checkout.status}`}`,
      );
  }
  wipCommit = (await commitLeftovers(worktree, label)) ?? wipCommit;
  return { clearedLock, leftBranch, strayBranch, wipCommit };
}

/** One line for the log, or null when the worktree was already tidy. */
export function describeTidy(r: TidyReport): string | null {
  const parts: string[] = [];
  if (r.clearedLock) parts.push('removed a stale .git index.lock (no live git held it)');
  if (r.leftBranch)
    parts.push(
      `the worktree was on ${r.leftBranch}: switched back${r.strayBranch ? `; its commits are kept on ${r.strayBranch}` : ''}`,
    );
  if (r.wipCommit) parts.push(`committed uncommitted leftovers as WIP ${r.wipCommit.slice(0, 12)}`);
  return parts.length ? parts.join('; ') : null;
}

/** Removes `index.lock` when no git process works in this worktree (git killed mid-commit leaves it behind). */
function clearStaleLock(worktree: string, gitDir: string): boolean {
  const lock = join(gitDir, 'index.lock');
  let age: number;
  try {
    age = Date.now() - statSync(lock).mtimeMs;
  } catch {
    return false;
  }
  const live = liveGit(worktree, gitDir);
  if (live === true || (live === undefined && age < STALE_LOCK_MS)) {
    throw new RefusedError(
      'worktree_busy',
      `git is working in ${worktree} (${lock} is held); waiting for it to finish`,
    );
  }
  rmSync(lock, { force: true });
  return true;
}

/**
 * Whether a git process works in this worktree: read from /proc where there is one (its working
 * directory or GIT_DIR); undefined elsewhere, where only the lock's age can tell.
 */
function liveGit(worktree: string, gitDir: string): boolean | undefined {
  if (!existsSync('/proc/self/cwd')) return undefined;
  const roots = [realpathSync(worktree), realpathSync(gitDir)];
  const inside = (path: string) => roots.some((r) => path === r || path.startsWith(r + sep));
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!/^git/.test(readFileSync(`/proc/${pid}/comm`, 'utf8'))) continue;
      if (inside(readlinkSync(`/proc/${pid}/cwd`))) return true;
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (env.some((v) => v.startsWith('GIT_DIR=') && inside(v.slice(8)))) return true;
    } catch {
      // gone, or not ours to read
    }
  }
  return false;
}

/** Commits everything uncommitted (untracked files too, ignored ones not) as a marked WIP commit; null when clean. */
async function commitLeftovers(worktree: string, label: string): Promise<string | null> {
  const env = process.env;
  if ((await worktreeStatus(worktree, env)).length === 0) return null;
  await gitOutAsync(worktree, ['add', '-A'], env);
  // No hooks: this commit keeps an agent's work from being lost, whatever a hook thinks of it.
  const commit = await gitRunAsync(
    worktree,
    [
      'commit',
      '-q',
      '--no-verify',
      '-m',
      `WIP: uncommitted leftovers ${label}`,
      '--trailer',
      `Springfield-Wip: ${label}`,
    ],
    env,
  );
  if (commit.status !== 0)
    throw new EnvironmentError(
      'git_failed',
      `cannot commit the leftovers in ${worktree}: ${firstLine(commit.stderr) || firstLine(commit.stdout) || `exit ${commit.status}`}`,
    );
  return (await gitOutAsync(worktree, ['rev-parse', 'HEAD'], env)).trim();
}

/** Keeps commits made on a detached HEAD reachable under `springfield-stray/<branch-leaf>-<time>`, unless the epic's branch has them. */
async function keepDetached(worktree: string, branch: string): Promise<string | null> {
  const head = (await gitOutAsync(worktree, ['rev-parse', 'HEAD'], process.env)).trim();
  if (isAncestor(worktree, head, branch, process.env)) return null;
  const name = `springfield-stray/${branch.split('/').at(-1) ?? 'epic'}-${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}`;
  await gitOutAsync(worktree, ['branch', name, head], process.env);
  return name;
}
