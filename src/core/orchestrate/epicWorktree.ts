import { randomBytes } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { RefusedError } from '../errors.ts';
import { handoffFileName } from '../epics/handoff.ts';
import { gitOutAsync } from '../git/exec.ts';
import { branchExists, worktreeStatus } from '../git/status.ts';
import { parseWorktreeList } from '../git/worktrees.ts';

export interface EpicWorktree {
  readonly path: string;
  readonly branch: string;
  readonly created: boolean;
  /** Uncommitted changes found in a reused worktree: reported, never clobbered. */
  readonly dirty: readonly string[];
  /** The commit that brought the handoff and/or the approved plan's text, if one was needed. */
  readonly handoffCommitted: boolean;
}

/** The approved plan version whose text the epic's branch must carry (docs/scheduler-faults.md). */
export interface ApprovedPlan {
  readonly planPath: string;
  readonly body: string;
  readonly version: number;
  /** The handoff text the branch must carry (docs/lifecycle.md), rendered from the store. */
  readonly handoff?: string;
}

/** Where an epic's worktree goes: the configured folder, else a sibling `<repo>.springfield/<epic-id>`. */
export function epicWorktreePath(mainRoot: string, epicId: string, location?: string): string {
  return join(configured(location) ? resolve(mainRoot, location) : defaultFolder(mainRoot), epicId);
}

function configured(location: string | undefined): location is string {
  return location !== undefined && location.trim() !== '';
}

function defaultFolder(mainRoot: string): string {
  return `${mainRoot}.springfield`;
}

/**
 * Removes the default worktree folder, `<repo>.springfield/`, once its last worktree is gone, so
 * planning runs and merges leave nothing beside the repository. A configured folder is the
 * person's and stays; a symbolic link at the default place is not followed; a folder with anything
 * in it stays (rmdir removes only an empty directory), and so does a folder this process is adding a
 * worktree to (`addingWorktree`): git makes the folder, then the worktree in it, and a removal between
 * the two failed the add. Tidying is best effort: it never fails a removal.
 */
export function removeEmptyWorktreeFolder(mainRoot: string, location?: string): void {
  if (configured(location)) return;
  const folder = defaultFolder(mainRoot);
  if ((adding.get(folder) ?? 0) > 0) return;
  if (!lstatSync(folder, { throwIfNoEntry: false })?.isDirectory()) return;
  try {
    rmdirSync(folder);
  } catch {
    // Not empty, gone already, or not ours to remove: it stays.
  }
}

/** Per default worktree folder, how many `git worktree add` calls of this process are running in it. */
const adding = new Map<string, number>();

/** Runs `add`, a `git worktree add` into the default folder, keeping this process from removing that folder meanwhile. */
export async function addingWorktree<T>(mainRoot: string, add: () => Promise<T>): Promise<T> {
  const folder = defaultFolder(mainRoot);
  adding.set(folder, (adding.get(folder) ?? 0) + 1);
  try {
    return await add();
  } finally {
    const left = (adding.get(folder) ?? 1) - 1;
    if (left > 0) adding.set(folder, left);
    else adding.delete(folder);
  }
}

export function epicBranch(epicId: string): string {
  return `springfield/${epicId}`;
}

/** Git in one directory, under the one environment policy; a failure is one line naming the command. */
type Git = (args: readonly string[]) => Promise<string>;

function git(cwd: string): Git {
  return (args) => gitOutAsync(cwd, args, process.env);
}

/**
 * Creates (or reuses) the epic's worktree on branch `springfield/<epic-id>` from the main branch,
 * and commits there, together, the handoff (rendered from the store; a re-plan adds a version) and
 * the approved plan version's text whenever the branch's copies differ: builders never depend on a
 * file that exists only uncommitted in another worktree, and the handoff never touches main.
 */
export async function ensureEpicWorktree(
  mainRoot: string,
  epicId: string,
  location?: string,
  plan?: ApprovedPlan,
): Promise<EpicWorktree> {
  const path = epicWorktreePath(mainRoot, epicId, location);
  const branch = epicBranch(epicId);
  const main = git(mainRoot);
  const listed = parseWorktreeList(await main(['worktree', 'list', '--porcelain', '-z']));
  const real = existsSync(path) ? realpathSync(path) : path;
  const known = listed.find((w) => w.path === real || w.path === path);
  let created = false;
  if (!known) {
    if (existsSync(path))
      throw new RefusedError(
        'worktree_path_taken',
        `${path} exists but is not a worktree of this repository; move it or set springfield.worktrees.location`,
      );
    // A person's checkout on the epic's branch stays theirs: the epic's own worktree waits for the branch (docs/lifecycle.md).
    const holder = listed.find((w) => w.branch === `refs/heads/${branch}` && !w.missing);
    if (holder)
      throw new RefusedError(
        'branch_checked_out',
        `waiting: branch ${branch} is checked out in ${holder.path}; ${epicId} is built in a worktree of its own — switch that checkout to another branch and the scheduler goes on`,
      );
    mkdirSync(dirname(path), { recursive: true });
    const args = (await branchExists(mainRoot, branch, process.env))
      ? ['worktree', 'add', path, branch]
      : ['worktree', 'add', '-b', branch, path, 'HEAD'];
    await addingWorktree(mainRoot, () => main(args));
    created = true;
  } else if (known.branch && known.branch !== `refs/heads/${branch}`) {
    throw new RefusedError(
      'worktree_branch',
      `${path} is on ${known.branch.replace('refs/heads/', '')}, not ${branch}`,
    );
  }
  const wt = git(path);
  const dirty = (await worktreeStatus(path, process.env))
    .map((f) => f.path)
    .filter((f) => f !== handoffFileName(epicId));
  const handoff = plan?.handoff ? await stageText(path, handoffFileName(epicId), plan.handoff, wt) : false;
  const planned = plan ? await stagePlan(path, plan, wt) : false;
  const paths = [...(handoff ? [handoffFileName(epicId)] : []), ...(planned && plan ? [plan.planPath] : [])];
  if (paths.length > 0) {
    const what =
      handoff && planned
        ? `Handoff and approved plan v${plan?.version} for ${epicId}`
        : handoff
          ? `Handoff for ${epicId} (plan v${plan?.version})`
          : `Approved plan v${plan?.version} for ${epicId}`;
    await wt(['commit', '-q', '--no-verify', '-m', what, '--trailer', `Springfield-Epic: ${epicId}`, '--', ...paths]);
  }
  return {
    path: existsSync(path) ? realpathSync(path) : path,
    branch,
    created,
    dirty,
    handoffCommitted: paths.length > 0,
  };
}

