import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';

/** Where output is copied: a stream, or anything that takes chunks (a renderer in front of one). */
export interface OutputSink {
  write(chunk: Buffer | string): unknown;
}

export interface GroupOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Ends the group after this long (SIGTERM, then SIGKILL after the grace); 0: never. */
  readonly timeoutMs: number;
  readonly graceMs: number;
  /** Where the output also goes (a terminal, a log); null keeps only the tail. */
  readonly stdout: OutputSink | null;
  readonly stderr: OutputSink | null;
  readonly stdin: 'inherit' | 'ignore';
  readonly tailLines?: number;
  /** Keep the last this many bytes of stdout as well (for reading usage from it); 0 or absent: none. */
  readonly captureStdoutBytes?: number;
  /** The same for stderr (where some CLIs report their error). */
  readonly captureStderrBytes?: number;
  /** Called with each chunk of output (stdout or stderr), e.g. to tell a live agent from a stalled one. */
  readonly onOutput?: (chunk: Buffer) => void;
}

export interface GroupEnd {
  /** The leader's exit code; 128+N when signal N ended it; 127/126 when it could not start. */
  readonly exitCode: number;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  readonly spawnError: NodeJS.ErrnoException | null;
  /** The last lines of stdout and stderr together, without terminal escape sequences. */
  readonly tail: string;
  /** Processes of the group still alive after the leader exited, ended by us. */
  readonly leftovers: boolean;
  /** The end of stdout, when captureStdoutBytes asked for it. */
  readonly stdout?: string;
  /** The end of stderr, when captureStderrBytes asked for it. */
  readonly stderr?: string;
}

export interface RunningGroup {
  readonly pid: number | undefined;
  readonly done: Promise<GroupEnd>;
  /** Ends the whole group: `signal` now, SIGKILL after the grace if anything is left. */
  stop(signal?: NodeJS.Signals): void;
}

const GROUPS = process.platform !== 'win32';

/**
 * Starts a command (an argument array, never a shell) as the leader of its own process group, so a
 * timeout or a stop ends everything it started, and nothing it left behind outlives it
 * (docs/scheduler-faults.md). Output passes through and its last lines are kept.
 */
export function startGroup(argv: readonly string[], options: GroupOptions): RunningGroup {
  const tail = new OutputTail(options.tailLines ?? 40);
  const [cmd, ...args] = argv;
  // PWD says where the command runs: an inherited one names the launcher's folder (docs/agents.md).
  const child = spawn(cmd ?? '', args, {
    cwd: options.cwd,
    env: { ...options.env, PWD: options.cwd },
    detached: GROUPS,
    stdio: [options.stdin, 'pipe', 'pipe'],
  });
  const pid = child.pid;
  let timedOut = false;
  let stopping = false;
  let killTimer: NodeJS.Timeout | undefined;
  const signalGroup = (signal: NodeJS.Signals | 0): boolean => {
    if (pid === undefined) return false;
    try {
      if (GROUPS) process.kill(-pid, signal);
      else if (signal !== 0) child.kill(signal);
      return true;
    } catch {
      return false;
    }
  };
  const stop = (signal: NodeJS.Signals = 'SIGTERM'): void => {
    stopping = true;
    if (!signalGroup(signal) || killTimer) return;
    killTimer = setTimeout(() => signalGroup('SIGKILL'), options.graceMs);
    killTimer.unref();
  };
  const timer =
    options.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          tail.note(
            `[springfield] timed out after ${Math.round(options.timeoutMs / 1000)} s: ending the agent's process group`,
          );
          stop('SIGTERM');
        }, options.timeoutMs)
      : undefined;
  timer?.unref();
  const forward = (sink: OutputSink | null) => (chunk: Buffer) => {
    tail.push(chunk);
    options.onOutput?.(chunk);
    sink?.write(chunk);
  };
  const out = new Captured(options.captureStdoutBytes ?? 0);
  const err = new Captured(options.captureStderrBytes ?? 0);
  if (out.limit > 0) child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
  if (err.limit > 0) child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
  child.stdout?.on('data', forward(options.stdout));
  child.stderr?.on('data', forward(options.stderr));
  const closed = new Promise<void>((r) => child.once('close', () => r()));
  const done = new Promise<GroupEnd>((resolve) => {
    const finish = (end: Omit<GroupEnd, 'tail' | 'timedOut'>): void => {
      if (timer) clearTimeout(timer);
      resolve({
        ...end,
        timedOut,
        tail: tail.text(),
        ...(out.limit > 0 ? { stdout: out.text() } : {}),
        ...(err.limit > 0 ? { stderr: err.text() } : {}),
      });
    };
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return;
      tail.note(`cannot start '${cmd ?? ''}': ${err.message}`);
      finish({ exitCode: err.code === 'EACCES' ? 126 : 127, signal: null, spawnError: err, leftovers: false });
    });
    child.once('exit', (code, signal) => {
      const exitCode = signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1);
      void endLeftovers(signalGroup, options.graceMs).then((leftovers) => {
        if (killTimer) clearTimeout(killTimer);
        if (leftovers && !stopping) tail.note('[springfield] ended processes the agent left running');
        // The pipes close once every writer is gone; do not wait on a writer that escaped the group.
        let waited: NodeJS.Timeout | undefined;
        void Promise.race([
          closed,
          new Promise((r) => {
            waited = setTimeout(r, 500);
          }),
        ]).then(() => {
          clearTimeout(waited);
          finish({ exitCode, signal, spawnError: null, leftovers });
        });
      });
    });
  });
  return { pid, done, stop };
}

