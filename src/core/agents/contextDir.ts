import { dirname, join, resolve } from 'node:path';
import { ensureExcluded } from '../git/gitignore.ts';
import { ensureOwnDirectory } from '../safeFiles.ts';

/** The folder, at the root of a worktree Springfield made, that holds its runs' context files. */
export const WORKTREE_CONTEXT_DIR = '.springfield-context';

/**
 * Where a run's context file is written (docs/agents.md, "The context file carries the
 * instructions"): inside the folder the agent works in, because agent CLIs refuse to read files
 * outside it without a prompt nobody answers (Claude Code's Read, Gemini's read_file, opencode's
 * external directories). In the main worktree that is `.springfield/context/` beside the database;
 * in any other worktree a `.springfield-context/` folder, which the repository's own exclude file
 * keeps out of git (see ensureContextDir).
 */
export function contextDirFor(worktree: string, mainRoot: string | null, stateFile: string): string {
  const stateDir = dirname(stateFile);
  if (mainRoot !== null && resolve(worktree) === resolve(mainRoot)) return join(stateDir, 'context');
  if (resolve(stateDir).startsWith(resolve(worktree) + '/')) return join(stateDir, 'context');
  return join(worktree, WORKTREE_CONTEXT_DIR);
}

/**
 * Makes the context folder: a real directory of this user's, never a link a branch planted. The
 * worktree's folder is kept out of git by the repository's own exclude file, not by a .gitignore
 * inside it: Gemini CLI's read_file refuses a file a .gitignore names, and reads only a main
 * worktree's exclude file (docs/agents.md).
 */
export function ensureContextDir(dir: string, commonDir: string): void {
  if (dir.endsWith(WORKTREE_CONTEXT_DIR)) ensureExcluded(commonDir, `/${WORKTREE_CONTEXT_DIR}/`);
  ensureOwnDirectory(dir);
}
