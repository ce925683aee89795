/**
 * Each planning run gets a worktree of its own (docs/lifecycle.md): `<repo>.springfield/<epic>-plan`,
 * detached at the main branch's tip (or the epic branch's tip for a re-plan), with its own index, so
 * two planners never share staged files and nothing a planner writes reaches main or the epic's
 * branch. What she proposes is read from there into the store; the worktree is removed after the run.
 */
import { existsSync, realpathSync } from 'node:fs';
import { EnvironmentError, RefusedError } from '../errors.ts';
import { gitOutAsync, gitRunAsync } from '../git/exec.ts';
import { epicBranch, epicWorktreePath } from './epicWorktree.ts';

/** Git in the main worktree under the one environment policy (docs/git.md). */
function git(mainRoot: string): (args: readonly string[]) => Promise<string> {
  return (args) => gitOutAsync(mainRoot, args, process.env);
}

/** Where the epic's planning worktree goes, beside its build worktree. */
export function planningWorktreePath(mainRoot: string, epicId: string, location?: string): string {
  return epicWorktreePath(mainRoot, `${epicId}-plan`, location);
}

function listed(porcelain: string): string[] {
  return porcelain.split('\n').filter((l) => l.startsWith('worktree ')).map((l) => l.slice('worktree '.length));
}

async function isWorktree(mainRoot: string, path: string): Promise<boolean> {
  const paths = listed(await git(mainRoot)(['worktree', 'list', '--porcelain']));
  const real = existsSync(path) ? realpathSync(path) : path;
  return paths.includes(path) || paths.includes(real);
}

/**
 * Operations on one planning worktree, one after another: the scheduler removes a run's worktree
 * when the run ends while the next run (a retry without backoff) already makes a fresh one.
 */
const busy = new Map<string, Promise<unknown>>();

function oneAtATime<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const next = (busy.get(path) ?? Promise.resolve()).then(fn, fn);
  const settled = next.then(() => undefined, () => undefined);
  busy.set(path, settled);
  void settled.then(() => {
    if (busy.get(path) === settled) busy.delete(path);
  });
  return next;
}

/**
 * A fresh planning worktree for the epic (a stale one, left by a crash, is removed first): detached at
 * the epic branch's tip when `replan` and the branch exists, else at the main worktree's HEAD.
 */
export function createPlanningWorktree(mainRoot: string, epicId: string, replan: boolean, location?: string): Promise<{ path: string; base: string }> {
  const path = planningWorktreePath(mainRoot, epicId, location);
  return oneAtATime(path, () => create(mainRoot, epicId, path, replan));
}

async function create(mainRoot: string, epicId: string, path: string, replan: boolean): Promise<{ path: string; base: string }> {
  await remove(mainRoot, path);
  if (existsSync(path)) throw new RefusedError('worktree_path_taken', `${path} exists but is not a worktree of this repository; move it or set springfield.worktrees.location`);
  const branch = epicBranch(epicId);
  const onBranch = replan && (await git(mainRoot)(['branch', '--list', branch])).trim() !== '';
  const base = onBranch ? branch : 'HEAD';
  const commit = (await git(mainRoot)(['rev-parse', `${base}^{commit}`])).trim();
  const added = await gitRunAsync(mainRoot, ['worktree', 'add', '--detach', path, commit], process.env);
  if (added.status !== 0) throw new EnvironmentError('git_failed', `git worktree add for ${epicId}'s planning failed: ${added.stderr.trim().split('\n')[0] ?? `exit ${added.status}`}`);
  return { path: realpathSync(path), base: onBranch ? branch : `main's tip (${commit.slice(0, 12)})` };
}

/** Removes the epic's planning worktree, whatever is in it (a planner's files never count; the store has her proposal). */
export function removePlanningWorktree(mainRoot: string, epicId: string, location?: string): Promise<boolean> {
  const path = planningWorktreePath(mainRoot, epicId, location);
  return oneAtATime(path, () => remove(mainRoot, path));
}

async function remove(mainRoot: string, path: string): Promise<boolean> {
  const known = await isWorktree(mainRoot, path);
  if (known) {
    try {
      await git(mainRoot)(['worktree', 'remove', '--force', '--force', path]);
    } catch (err) {
      // Another process (a second scheduler, a person's `git worktree remove`) may have been first.
      if (await isWorktree(mainRoot, path)) throw err;
    }
  }
  await git(mainRoot)(['worktree', 'prune']);
  return known;
}

/** The epic whose planning worktree `path` is (by its folder name), or null. */
export function planningEpicOf(path: string | null): string | null {
  return /^(sf-[0-9a-f]+)-plan$/.exec(path?.split(/[\\/]/).at(-1) ?? '')?.[1] ?? null;
}
