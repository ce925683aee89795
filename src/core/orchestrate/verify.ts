import { spawn } from 'node:child_process';

export interface VerificationResult {
  readonly command: string;
  readonly exit_code: number | null;
  readonly verdict: 'pass' | 'fail';
  readonly duration_ms: number;
  readonly output_tail: string;
}

const TAIL = 4000;

/** Runs each verification command (an argument array, never a shell) in the worktree; stops at the first failure. */
export async function runVerification(commands: readonly (readonly string[])[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 30 * 60_000): Promise<VerificationResult[]> {
  const results: VerificationResult[] = [];
  for (const argv of commands) {
    const result = await runOne(argv, cwd, env, timeoutMs);
    results.push(result);
    if (result.verdict === 'fail') break;
  }
  return results;
}

function runOne(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<VerificationResult> {
  const started = Date.now();
  const command = argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
  return new Promise((done) => {
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-TAIL);
    };
    const [cmd, ...args] = argv;
    if (!cmd) return done({ command, exit_code: null, verdict: 'fail', duration_ms: 0, output_tail: 'empty verification command' });
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => {
      output += `\n[springfield] killed after ${Math.round(timeoutMs / 1000)} s`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => {
      clearTimeout(timer);
      done({ command, exit_code: 127, verdict: 'fail', duration_ms: Date.now() - started, output_tail: `cannot run ${cmd}: ${err.message}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ command, exit_code: code, verdict: code === 0 ? 'pass' : 'fail', duration_ms: Date.now() - started, output_tail: output });
    });
  });
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
