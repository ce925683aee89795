import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { RepoLocation } from './repo.ts';

const ENTRIES = ['.springfield', '.springfield/', '/.springfield', '/.springfield/'];

/**
 * Adds `.springfield/` to the main worktree's .gitignore once, so the state store never shows in
 * Source Control. Called on the first write of any kind (CLI or editor) that creates the database
 * in its default place. A .gitignore that is a symlink is left alone (never written through).
 * Returns whether it wrote.
 */
export function ensureGitignored(location: RepoLocation): boolean {
  if (!location.mainRoot || location.dbPath !== join(location.mainRoot, '.springfield', 'state.db')) return false;
  const file = join(location.mainRoot, '.gitignore');
  if (existsSync(file) && lstatSync(file).isSymbolicLink()) return false;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (current.split(/\r?\n/).some((l) => ENTRIES.includes(l.trim()))) return false;
  // O_NOFOLLOW: a symlink planted between the check and the write is refused, not followed.
  const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
  try {
    writeSync(fd, `${current === '' || current.endsWith('\n') ? '' : '\n'}.springfield/\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Adds `pattern` once to the repository's own exclude file (`<common git dir>/info/exclude`): git
 * then ignores it in every worktree, and nothing is written into any worktree or committed. Written
 * like the .gitignore above (appended, never through a link). Returns whether it wrote.
 */
export function ensureExcluded(commonDir: string, pattern: string): boolean {
  const info = join(commonDir, 'info');
  if (!existsSync(info)) mkdirSync(info, { recursive: true });
  if (lstatSync(info).isSymbolicLink()) return false;
  const file = join(info, 'exclude');
  if (existsSync(file) && lstatSync(file).isSymbolicLink()) return false;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (current.split(/\r?\n/).some((l) => l.trim() === pattern)) return false;
  const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
  try {
    writeSync(fd, `${current === '' || current.endsWith('\n') ? '' : '\n'}${pattern}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}
