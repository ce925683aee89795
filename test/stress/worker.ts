// A stress-test worker process: claims, ticks every item and completes steps of one plan until the
// plan is done, nothing has been ready for a while, it has done `maxOps` claims or is told to stop.
// It logs every claim and completion that returned, synchronously, to its own JSON-lines file.
//
// Usage: node test/stress/worker.ts '<WorkerConfig as JSON>' (or spawnWorker from a test).
import { spawn, type ChildProcess } from 'node:child_process';
import { sqliteOf } from '../helpers/sqlite.ts';
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { flushCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { EnvironmentError, RefusedError } from '../../src/core/errors.ts';
import { READY_CONDITION } from '../../src/core/store/sqlite/readiness.ts';
import { writeEvent, type StepRow } from '../../src/core/store/sqlite/rows.ts';
import { leaseUntil } from '../../src/core/store/shared/rows.ts';
import { mapSqliteError } from '../../src/core/store/sqlite/sqlite.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import { isDatabaseUrl, openStore, type Store } from '../../src/core/store/index.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { randomInt, seededRandom } from './planGen.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import { planFileSource } from '../../src/core/plan/source.ts';

export interface WorkerConfig {
  /** A SQLite file, or a postgres:// URL (then `host` and `repo` say who this worker is and which repository). */
  readonly db: string;
  readonly host?: string;
  readonly repo?: string;
  /** The plan file on disk, and the repository-relative key it was initialised under. */
  readonly plan: string;
  readonly planPath: string;
  readonly worktree: string;
  readonly mode: 'correct' | 'broken';
  readonly log: string;
  readonly leaseSeconds: number;
  readonly maxOps: number;
  /** Exit after this long without a ready step. */
  readonly idleMs: number;
  readonly seed: number;
  /** Pause up to this many ms (seeded) between claiming and finishing a step, like real work. */
  readonly thinkMs?: number;
  /** Wait for a `go` line on stdin after opening the store, so all workers start together. */
  readonly waitForGo?: boolean;
  /** Also read (ready, events, data_version) before every claim, checking what it sees. */
  readonly reads?: boolean;
  /** Broken mode only: the pause between the unguarded SELECT and UPDATE that makes it racy. */
  readonly brokenDelayMs?: number;
}

/** One line of a worker log. */
export interface LogLine {
  readonly op: 'open' | 'claim' | 'complete';
  readonly step: string | null;
  readonly token: number | null;
  readonly worker: string;
  readonly t: number;
  readonly reclaimed?: boolean;
}

/** What a worker prints on stdout as its last line when it exits by itself. */
export interface WorkerSummary {
  readonly claims: number;
  readonly completes: number;
  readonly locked: number;
  readonly refused: Record<string, number>;
  readonly reads: number;
  readonly exit: 'all_completed' | 'idle' | 'max_ops' | 'stopped';
}

type Claimed = { readonly claimed: true; readonly anchor: string; readonly token: number; readonly reclaimed: boolean };
type NotClaimed = { readonly claimed: false; readonly allCompleted: boolean };

const WORKER_FILE = fileURLToPath(import.meta.url);

/** The child's environment: the parent's, minus what would make node act as Electron or VS Code. */
export function childEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k !== 'ELECTRON_RUN_AS_NODE' && !k.startsWith('VSCODE_')),
  );
}

export interface WorkerHandle {
  readonly child: ChildProcess;
  /** Resolves once the worker has opened the store and is about to claim. */
  readonly ready: Promise<void>;
  /** Releases a worker started with waitForGo. */
  go(): void;
  /** Asks the worker to finish its current step and exit with its summary. */
  stop(): void;
  readonly done: Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    summary: WorkerSummary | null;
    stderr: string;
  }>;
}

/**
 * Starts a worker as a real OS process running this file with the current node; `compileCache`
 * (a directory) makes the many short-lived crash-test workers start faster.
 */
export function spawnWorker(config: WorkerConfig, compileCache?: string): WorkerHandle {
  const env = compileCache ? { ...childEnv(), NODE_COMPILE_CACHE: compileCache } : childEnv();
  const child = spawn(process.execPath, [WORKER_FILE, JSON.stringify(config)], {
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (stdout.startsWith('ready\n')) markReady();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<Awaited<WorkerHandle['done']>>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const last = stdout.trim().split('\n').pop() ?? '';
      const summary = last.startsWith('{') ? (JSON.parse(last) as WorkerSummary) : null;
      resolve({ code, signal, summary, stderr });
    });
  });
  child.stdin?.on('error', () => undefined); // a killed worker's closed pipe
  const go = (): void => void child.stdin?.write('go\n');
  const stop = (): void => void child.stdin?.end('stop\n');
  return { child, ready, done, go, stop };
}

