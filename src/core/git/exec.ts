import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { EnvironmentError } from '../errors.ts';

export interface GitRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs git with an argument array (never a shell) in `cwd`, returning its exit status and output untrimmed. */
export function gitRun(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv): GitRun {
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new EnvironmentError('no_such_directory', `${cwd}: no such directory`);
  const r = spawnSync('git', args, { cwd, env: gitEnv(env), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 512 * 1024 * 1024 });
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new EnvironmentError('git_missing', 'git is not installed or not on PATH');
    throw new EnvironmentError('git_failed', `git ${args[0] ?? ''} failed: ${r.error.message}`);
  }
  return { status: r.status ?? 128, stdout: r.stdout, stderr: r.stderr };
}

/** Runs git and returns stdout; a non-zero exit is an EnvironmentError naming git's first error line. */
export function gitOut(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv): string {
  const r = gitRun(cwd, args, env);
  if (r.status !== 0) throw new EnvironmentError('git_failed', `git ${args[0] ?? ''} failed: ${firstLine(r.stderr) || `exit ${r.status}`}`);
  return r.stdout;
}

/** The caller's environment without GIT_DIR/GIT_WORK_TREE, so git finds the repository from `cwd`. */
export function gitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  delete out.GIT_DIR;
  delete out.GIT_WORK_TREE;
  return out;
}

export function firstLine(text: string): string {
  return text.split('\n').map((l) => l.trim()).find((l) => l.length > 0 && !l.startsWith('hint:')) ?? '';
}
