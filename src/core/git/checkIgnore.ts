import { gitFailure, gitRun } from './exec.ts';

/**
 * The paths of `paths` git ignores in `cwd`. NUL-separated through stdin (`-z` needs `--stdin`), so
 * any file name is safe. `noIndex`: match the ignore rules even for tracked files.
 */
export function ignoredPaths(
  cwd: string,
  paths: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { noIndex?: boolean } = {},
): string[] {
  if (paths.length === 0) return [];
  const args = ['check-ignore', '--stdin', '-z', ...(options.noIndex ? ['--no-index'] : [])];
  const r = gitRun(cwd, args, env, { input: paths.join('\0') + '\0' });
  if (r.status === 1) return [];
  if (r.status !== 0) throw gitFailure(cwd, args, r);
  return r.stdout.split('\0').filter(Boolean);
}
