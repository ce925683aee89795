import { startGroup } from '../runs/processGroup.ts';

export interface VerificationResult {
  readonly command: string;
  readonly exit_code: number | null;
  readonly verdict: 'pass' | 'fail';
  readonly duration_ms: number;
  readonly output_tail: string;
  /** It ran past its timeout and its process group was ended. */
  readonly timed_out?: boolean;
}

const TAIL = 4000;

/** Runs each verification command (an argument array, never a shell) in the worktree; stops at the first failure. */
export async function runVerification(
  commands: readonly (readonly string[])[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 30 * 60_000,
): Promise<VerificationResult[]> {
  const results: VerificationResult[] = [];
  for (const argv of commands) {
    const result = await runCommand(argv, cwd, env, timeoutMs);
    results.push(result);
    if (result.verdict === 'fail') break;
  }
  return results;
}

/** Shell-like display of an argument array (quoted where needed); never run by a shell. */
export function displayCommand(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

/**
 * Runs one command in its own process group (ended whole at the timeout) and keeps the end of its
 * output: what verification, worktree setup and archive commands share.
 */
export async function runCommand(
  argv: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  graceMs = 5000,
): Promise<VerificationResult> {
  const started = Date.now();
  const command = displayCommand(argv);
  if (!argv[0])
    return {
      command,
      exit_code: null,
      verdict: 'fail',
      duration_ms: 0,
      output_tail: 'empty command',
      timed_out: false,
    };
  const end = await startGroup(argv, {
    cwd,
    env,
    timeoutMs,
    graceMs,
    stdout: null,
    stderr: null,
    stdin: 'ignore',
    tailLines: 80,
  }).done;
  return {
    command,
    exit_code: end.exitCode,
    verdict: end.exitCode === 0 && !end.timedOut ? 'pass' : 'fail',
    duration_ms: Date.now() - started,
    output_tail: end.tail.slice(-TAIL),
    timed_out: end.timedOut,
  };
}

/** A small counting semaphore: verification runs share a pool so parallel agents do not trample builds. */
export class SlotPool {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(size: number) {
    this.free = Math.max(1, size);
  }
  async use<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((r) => this.waiting.push(r));
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}
