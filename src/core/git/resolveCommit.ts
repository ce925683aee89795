import { UsageError } from '../errors.ts';
import { gitRun } from './exec.ts';

/**
 * The full hash of the commit `rev` names in the repository of `cwd` (a hash, an abbreviation, a
 * branch, HEAD…), as `git rev-parse --verify <rev>^{commit}` resolves it; a UsageError otherwise.
 */
export function resolveCommit(cwd: string, rev: string, env: NodeJS.ProcessEnv, option = '--commit'): string {
  // A leading '-' would reach git as an option, and control characters never name a commit.
  if (rev === '' || rev.startsWith('-') || /[\s\p{Cc}]/u.test(rev))
    throw new UsageError('bad_option', `${option} needs a commit, got '${rev}'`);
  const r = gitRun(cwd, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], env);
  const hash = r.stdout.trim();
  if (r.status !== 0 || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(hash))
    throw new UsageError('unknown_commit', `${option} ${rev}: no such commit in ${cwd}`);
  return hash;
}
