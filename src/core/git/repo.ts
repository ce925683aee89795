import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EnvironmentError } from '../errors.ts';

/** Where a process stands: its own worktree, the repository's common dir, and the shared database. */
export interface RepoLocation {
  /** Root of the worktree the process is in (real path); null inside a bare repository. */
  readonly worktreeRoot: string | null;
  /** The repository's common git dir (real path), shared by every worktree. */
  readonly commonDir: string;
  /** Root of the main worktree, or null for a bare repository. */
  readonly mainRoot: string | null;
  /** The shared database file. */
  readonly dbPath: string;
}

/**
 * Resolves the shared state database from any directory of a repository: main worktree, linked or
 * nested worktree, subdirectory, symlinked path or bare repository (SPEC §2).
 */
export function locateRepo(cwd: string, env: NodeJS.ProcessEnv = process.env): RepoLocation {
  const [commonRaw, isBare, topRaw] = revParse(cwd);
  if (!commonRaw) throw notARepo(cwd);
  const commonDir = realpathSync(commonRaw);
  const worktreeRoot = isBare === 'true' || !topRaw ? null : realpathSync(topRaw);
  const mainRoot = mainWorktreeRoot(cwd, commonDir);
  const dbPath = env.SPRINGFIELD_DB
    ? resolveOverride(env.SPRINGFIELD_DB, cwd)
    : mainRoot ? join(mainRoot, '.springfield', 'state.db') : join(commonDir, 'springfield', 'state.db');
  return { worktreeRoot, commonDir, mainRoot, dbPath };
}

/** One git call in the common case; inside a bare repository's own folder there is no toplevel. */
function revParse(cwd: string): string[] {
  try {
    return runGit(cwd, ['rev-parse', '--path-format=absolute', '--git-common-dir', '--is-bare-repository', '--show-toplevel']).split('\n');
  } catch (err) {
    if (!(err instanceof EnvironmentError) || err.code !== 'git_failed') throw err;
    return runGit(cwd, ['rev-parse', '--path-format=absolute', '--git-common-dir', '--is-bare-repository']).split('\n');
  }
}

/**
 * The main worktree: the parent of a common dir named `.git`; otherwise (submodules, separate git
 * dirs) the first entry git lists; a bare repository has none.
 */
function mainWorktreeRoot(cwd: string, commonDir: string): string | null {
  if (basename(commonDir) === '.git') {
    const root = dirname(commonDir);
    return existsSync(root) ? root : null;
  }
  const first = runGit(cwd, ['worktree', 'list', '--porcelain']).split('\n\n')[0] ?? '';
  const path = /^worktree (.+)$/m.exec(first)?.[1];
  if (!path || /^bare$/m.test(first) || !existsSync(path)) return null;
  return realpathSync(path);
}

function resolveOverride(path: string, cwd: string): string {
  return path.startsWith('/') ? path : join(cwd, path);
}

/** Runs git without a shell and returns trimmed stdout; a missing repository is an EnvironmentError. */
export function runGit(cwd: string, args: string[]): string {
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
    throw new EnvironmentError('no_such_directory', `${cwd}: no such directory`);
  }
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: gitEnv() }).trim();
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new EnvironmentError('git_missing', 'git is not installed or not on PATH');
    const stderr = String(e.stderr ?? '');
    if (/not a git repository/i.test(stderr)) throw notARepo(cwd);
    throw new EnvironmentError('git_failed', `git ${args[0]} failed: ${firstLine(stderr) || e.message}`);
  }
}

function gitEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.GIT_DIR;
  delete env.GIT_WORK_TREE;
  return env;
}

function notARepo(cwd: string): EnvironmentError {
  return new EnvironmentError('not_a_git_repository', `${cwd} is not inside a git repository (run springfield from a repository or one of its worktrees)`);
}

function firstLine(text: string): string {
  return text.split('\n').map((l) => l.trim()).find((l) => l.length > 0) ?? '';
}