/** Reads `go` and `stop` lines from the parent; `stopped` is polled by the loop. */
class Commands {
  stopped = false;
  readonly started: Promise<void>;
  private start: () => void = () => undefined;

  constructor() {
    this.started = new Promise<void>((resolve) => (this.start = resolve));
    let input = '';
    process.stdin.setEncoding('utf8').on('data', (chunk: string) => {
      input += chunk;
      if (input.includes('go\n')) this.start();
      if (input.includes('stop\n')) this.stopped = true;
    });
    process.stdin.on('end', () => this.start());
  }

  /** Lets the process exit: the parent keeps the pipe open. */
  close(): void {
    process.stdin.destroy();
  }
}

/** The loop of one worker process over one store connection. */
class StressWorker {
  private readonly cfg: WorkerConfig;
  private readonly rng: () => number;
  private readonly store: Store;
  private readonly source: PlanSource;
  private readonly actor: Actor;
  private readonly logFd: number;
  private readonly commands: Commands;
  private lastEvent = 0;
  readonly stats = { claims: 0, completes: 0, locked: 0, reads: 0, refused: {} as Record<string, number> };

  constructor(cfg: WorkerConfig, commands: Commands) {
    this.cfg = cfg;
    this.commands = commands;
    this.rng = seededRandom(cfg.seed);
    this.store = isDatabaseUrl(cfg.db)
      ? openStore({
          location: cfg.db,
          repository: { id: cfg.repo ?? 'stress', source: 'configured' },
          host: cfg.host ?? 'stress-host',
        })
      : sqliteStore(cfg.db);
    // The plan file as a CLI command takes it: once its stat is on record, a claim reads nothing of it.
    this.source = planFileSource(cfg.plan, cfg.planPath, cfg.plan);
    this.actor = { worktree: cfg.worktree, agent: null };
    this.logFd = openSync(cfg.log, 'a');
  }

  async close(): Promise<void> {
    closeSync(this.logFd);
    await this.store.close();
  }

  async run(): Promise<WorkerSummary['exit']> {
    this.log('open', null, null);
    process.stdout.write('ready\n');
    if (this.cfg.waitForGo) await this.commands.started;
    let idleSince = Date.now();
    while (this.stats.claims < this.cfg.maxOps) {
      if (this.commands.stopped) return 'stopped';
      if (this.cfg.reads) await this.retryLocked(() => this.read());
      const claim = this.cfg.mode === 'correct' ? await this.claimCorrectly() : await this.claimBrokenly();
      if (!claim.claimed) {
        if (claim.allCompleted) return 'all_completed';
        if (Date.now() - idleSince > this.cfg.idleMs) return 'idle';
        await sleep(randomInt(this.rng, 5, 25));
        continue;
      }
      this.log('claim', claim.anchor, claim.token, { reclaimed: claim.reclaimed });
      this.stats.claims++;
      if (this.cfg.thinkMs) await sleep(randomInt(this.rng, 0, this.cfg.thinkMs));
      await this.finish(claim.anchor, claim.token);
      idleSince = Date.now();
    }
    return 'max_ops';
  }

  /** The reads a long-lived client makes; throws if what it sees is inconsistent. */
  private async read(): Promise<void> {
    const ready = await this.store.ready(this.cfg.planPath);
    const steps = this.source.plan().steps.filter((st) => st.parentAnchor === null).length;
    const seen = new Set([
      ...ready.completed_steps,
      ...ready.claimed_steps,
      ...ready.ready_steps,
      ...ready.waiting_steps,
      ...ready.blocked_steps,
      ...ready.expired_claims,
    ]);
    if (ready.all_steps.length !== steps || seen.size !== steps)
      throw new Error(`ready() saw ${seen.size} of ${steps} steps: ${JSON.stringify(ready).slice(0, 300)}`);
    const events = await this.store.events({ afterId: this.lastEvent, limit: 200 });
    if (events.some((e, i) => e.id <= (i === 0 ? this.lastEvent : (events[i - 1]?.id ?? 0))))
      throw new Error('events() went backwards');
    this.lastEvent = events.at(-1)?.id ?? this.lastEvent;
    this.stats.reads++;
  }

  /** Appends one line with a single synchronous write, right after the store call returned. */
  private log(op: LogLine['op'], step: string | null, token: number | null, extra: Partial<LogLine> = {}): void {
    // On PostgreSQL a holder is (host, worktree): the same path on two hosts is two workers.
    const worker = this.cfg.host ? `${this.cfg.host}:${this.cfg.worktree}` : this.cfg.worktree;
    const line: LogLine = { op, step, token, worker, t: Date.now(), ...extra };
    writeSync(this.logFd, JSON.stringify(line) + '\n');
  }

