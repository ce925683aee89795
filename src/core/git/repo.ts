import { existsSync, lstatSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { EnvironmentError, RefusedError } from '../errors.ts';
import { gitOut, notARepository } from './exec.ts';
import { parseWorktreeList } from './worktrees.ts';

/** Where a process stands: its own worktree, the repository's common dir, and the shared database. */
export interface RepoLocation {
  /** Root of the worktree the process is in (real path); null inside a bare repository. */
  readonly worktreeRoot: string | null;
  /** The repository's common git dir (real path), shared by every worktree. */
  readonly commonDir: string;
  /** This worktree's own git dir (real path): the common dir for the main worktree, `<common>/worktrees/<name>` for a linked one. */
  readonly gitDir: string;
  /** Root of the main worktree, or null for a bare repository. */
  readonly mainRoot: string | null;
  /** The shared database file. */
  readonly dbPath: string;
}

/**
 * Resolves the shared state database from any directory of a repository: main worktree, linked or
 * nested worktree, subdirectory, symlinked path or bare repository (docs/cli-contract.md, "Where the state is").
 */
export function locateRepo(cwd: string, env: NodeJS.ProcessEnv = process.env): RepoLocation {
  const { commonDir, gitDir, worktreeRoot } = findRepoOnDisk(cwd, env) ?? askGitForRepo(cwd, env);
  const mainRoot = mainWorktreeRoot(cwd, commonDir, env);
  const dbPath = env.SPRINGFIELD_DB
    ? resolveOverride(env.SPRINGFIELD_DB, cwd)
    : mainRoot
      ? join(mainRoot, '.springfield', 'state.db')
      : join(commonDir, 'springfield', 'state.db');
  if (!env.SPRINGFIELD_DB && mainRoot) refuseLinkedStateDir(join(mainRoot, '.springfield'));
  return { worktreeRoot, commonDir, gitDir, mainRoot, dbPath };
}

/**
 * `.springfield` is a place a repository controls (it can commit a symbolic link there): state is
 * never created or read through a link, which could point anywhere the user can write
 * (docs/trust.md). A person who wants the state elsewhere sets SPRINGFIELD_DB.
 */
function refuseLinkedStateDir(dir: string): void {
  let link: boolean;
  try {
    link = lstatSync(dir).isSymbolicLink();
  } catch {
    return; // absent: created as a real directory on the first write
  }
  if (!link) return;
  let target = '';
  try {
    target = ` (to ${readlinkSync(dir)})`;
  } catch {
    /* shown without its target */
  }
  throw new RefusedError(
    'state_dir_link',
    `${dir} is a symbolic link${target}; Springfield keeps its state only in a real directory there: remove the link, or set SPRINGFIELD_DB to keep the state elsewhere`,
  );
}

/**
 * Git's own discovery done with a few file reads (a CLI call should not spawn git): the nearest
 * `.git` directory or `gitdir:` file above `cwd`, and its `commondir`. Anything unusual (the
 * directory is itself a git dir, a `core.worktree` setting, discovery variables in the
 * environment) returns undefined and git decides.
 */
export function findRepoOnDisk(
  cwd: string,
  env: NodeJS.ProcessEnv,
): { commonDir: string; gitDir: string; worktreeRoot: string } | undefined {
  if (env.GIT_CEILING_DIRECTORIES || env.GIT_COMMON_DIR || env.GIT_DISCOVERY_ACROSS_FILESYSTEM) return undefined;
  let dir: string;
  try {
    dir = realpathSync.native(cwd);
  } catch {
    return undefined;
  }
  for (;;) {
    const dotGit = join(dir, '.git');
    const gitDir = gitDirAt(dotGit);
    if (gitDir === null) return undefined;
    if (gitDir !== undefined) {
      const commonDir = realpathSync.native(resolve(gitDir, readText(join(gitDir, 'commondir'))?.trim() || '.'));
      const config = readText(join(commonDir, 'config')) ?? '';
      // A submodule's config names its worktree; any other core.worktree is left to git.
      const worktree = /^\s*worktree\s*=\s*(.+?)\s*$/im.exec(config)?.[1];
      if (worktree !== undefined && realPath(resolve(commonDir, worktree)) !== dir) return undefined;
      if (gitDir === dotGit && /^\s*bare\s*=\s*true\s*$/im.test(config)) return undefined;
      return { commonDir, gitDir: realpathSync.native(gitDir), worktreeRoot: dir };
    }
    if (isGitDir(dir)) return undefined;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The git dir `.git` points to; undefined when there is no `.git`; null when it is not one git would accept. */
function gitDirAt(dotGit: string): string | null | undefined {
  let stat;
  try {
    stat = statSync(dotGit);
  } catch {
    return undefined;
  }
  if (stat.isDirectory()) return isGitDir(dotGit) ? dotGit : null;
  const target = /^gitdir: (.+)$/m.exec(readText(dotGit) ?? '')?.[1]?.trim();
  if (!target) return null;
  const gitDir = resolve(dirname(dotGit), target);
  return isGitDir(gitDir) ? gitDir : null;
}

/** A directory with HEAD and either objects/ or a commondir file, as git checks it. */
function isGitDir(dir: string): boolean {
  return existsSync(join(dir, 'HEAD')) && (existsSync(join(dir, 'objects')) || existsSync(join(dir, 'commondir')));
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The same answer from git itself, for the cases findRepoOnDisk() leaves to it. */
export function askGitForRepo(
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): { commonDir: string; gitDir: string; worktreeRoot: string | null } {
  const [commonRaw, gitDirRaw, isBare, topRaw] = revParse(cwd, env);
  if (!commonRaw || !gitDirRaw) throw notARepository(cwd);
  return {
    commonDir: realpathSync.native(commonRaw),
    gitDir: realpathSync.native(gitDirRaw),
    worktreeRoot: isBare === 'true' || !topRaw ? null : realpathSync.native(topRaw),
  };
}

/** One git call in the common case; inside a bare repository's own folder there is no toplevel. */
function revParse(cwd: string, env: NodeJS.ProcessEnv): string[] {
  const args = [
    'rev-parse',
    '--path-format=absolute',
    '--git-common-dir',
    '--absolute-git-dir',
    '--is-bare-repository',
  ];
  try {
    return gitOut(cwd, [...args, '--show-toplevel'], env)
      .trim()
      .split('\n');
  } catch (err) {
    if (!(err instanceof EnvironmentError) || err.code !== 'git_failed') throw err;
    return gitOut(cwd, args, env).trim().split('\n');
  }
}

/**
 * The main worktree: the parent of a common dir named `.git`; a submodule's checkout; otherwise
 * (separate git dirs) the first entry git lists; a bare repository has none.
 */
function mainWorktreeRoot(cwd: string, commonDir: string, env: NodeJS.ProcessEnv): string | null {
  if (basename(commonDir) === '.git') {
    const root = dirname(commonDir);
    return existsSync(root) ? root : null;
  }
  const config = readText(join(commonDir, 'config')) ?? '';
  if (/^\s*bare\s*=\s*true\s*$/im.test(config)) return null;
  // A submodule: its config names the checkout, which git worktree list would not.
  const named = /^\s*worktree\s*=\s*(.+?)\s*$/im.exec(config)?.[1];
  const checkout = named === undefined ? undefined : realPath(resolve(commonDir, named));
  if (checkout !== undefined) return checkout;
  const first = parseWorktreeList(gitOut(cwd, ['worktree', 'list', '--porcelain', '-z'], env))[0];
  return first && !first.bare && !first.missing ? first.path : null;
}

function resolveOverride(path: string, cwd: string): string {
  return path.startsWith('/') ? path : join(cwd, path);
}