/** After the leader exits: TERM what is left of its group, then KILL it after the grace. */
async function endLeftovers(signalGroup: (s: NodeJS.Signals | 0) => boolean, graceMs: number): Promise<boolean> {
  if (!GROUPS || !signalGroup(0)) return false;
  signalGroup('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (signalGroup(0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  if (signalGroup(0)) signalGroup('SIGKILL');
  return true;
}

/** Ends the process group led by `pid` if one exists: TERM, then KILL after the grace. True when there was one. */
export async function endGroup(pid: number, graceMs: number): Promise<boolean> {
  const signalGroup = (signal: NodeJS.Signals | 0): boolean => {
    try {
      process.kill(GROUPS ? -pid : pid, signal);
      return true;
    } catch {
      return false;
    }
  };
  return endLeftovers(signalGroup, graceMs);
}

/**
 * Whether process group `pgid` still has a member started for run `runId` (its environment names
 * the run), so a lost run's agent is ended and a reused pid never is. Where there is no /proc to
 * read, a live group is taken as the run's.
 */
export function groupOfRun(pgid: number, runId: number): boolean {
  if (!GROUPS) return false;
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  if (!existsSync('/proc/self/stat')) return true;
  const mark = `SPRINGFIELD_RUN_ID=${runId}`;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // pgrp is the 3rd field after the parenthesised command name.
      const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (pgrp === pgid && readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(mark)) return true;
    } catch {
      // gone, or not ours to read
    }
  }
  return false;
}

/** The last `limit` bytes (about: whole chunks) of a stream. */
class Captured {
  private chunks: Buffer[] = [];
  private bytes = 0;
  readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes - (this.chunks[0]?.length ?? 0) >= this.limit && this.chunks.length > 1)
      this.bytes -= this.chunks.shift()?.length ?? 0;
  }

  text(): string {
    const all = Buffer.concat(this.chunks).toString('utf8');
    this.chunks = [];
    return all;
  }
}

// Terminal control sequences (CSI, OSC, single-character escapes) that mean nothing in a stored tail.
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
const MAX_LINE = 400;

/** The last `limit` lines of a stream, bounded in memory whatever the stream's size. */
export class OutputTail {
  private readonly lines: string[] = [];
  private partial = '';
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  push(chunk: Buffer | string): void {
    const text = (this.partial + chunk.toString()).replace(ESCAPES, '');
    const parts = text.split('\n');
    this.partial = (parts.pop() ?? '').slice(-4 * MAX_LINE);
    for (const line of parts) this.add(line);
  }

  /** A line of our own (a timeout, a start failure), kept in order with the output. */
  note(line: string): void {
    if (this.partial !== '') {
      this.add(this.partial);
      this.partial = '';
    }
    this.add(line);
  }

  text(): string {
    const all = this.partial === '' ? this.lines : [...this.lines, this.clean(this.partial)].slice(-this.limit);
    return all.join('\n');
  }

  private add(line: string): void {
    this.lines.push(this.clean(line));
    if (this.lines.length > this.limit) this.lines.shift();
  }

  /** A progress bar redrawn with carriage returns keeps only its last state. */
  private clean(line: string): string {
    const shown = line.replace(/\r+$/, '').split('\r').at(-1) ?? '';
    return shown.length > MAX_LINE ? `${shown.slice(0, MAX_LINE)}…` : shown;
  }
}

/** Whether a process with this pid runs on this host (EPERM means it exists but is not ours; a zombie does not run). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie (ended, not yet reaped by whoever adopted it) answers signal 0 but runs nothing.
  return !zombie(pid);
}

function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}
