import { lstatSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { EnvironmentError } from '../errors.ts';
import { ensureOwnDirectory } from '../safeFiles.ts';

/** The folder, at the root of a worktree Springfield made, that holds its runs' context files. */
export const WORKTREE_CONTEXT_DIR = '.springfield-context';

/**
 * Where a run's context file is written (docs/agents.md, "The context file carries the
 * instructions"): inside the folder the agent works in, because agent CLIs refuse to read files
 * outside it without a prompt nobody answers (Claude Code's Read, Gemini's read_file, opencode's
 * external directories). In the main worktree that is `.springfield/context/` beside the database;
 * in any other worktree a `.springfield-context/` folder that ignores itself in git.
 */
export function contextDirFor(worktree: string, mainRoot: string | null, stateFile: string): string {
  const stateDir = dirname(stateFile);
  if (mainRoot !== null && resolve(worktree) === resolve(mainRoot)) return join(stateDir, 'context');
  if (resolve(stateDir).startsWith(resolve(worktree) + '/')) return join(stateDir, 'context');
  return join(worktree, WORKTREE_CONTEXT_DIR);
}

/**
 * Makes the context folder (a real directory of this user's, never a link a branch planted) and,
 * in a worktree, its `.gitignore` of `*`, so neither `git add -A` nor a diff ever sees a context file.
 */
export function ensureContextDir(dir: string): void {
  ensureOwnDirectory(dir);
  if (!dir.endsWith(WORKTREE_CONTEXT_DIR)) return;
  const ignore = join(dir, '.gitignore');
  try {
    writeFileSync(ignore, '# Springfield: context files of agent runs; never committed\n*\n', { flag: 'wx', mode: 0o644 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (!lstatSync(ignore).isFile()) throw new EnvironmentError('unsafe_directory', `${ignore} is not a regular file; refusing to write context files beside it`);
  }
}
