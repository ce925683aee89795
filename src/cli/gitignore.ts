import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RepoLocation } from '../core/git/repo.ts';

/** Adds `.springfield/` to the main worktree's .gitignore once; returns whether it wrote. */
export function ensureGitignored(location: RepoLocation): boolean {
  if (!location.mainRoot) return false;
  const file = join(location.mainRoot, '.gitignore');
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (current.split(/\r?\n/).some((l) => ['.springfield', '.springfield/', '/.springfield', '/.springfield/'].includes(l.trim()))) return false;
  appendFileSync(file, `${current === '' || current.endsWith('\n') ? '' : '\n'}.springfield/\n`);
  return true;
}
