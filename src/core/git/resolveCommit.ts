import { EnvironmentError, UsageError } from '../errors.ts';
import { gitEnv } from './exec.ts';

/**
 * The full hash of the commit `rev` names in the repository of `cwd` (a hash, an abbreviation, a
 * branch, HEAD…), as `git rev-parse --verify <rev>^{commit}` resolves it; a UsageError otherwise.
 * (node:child_process is loaded only here, when a commit is given: `complete` runs on every step.)
 */
export function resolveCommit(cwd: string, rev: string, env: NodeJS.ProcessEnv, option = '--commit'): string {
  // A leading '-' would reach git as an option, and control characters never name a commit.
  if (rev === '' || rev.startsWith('-') || /[\s\p{Cc}]/u.test(rev)) throw new UsageError('bad_option', `${option} needs a commit, got '${rev}'`);
  const r = process.getBuiltinModule('node:child_process').spawnSync('git', ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], {
    cwd, env: gitEnv(env), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    throw code === 'ENOENT' && !process.getBuiltinModule('node:fs').existsSync(cwd)
      ? new EnvironmentError('no_such_directory', `${cwd}: no such directory`)
      : new EnvironmentError(code === 'ENOENT' ? 'git_missing' : 'git_failed', code === 'ENOENT' ? 'git is not installed or not on PATH' : `git rev-parse failed: ${r.error.message}`);
  }
  const hash = r.stdout.trim();
  if (r.status !== 0 || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(hash)) throw new UsageError('unknown_commit', `${option} ${rev}: no such commit in ${cwd}`);
  return hash;
}
