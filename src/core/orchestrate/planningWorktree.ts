/**
 * Each planning run gets a worktree of its own (docs/lifecycle.md): `<repo>.springfield/<epic>-plan`,
 * detached at the main branch's tip (or the epic branch's tip for a re-plan), with its own index, so
 * two planners never share staged files and nothing a planner writes reaches main or the epic's
 * branch. What she proposes is read from there into the store; the worktree is removed after the run.
 */
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EnvironmentError, RefusedError } from '../errors.ts';
import { errorLine, gitOutAsync, gitRunAsync } from '../git/exec.ts';
import { addingWorktree, epicBranch, epicWorktreePath, removeEmptyWorktreeFolder } from './epicWorktree.ts';

/** Git in the main worktree under the one environment policy (docs/git.md). */
function git(mainRoot: string): (args: readonly string[]) => Promise<string> {
  return (args) => gitOutAsync(mainRoot, args, process.env);
}

/** Where the epic's planning worktree goes, beside its build worktree. */
export function planningWorktreePath(mainRoot: string, epicId: string, location?: string): string {
  return epicWorktreePath(mainRoot, `${epicId}-plan`, location);
}

/** The lock reason of a planning worktree, followed by the pid of the scheduler that made it. */
const OWNER = 'springfield planning worktree of scheduler pid';

function listed(porcelain: string): string[] {
  return porcelain
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length));
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
  const settled = next.then(
    () => undefined,
    () => undefined,
  );
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
export function createPlanningWorktree(
  mainRoot: string,
  epicId: string,
  replan: boolean,
  location?: string,
): Promise<{ path: string; base: string }> {
  const path = planningWorktreePath(mainRoot, epicId, location);
  return oneAtATime(path, () => create(mainRoot, epicId, path, replan));
}

async function create(
  mainRoot: string,
  epicId: string,
  path: string,
  replan: boolean,
): Promise<{ path: string; base: string }> {
  await remove(mainRoot, path);
  if (existsSync(path))
    throw new RefusedError(
      'worktree_path_taken',
      `${path} exists but is not a worktree of this repository; move it or set springfield.worktrees.location`,
    );
  const branch = epicBranch(epicId);
  const onBranch = replan && (await git(mainRoot)(['branch', '--list', branch])).trim() !== '';
  const base = onBranch ? branch : 'HEAD';
  const commit = (await git(mainRoot)(['rev-parse', `${base}^{commit}`])).trim();
  // Locked with the scheduler's pid: another scheduler's sweep keeps it while this one lives (sweepPlanningWorktrees).
  const added = await addingWorktree(mainRoot, () =>
    gitRunAsync(
      mainRoot,
      ['worktree', 'add', '--detach', '--lock', '--reason', `${OWNER} ${process.pid}`, path, commit],
      process.env,
    ),
  );
  if (added.status !== 0)
    throw new EnvironmentError(
      'git_failed',
      `git worktree add for ${epicId}'s planning failed: ${errorLine(added.stderr) || `exit ${added.status}`}`,
    );
  return { path: realpathSync(path), base: onBranch ? branch : `main's tip (${commit.slice(0, 12)})` };
}

/**
 * Removes the epic's planning worktree, whatever is in it (a planner's files never count; the store
 * has her proposal), and the default worktree folder when that leaves it empty.
 */
export function removePlanningWorktree(mainRoot: string, epicId: string, location?: string): Promise<boolean> {
  const path = planningWorktreePath(mainRoot, epicId, location);
  return oneAtATime(path, async () => {
    const removed = await remove(mainRoot, path);
    removeEmptyWorktreeFolder(mainRoot, location);
    return removed;
  });
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

/** What a sweep did with each planning worktree it found (paths as git recorded them). */
export interface PlanningSweep {
  readonly removed: readonly string[];
  readonly kept: readonly string[];
  /** Not touched: a symbolic link where the worktree should be. */
  readonly refused: readonly string[];
}

/** Each worktree git knows, as recorded (not resolved), with the pid in its planning lock if any. */
async function recordedWorktrees(mainRoot: string): Promise<{ path: string; ownerPid: number | null }[]> {
  const out: { path: string; ownerPid: number | null }[] = [];
  for (const entry of (await git(mainRoot)(['worktree', 'list', '--porcelain', '-z'])).split('\0\0')) {
    const lines = entry.split('\0');
    const path = lines.find((l) => l.startsWith('worktree '))?.slice('worktree '.length);
    if (!path) continue;
    const lock = lines.find((l) => l.startsWith(`locked ${OWNER} `));
    out.push({ path, ownerPid: lock ? Number(lock.slice(`locked ${OWNER} `.length)) : null });
  }
  return out;
}

/**
 * Removes the planning worktrees left by a scheduler that died (docs/lifecycle.md): one in the
 * configured worktree folder, named `<epic>-plan`, that no live run works in (`liveRunWorktrees`)
 * and whose making scheduler is gone. A symbolic link there is refused, nothing elsewhere is touched.
 */
export async function sweepPlanningWorktrees(
  mainRoot: string,
  liveRunWorktrees: ReadonlySet<string>,
  alive: (pid: number) => boolean,
  location?: string,
): Promise<PlanningSweep> {
  const folder = dirname(planningWorktreePath(mainRoot, 'sf-0', location));
  const realFolder = existsSync(folder) ? realpathSync(folder) : folder;
  const removed: string[] = [];
  const kept: string[] = [];
  const refused: string[] = [];
  for (const w of await recordedWorktrees(mainRoot)) {
    const epicId = planningEpicOf(w.path);
    if (!epicId || (dirname(w.path) !== folder && dirname(w.path) !== realFolder)) continue;
    const path = planningWorktreePath(mainRoot, epicId, location);
    const candidates = [w.path, path, join(realFolder, basename(path))];
    if (candidates.some(isLink)) {
      refused.push(w.path);
      continue;
    }
    const inUse =
      candidates.some((p) => liveRunWorktrees.has(p)) ||
      (w.ownerPid !== null && Number.isInteger(w.ownerPid) && alive(w.ownerPid));
    if (inUse) kept.push(w.path);
    else if (await removePlanningWorktree(mainRoot, epicId, location)) removed.push(w.path);
  }
  return { removed, kept, refused };
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
