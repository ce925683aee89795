import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { EnvironmentError } from '../errors.ts';

/** What one git call returned: its exit status and output, untrimmed. */
export interface GitRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface GitOptions {
  /** Written to git's standard input (e.g. NUL-separated paths for `--stdin -z`). */
  readonly input?: string;
}

/**
 * Runs git with an argument array (never a shell) in `cwd`, under the one environment policy
 * (gitEnv, docs/git.md). Throws only when git cannot run at all; a non-zero exit is returned.
 */
export function gitRun(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv, options: GitOptions = {}): GitRun {
  requireDirectory(cwd);
  const r = spawnSync('git', args, {
    cwd,
    env: gitEnv(env),
    encoding: 'utf8',
    input: options.input,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    maxBuffer: 512 * 1024 * 1024,
  });
  if (r.error) throw cannotRun(args, r.error);
  return { status: r.status ?? 128, stdout: r.stdout, stderr: r.stderr };
}

/** Runs git and returns stdout; a non-zero exit is one EnvironmentError line naming git's first error line. */
export function gitOut(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv, options: GitOptions = {}): string {
  const r = gitRun(cwd, args, env, options);
  if (r.status !== 0) throw gitFailure(cwd, args, r);
  return r.stdout;
}

/** gitRun without blocking the event loop: the scheduler's git work runs beside the editor. */
export function gitRunAsync(
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: GitOptions = {},
): Promise<GitRun> {
  requireDirectory(cwd);
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd,
      env: gitEnv(env),
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let failed = false;
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (e) => {
      failed = true;
      reject(cannotRun(args, e));
    });
    child.on('close', (code) => {
      if (!failed)
        resolve({
          status: code ?? 128,
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
        });
    });
    if (options.input !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined); // git may exit before reading it all; its status says why
      child.stdin.end(options.input);
    }
  });
}

/** gitOut without blocking the event loop. */
export async function gitOutAsync(
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: GitOptions = {},
): Promise<string> {
  const r = await gitRunAsync(cwd, args, env, options);
  if (r.status !== 0) throw gitFailure(cwd, args, r);
  return r.stdout;
}

/** Passed through although they start with GIT_: who commits, which of the person's config files apply, where discovery stops. */
const KEPT_GIT =
  /^GIT_((AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)|CONFIG_(GLOBAL|SYSTEM|NOSYSTEM)|CEILING_DIRECTORIES|DISCOVERY_ACROSS_FILESYSTEM)$/;
/** Programs a person's terminal would start (editor, pager, password prompt), the message language, and what an editor host leaks. */
const DROPPED = /^(EDITOR|VISUAL|PAGER|SSH_ASKPASS|LANGUAGE|PREFIX|ELECTRON_RUN_AS_NODE|VSCODE_.*)$/;

/**
 * The environment of every git call (docs/git.md): the caller's, without the GIT_* variables that
 * point git at another repository or make it run programs (GIT_DIR, GIT_EDITOR, GIT_SSH_COMMAND,
 * GIT_CONFIG_PARAMETERS…), without EDITOR/PAGER/askpass; no prompt ever waits, no editor ever
 * starts, and messages are in English (Springfield matches and shows them).
 */
export function gitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || DROPPED.test(key) || (key.startsWith('GIT_') && !KEPT_GIT.test(key))) continue;
    out[key] = value;
  }
  out.GIT_TERMINAL_PROMPT = '0';
  out.GIT_EDITOR = ':';
  out.GIT_OPTIONAL_LOCKS = '0';
  out.LC_ALL = 'C.UTF-8';
  return out;
}

/** The one line a failed git call becomes: what ran, where, and git's error line. */
export function gitFailure(cwd: string, args: readonly string[], r: GitRun): EnvironmentError {
  const why = errorLine(r.stderr) || firstLine(r.stdout) || `exit ${r.status}`;
  if (/not a git repository/i.test(r.stderr)) return notARepository(cwd);
  return new EnvironmentError('git_failed', `git ${subcommand(args)} failed in ${cwd}: ${why}`);
}

export function notARepository(cwd: string): EnvironmentError {
  return new EnvironmentError(
    'not_a_git_repository',
    `${cwd} is not inside a git repository (run springfield from a repository or one of its worktrees)`,
  );
}

/** The first meaningful line of git's output (hints skipped). */
export function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0 && !l.startsWith('hint:')) ?? ''
  );
}

/**
 * The line of git's output that says what went wrong: its first `fatal:` or `error:` line, else its
 * first meaningful one. Progress comes first (`Preparing worktree (detached HEAD …)`) and is not the reason.
 */
export function errorLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !l.startsWith('hint:'));
  return lines.find((l) => /^(fatal|error):/.test(l)) ?? lines[0] ?? '';
}

/** The git command a call runs: `commit` in `-c core.quotePath=false commit …`, `worktree add`. */
function subcommand(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-c' || a === '-C') i++;
    else if (!a.startsWith('-'))
      return a === 'worktree' && args[i + 1] && !args[i + 1]?.startsWith('-') ? `${a} ${args[i + 1]}` : a;
  }
  return args[0] ?? '';
}

function requireDirectory(cwd: string): void {
  if (!existsSync(cwd) || !statSync(cwd).isDirectory())
    throw new EnvironmentError('no_such_directory', `${cwd}: no such directory`);
}

function cannotRun(args: readonly string[], error: Error): EnvironmentError {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT')
    return new EnvironmentError('git_missing', 'git is not installed or not on PATH');
  return new EnvironmentError('git_failed', `git ${subcommand(args)} could not run: ${error.message}`);
}