  /** Retries while the database is locked past the busy timeout, counting each time. */
  private async retryLocked<T>(fn: () => Promise<T> | T): Promise<T> {
    for (;;) {
      try {
        return await fn();
      } catch (raw) {
        const err = mapSqliteError(raw, this.cfg.db);
        if (!(err instanceof EnvironmentError && err.code === 'database_locked')) throw err;
        this.stats.locked++;
        await sleep(randomInt(this.rng, 1, 20));
      }
    }
  }

  private async claimCorrectly(): Promise<Claimed | NotClaimed> {
    const r = await this.retryLocked(() =>
      this.store.claimNext(this.source, this.actor, { leaseSeconds: this.cfg.leaseSeconds }),
    );
    return r.claimed
      ? { claimed: true, anchor: r.step_anchor, token: r.claim_token, reclaimed: r.reclaimed_from_expired }
      : { claimed: false, allCompleted: r.all_completed };
  }

  /**
   * The deliberately wrong claim: an autocommit SELECT of the first ready step, a pause, then an
   * UPDATE with no status, holder or token guard, outside any IMMEDIATE transaction.
   */
  private async claimBrokenly(): Promise<Claimed | NotClaimed> {
    const db = sqliteOf(this.store);
    const plan = this.cfg.planPath;
    const cand = await this.retryLocked(
      () =>
        db
          .prepare(`SELECT s.* FROM steps s WHERE ${READY_CONDITION} ORDER BY s.step_index LIMIT 1`)
          .get({ plan, now: new Date().toISOString() }) as StepRow | undefined,
    );
    if (!cand) {
      const open = await this.retryLocked(() =>
        Number(
          db.prepare(`SELECT COUNT(*) FROM steps WHERE plan_path = ? AND status != 'completed'`).pluck().get(plan),
        ),
      );
      return { claimed: false, allCompleted: open === 0 };
    }
    await sleep(this.cfg.brokenDelayMs ?? 20);
    const token = cand.claim_token + 1;
    const at = new Date().toISOString();
    const until = leaseUntil(new Date().toISOString(), this.cfg.leaseSeconds);
    await this.retryLocked(() =>
      db
        .prepare(
          `UPDATE steps SET status = 'claimed', claimed_by = ?, claim_token = ?, claimed_at = ?, lease_expires_at = ?
        WHERE plan_path = ? AND anchor = ?`,
        )
        .run(this.cfg.worktree, token, at, until, plan, cand.anchor),
    );
    await this.retryLocked(() =>
      writeEvent(db, at, this.actor, {
        entity: 'step',
        action: 'claim',
        planPath: plan,
        stepAnchor: cand.anchor,
        from: cand.status,
        to: 'claimed',
        data: { claim_token: token, lease_expires_at: until, previous_holder: null, substeps: [] },
      }),
    );
    return { claimed: true, anchor: cand.anchor, token, reclaimed: false };
  }

  /** Ticks every item and completes the step with the claim token; a refusal is counted, not fatal. */
  private async finish(anchor: string, token: number): Promise<void> {
    const holder: Actor = { ...this.actor, token };
    try {
      await this.retryLocked(() =>
        this.store.updateItems(this.source, anchor, [{ selector: { all: true }, status: 'completed' }], holder),
      );
      await this.retryLocked(() => this.store.complete(this.source, anchor, holder));
    } catch (err) {
      if (!(err instanceof RefusedError)) throw err;
      this.stats.refused[err.code] = (this.stats.refused[err.code] ?? 0) + 1;
      return;
    }
    this.log('complete', anchor, token);
    this.stats.completes++;
  }
}

/**
 * Resolves once a worker's log records a completion, or when `stop` says to wait no longer: the crash
 * tests kill some workers only after one, so a completion is at risk however slow the machine is.
 */
export async function loggedCompletion(log: string, stop: () => boolean): Promise<void> {
  while (!stop()) {
    if (existsSync(log) && readFileSync(log, 'utf8').includes('"op":"complete"')) return;
    await sleep(50);
  }
}

/** The child's entry point: runs the loop, prints its summary, exits 1 on an unexpected error. */
async function runWorker(cfg: WorkerConfig): Promise<void> {
  const commands = new Commands();
  const worker = new StressWorker(cfg, commands);
  flushCompileCache(); // a killed worker never writes its cache at exit; this one's successors start faster
  try {
    const exit = await worker.run();
    const summary: WorkerSummary = { ...worker.stats, exit };
    process.stdout.write(JSON.stringify(summary) + '\n');
  } catch (err) {
    process.stderr.write(
      `worker ${cfg.worktree}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = 1;
  } finally {
    await worker.close();
    commands.close();
  }
}

if (import.meta.main) await runWorker(JSON.parse(process.argv[2] ?? '{}') as WorkerConfig);
