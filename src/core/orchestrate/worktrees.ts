import { copyFileSync, existsSync, mkdirSync, realpathSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { SimpleGit } from 'simple-git';
import { schedulerGit } from './git.ts';
import { EnvironmentError, RefusedError } from '../errors.ts';
import { handoffFileName } from '../epics/handoff.ts';

export interface EpicWorktree {
  readonly path: string;
  readonly branch: string;
  readonly created: boolean;
  /** Uncommitted changes found in a reused worktree: reported, never clobbered. */
  readonly dirty: readonly string[];
  readonly handoffCommitted: boolean;
}

/** Where an epic's worktree goes: the configured folder, else a sibling `<repo>.springfield/<epic-id>`. */
export function epicWorktreePath(mainRoot: string, epicId: string, location?: string): string {
  const base = location && location.trim() !== '' ? resolve(mainRoot, location) : `${mainRoot}.springfield`;
  return join(base, epicId);
}

export function epicBranch(epicId: string): string {
  return `springfield/${epicId}`;
}

function git(cwd: string): SimpleGit {
  return schedulerGit(cwd);
}

/**
 * Creates (or reuses) the epic's worktree on branch `springfield/<epic-id>` from the main branch,
 * and commits the handoff document there once.
 */
export async function ensureEpicWorktree(mainRoot: string, epicId: string, location?: string): Promise<EpicWorktree> {
  const path = epicWorktreePath(mainRoot, epicId, location);
  const branch = epicBranch(epicId);
  const main = git(mainRoot);
  const listed = parseWorktrees(await main.raw(['worktree', 'list', '--porcelain']));
  const real = existsSync(path) ? realpathSync(path) : path;
  const known = listed.find((w) => w.path === real || w.path === path);
  let created = false;
  if (!known) {
    if (existsSync(path)) throw new RefusedError('worktree_path_taken', `${path} exists but is not a worktree of this repository; move it or set springfield.worktrees.location`);
    mkdirSync(dirname(path), { recursive: true });
    const branches = await main.branchLocal();
    const args = branches.all.includes(branch) ? ['worktree', 'add', path, branch] : ['worktree', 'add', '-b', branch, path, 'HEAD'];
    await main.raw(args).catch((err: unknown) => {
      throw new EnvironmentError('git_failed', `git worktree add for ${epicId} failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    });
    created = true;
  } else if (known.branch && known.branch !== `refs/heads/${branch}`) {
    throw new RefusedError('worktree_branch', `${path} is on ${known.branch.replace('refs/heads/', '')}, not ${branch}`);
  }
  const wt = git(path);
  const status = await wt.status();
  const dirty = status.files.map((f) => f.path).filter((f) => f !== handoffFileName(epicId));
  const handoffCommitted = await depositHandoff(mainRoot, path, epicId, wt);
  return { path: existsSync(path) ? realpathSync(path) : path, branch, created, dirty, handoffCommitted };
}

/** Copies TODO-<epic>.md from the main worktree into the epic's branch and commits it, once. */
async function depositHandoff(mainRoot: string, path: string, epicId: string, wt: SimpleGit): Promise<boolean> {
  const name = handoffFileName(epicId);
  const source = join(mainRoot, name);
  if (!existsSync(source)) return false;
  const tracked = (await wt.raw(['ls-files', '--', name])).trim() !== '';
  if (tracked) return false;
  copyFileSync(source, join(path, name));
  await wt.add([name]);
  await wt.commit(`Handoff for ${epicId}`, [name], { '--trailer': `Springfield-Epic: ${epicId}` });
  // An untracked copy in the main worktree would block the merge that brings the committed one back.
  const mainTracked = (await git(mainRoot).raw(['ls-files', '--', name])).trim() !== '';
  if (!mainTracked) rmSync(source);
  return true;
}

interface ListedWorktree {
  path: string;
  branch: string | null;
}

function parseWorktrees(porcelain: string): ListedWorktree[] {
  return porcelain.split('\n\n').filter(Boolean).map((block) => ({
    path: /^worktree (.+)$/m.exec(block)?.[1] ?? '',
    branch: /^branch (.+)$/m.exec(block)?.[1] ?? null,
  }));
}

/** Removes the epic's worktree and branch after its merge. */
export async function removeEpicWorktree(mainRoot: string, epicId: string, location?: string): Promise<void> {
  const path = epicWorktreePath(mainRoot, epicId, location);
  const main = git(mainRoot);
  if (existsSync(path)) await main.raw(['worktree', 'remove', '--force', path]);
  await main.raw(['worktree', 'prune']);
  const branches = await main.branchLocal();
  if (branches.all.includes(epicBranch(epicId))) await main.raw(['branch', '-D', epicBranch(epicId)]);
  void basename;
}