/**
 * Writes the approved plan's text into the worktree and commits it when the branch's copy is
 * missing or differs (a restore after an agent deleted it, too). Returns whether it committed.
 */
export async function depositApprovedPlan(worktree: string, epicId: string, plan: ApprovedPlan): Promise<boolean> {
  const wt = git(worktree);
  if (!(await stagePlan(worktree, plan, wt))) return false;
  await wt([
    'commit',
    '-q',
    '--no-verify',
    '-m',
    `Approved plan v${plan.version} for ${epicId}`,
    '--trailer',
    `Springfield-Epic: ${epicId}`,
    '--',
    plan.planPath,
  ]);
  return true;
}

/** Stages a file with the given text when the branch's copy is missing or differs. Returns whether it staged a change. */
async function stageText(path: string, name: string, text: string, wt: Git): Promise<boolean> {
  const target = join(path, name);
  const current = existsSync(target) ? readFileSync(target, 'utf8') : null;
  const tracked = (await wt(['ls-files', '--', name])).trim() !== '';
  if (current === text && tracked) return false;
  if (current !== text) writeInside(path, name, text);
  await wt(['add', '-f', '--', name]);
  return (await wt(['diff', '--cached', '--name-only', '--', name])).trim() !== '';
}

/** Stages the approved plan text when the worktree's file is missing or not byte-equal to it. */
async function stagePlan(path: string, plan: ApprovedPlan, wt: Git): Promise<boolean> {
  insideOnly(plan.planPath);
  const target = join(path, plan.planPath);
  const current = existsSync(target) ? readFileSync(target, 'utf8') : null;
  const tracked = (await wt(['ls-files', '--', plan.planPath])).trim() !== '';
  if (current === plan.body && tracked) return false;
  if (current !== plan.body) writeInside(path, plan.planPath, plan.body);
  await wt(['add', '-f', '--', plan.planPath]);
  return (await wt(['diff', '--cached', '--name-only', '--', plan.planPath])).trim() !== '';
}

function insideOnly(rel: string): void {
  if (isAbsolute(rel) || rel.split(/[\\/]/).includes('..'))
    throw new RefusedError('unsafe_path', `${rel}: a plan path must stay inside the repository`);
}

/**
 * Writes a file at a repository-relative path inside `root` without following a planted link: the
 * folder must resolve inside `root`, the text goes to a fresh exclusive temporary file, and a rename
 * replaces whatever was at the path (a link included) instead of writing through it.
 */
function writeInside(root: string, rel: string, text: string): void {
  insideOnly(rel);
  const rootReal = realpathSync(root);
  const dir = dirname(join(rootReal, rel));
  mkdirSync(dir, { recursive: true });
  const dirReal = realpathSync(dir);
  if (dirReal !== rootReal && !dirReal.startsWith(rootReal + sep))
    throw new RefusedError('unsafe_path', `${rel}: its folder resolves outside ${root}`);
  const tmp = join(dirReal, `.springfield-${randomBytes(8).toString('hex')}.tmp`);
  writeFileSync(tmp, text, { flag: 'wx', mode: 0o644 });
  renameSync(tmp, join(dirReal, rel.split(/[\\/]/).at(-1) ?? rel));
}

/** Removes the epic's worktree and branch after its merge (and the default folder, if that leaves it empty). */
export async function removeEpicWorktree(mainRoot: string, epicId: string, location?: string): Promise<void> {
  const path = epicWorktreePath(mainRoot, epicId, location);
  const main = git(mainRoot);
  if (existsSync(path)) await main(['worktree', 'remove', '--force', path]);
  await main(['worktree', 'prune']);
  if (await branchExists(mainRoot, epicBranch(epicId), process.env)) await main(['branch', '-D', epicBranch(epicId)]);
  removeEmptyWorktreeFolder(mainRoot, location);
}
