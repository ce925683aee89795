import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { planHash } from '../src/core/plan/hash.ts';
import { parsePlan } from '../src/core/plan/parse.ts';
import { countOpen } from '../src/core/store/sqlite/readiness.ts';
import { writeTransaction } from '../src/core/store/sqlite/open.ts';
import { loadSqlite } from '../src/core/store/sqlite/sqlite.ts';
import { sqliteStore, sqliteConnection } from '../src/core/store/sqlite/sqliteStore.ts';
import type { WorkerConfig, WorkerReport } from './contentionWorker.ts';
import type { TargetRow } from './run.ts';
import { planSourceOf } from '../src/core/plan/source.ts';

const WORKERS = 16;
const OPS = 100;
const ROUNDS = 2;
const BUSY_TIMEOUT_MS = 10_000;
/** No second round once the first pair took this long (busy-timeout stalls), to keep the run short. */
const ROUND_BUDGET_MS = 25_000;
const PLAN_PATH = 'plans/wide.md';
const WORKER = join(dirname(fileURLToPath(import.meta.url)), 'contentionWorker.ts');

interface RoundResult {
  readonly wallMs: number;
  readonly reports: WorkerReport[];
}

interface Totals {
  readonly wallMs: number;
  readonly transactions: number;
  readonly claimMs: number[];
  readonly completeMs: number[];
  readonly holdMs: number[];
  readonly waitMs: number[];
  readonly busyErrors: number;
  readonly otherErrors: string[];
}

/** 16 processes claiming and completing against one database, against raw SQLite writers in the same run. */
export async function benchContention(): Promise<TargetRow[]> {
  const raw: RoundResult[] = [];
  const sf: RoundResult[] = [];
  const checks: string[] = [];
  const started = performance.now();
  for (let r = 0; r < ROUNDS; r++) {
    raw.push(await round('raw', () => undefined));
    sf.push(await round('springfield', (db) => checks.push(verify(db))));
    if (performance.now() - started > ROUND_BUDGET_MS) break;
  }
  const solo = await uncontended();
  const rawT = totals(raw);
  const sfT = totals(sf);
  const rawTps = rawT.transactions / (rawT.wallMs / 1000);
  const sfTps = sfT.transactions / (sfT.wallMs / 1000);
  const sfOps = sfTps / 2;
  const ratio = sfTps / rawTps;
  const claim = pct(sfT.claimMs);
  const complete = pct(sfT.completeMs);
  const rawLat = pct([...rawT.claimMs, ...rawT.completeMs]);
  const busy = sfT.busyErrors;

  console.log(
    `\n== Contention: ${WORKERS} processes x ${OPS} claim+complete on one database (WAL, synchronous=FULL, busy_timeout ${BUSY_TIMEOUT_MS} ms), ${sf.length} round(s) each, alternating with raw`,
  );
  console.log(
    `  raw SQLite   ${WORKERS} procs x ${OPS * 2} BEGIN IMMEDIATE; UPDATE; COMMIT: ${fmtRate(rawTps).padStart(6)} txn/s   latency p50 ${rawLat.p50.toFixed(1)} p99 ${rawLat.p99.toFixed(1)} ms   busy errors ${rawT.busyErrors}`,
  );
  console.log(
    `  springfield  ${WORKERS} procs x ${OPS} claimNext+complete:                 ${fmtRate(sfTps).padStart(6)} txn/s = ${fmtRate(sfOps)} claim+complete/s`,
  );
  console.log(`  ratio (springfield / raw), per write transaction:        ${ratio.toFixed(2)}x`);
  console.log(`  ratio (claim+complete pairs/s / raw transactions/s):     ${(sfOps / rawTps).toFixed(2)}x`);
  console.log(
    `  claimNext latency (incl. lock wait)  p50 ${claim.p50.toFixed(1)} ms   p99 ${claim.p99.toFixed(1)} ms   max ${claim.max.toFixed(1)} ms`,
  );
  console.log(
    `  complete latency (incl. lock wait)   p50 ${complete.p50.toFixed(1)} ms   p99 ${complete.p99.toFixed(1)} ms   max ${complete.max.toFixed(1)} ms`,
  );
  console.log(lockLine('raw', rawT));
  console.log(lockLine('springfield', sfT));
  console.log(
    `  uncontended, one process, same 1600-step plan: claimNext p50 ${solo.claim.toFixed(2)} ms (inside the lock: candidate query ${solo.candidate.toFixed(2)} ms, countOpen ${solo.count.toFixed(2)} ms, drift-check planHash ${solo.hash.toFixed(2)} ms), complete p50 ${solo.complete.toFixed(2)} ms, raw txn p50 ${solo.raw.toFixed(2)} ms`,
  );
  console.log(
    `  busy errors surfaced: ${busy}   other errors: ${sfT.otherErrors.length + rawT.otherErrors.length}${sfT.otherErrors[0] ? ` (first: ${sfT.otherErrors[0]})` : ''}`,
  );
  console.log(
    `  per-round wall: raw ${raw.map((x) => x.wallMs.toFixed(0)).join(', ')} ms; springfield ${sf.map((x) => x.wallMs.toFixed(0)).join(', ')} ms`,
  );
  console.log(`  end state per springfield round: ${checks.join('; ')}`);
  return [
    {
      metric: `contention ${WORKERS}x${OPS}: throughput vs raw (per txn)`,
      target: '>= 0.50x',
      measured: `${ratio.toFixed(2)}x (${fmtRate(sfTps)} vs ${fmtRate(rawTps)} txn/s; pairs ${(sfOps / rawTps).toFixed(2)}x)`,
      met: ratio >= 0.5,
    },
    {
      metric: `contention ${WORKERS}x${OPS}: claim latency p99`,
      target: '<= 250 ms',
      measured: `${claim.p99.toFixed(1)} ms (p50 ${claim.p50.toFixed(1)} ms)`,
      met: claim.p99 <= 250,
    },
    {
      metric: `contention ${WORKERS}x${OPS}: busy errors surfaced`,
      target: '0',
      measured: String(busy),
      met: busy === 0,
    },
  ];
}

/** One run of WORKERS processes from a shared start signal to the last report. */
async function round(mode: WorkerConfig['mode'], after: (db: string) => void): Promise<RoundResult> {
  const dir = mkdtempSync(join(tmpdir(), `sf-bench-contention-${mode}-`));
  try {
    const db = join(dir, 'state.db');
    const planFile = join(dir, 'wide.md');
    if (mode === 'raw') prepareRaw(db);
    else await prepareSpringfield(db, planFile);
    const children = Array.from({ length: WORKERS }, (_, worker) => {
      const config: WorkerConfig = {
        mode,
        db,
        planFile,
        planPath: PLAN_PATH,
        worker,
        ops: OPS,
        busyTimeoutMs: BUSY_TIMEOUT_MS,
      };
      return fork(WORKER, [JSON.stringify(config)], {
        execPath: process.execPath,
        execArgv: [],
        env: childEnv(),
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
    });
    const ready = children.map((c) => message(c, 'ready'));
    const done = children.map((c) => message(c, 'done'));
    await Promise.all(ready);
    const t0 = performance.now();
    for (const c of children) c.send({ type: 'go' });
    const reports = (await Promise.all(done)) as WorkerReport[];
    const wallMs = performance.now() - t0;
    await Promise.all(
      children.map((c) => (c.exitCode !== null ? Promise.resolve() : new Promise((res) => c.once('exit', res)))),
    );
    after(db);
    return { wallMs, reports };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function message(child: ReturnType<typeof fork>, type: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: unknown): void => {
      if ((m as { type?: unknown } | null)?.type !== type) return;
      child.off('message', onMessage);
      resolve(m);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`contention worker exited with ${String(code)} before '${type}'`)));
  });
}

function prepareRaw(db: string): void {
  const Sqlite = loadSqlite();
  const d = new Sqlite(db, { timeout: BUSY_TIMEOUT_MS });
  d.pragma('journal_mode = WAL');
  d.pragma('synchronous = FULL');
  d.exec('CREATE TABLE counters (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, at TEXT)');
  const insert = d.prepare('INSERT INTO counters (id, n) VALUES (?, 0)');
  d.transaction(() => {
    for (let i = 0; i < WORKERS * OPS; i++) insert.run(i);
  })();
  d.close();
}

/** A plan of WORKERS x OPS independent steps without checklist items, initialised in the store. */
async function prepareSpringfield(db: string, planFile: string): Promise<void> {
  const lines = ['# Plan: Wide plan', ''];
  for (let i = 1; i <= WORKERS * OPS; i++) lines.push(`## Step ${i}: Independent work ${i} {#w${i}}`, '');
  const text = lines.join('\n');
  writeFileSync(planFile, text);
  const store = sqliteStore(db, { ifMissing: 'create' });
  await store.initPlan(planSourceOf(PLAN_PATH, parsePlan(text, PLAN_PATH)), { worktree: '/bench/setup', agent: null });
  store.close();
}

/** Single-process figures on the same plan: what each transaction costs when nobody else is waiting. */
async function uncontended(): Promise<{
  claim: number;
  complete: number;
  candidate: number;
  count: number;
  hash: number;
  raw: number;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'sf-bench-contention-solo-'));
  try {
    const db = join(dir, 'state.db');
    const planFile = join(dir, 'wide.md');
    await prepareSpringfield(db, planFile);
    const store = sqliteStore(db);
    const source = planSourceOf(PLAN_PATH, parsePlan(readFileSync(planFile, 'utf8'), PLAN_PATH));
    const actor = { worktree: '/bench/solo', agent: null };
    const claims: number[] = [];
    const completes: number[] = [];
    const candidates: number[] = [];
    const counts: number[] = [];
    const raws: number[] = [];
    const hashes: number[] = [];
    const first = sqliteConnection(store).prepare(`SELECT * FROM steps INDEXED BY idx_steps_ready
      WHERE plan_path = @plan AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0 ORDER BY step_index LIMIT 1`);
    sqliteConnection(store).exec(
      'CREATE TABLE bench_counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, at TEXT); INSERT INTO bench_counter VALUES (1, 0, NULL)',
    );
    const bump = sqliteConnection(store).prepare('UPDATE bench_counter SET n = n + 1, at = ? WHERE id = 1');
    const time = (into: number[], fn: () => unknown): void => {
      const t0 = performance.now();
      fn();
      into.push(performance.now() - t0);
    };
    for (let i = 0; i < 200; i++) {
      const now = new Date().toISOString();
      time(candidates, () => first.get({ plan: PLAN_PATH }));
      time(counts, () => countOpen(sqliteConnection(store), PLAN_PATH, now));
      time(hashes, () => planHash(source.plan()));
      time(raws, () => writeTransaction(sqliteConnection(store), () => bump.run(now)));
      const t0 = performance.now();
      const c = await store.claimNext(source, actor);
      claims.push(performance.now() - t0);
      if (!c.claimed) throw new Error('nothing to claim');
      const t1 = performance.now();
      await store.complete(source, c.step_anchor, { ...actor, token: c.claim_token });
      completes.push(performance.now() - t1);
    }
    store.close();
    return {
      claim: pct(claims).p50,
      complete: pct(completes).p50,
      candidate: pct(candidates).p50,
      count: pct(counts).p50,
      hash: pct(hashes).p50,
      raw: pct(raws).p50,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Checks the end state so a fast but wrong run cannot pass unnoticed. */
function verify(db: string): string {
  const store = sqliteStore(db);
  try {
    const q = (sql: string): number => Number(sqliteConnection(store).prepare(sql).pluck().get());
    const completed = q(`SELECT COUNT(*) FROM steps WHERE status = 'completed'`);
    const claims = q(`SELECT COUNT(*) FROM events WHERE action = 'claim'`);
    const holders = q(`SELECT COUNT(DISTINCT completed_by) FROM steps`);
    return `${completed}/${WORKERS * OPS} completed, ${claims} claim events, ${holders} distinct holders`;
  } finally {
    store.close();
  }
}

function totals(rounds: readonly RoundResult[]): Totals {
  const reports = rounds.flatMap((r) => r.reports);
  return {
    wallMs: rounds.reduce((a, r) => a + r.wallMs, 0),
    transactions: reports.reduce((a, r) => a + r.transactions, 0),
    claimMs: reports.flatMap((r) => r.claimMs),
    completeMs: reports.flatMap((r) => r.completeMs),
    holdMs: reports.flatMap((r) => r.holdMs),
    waitMs: reports.flatMap((r) => r.waitMs),
    busyErrors: reports.reduce((a, r) => a + r.busyErrors, 0),
    otherErrors: reports.flatMap((r) => r.otherErrors),
  };
}

/** Write-lock hold and wait figures, and the share of wall time the lock was held. */
function lockLine(label: string, t: Totals): string {
  const hold = pct(t.holdMs);
  const wait = pct(t.waitMs);
  const busyShare = t.holdMs.reduce((a, b) => a + b, 0) / t.wallMs;
  return `  write lock, ${label.padEnd(11)} held p50 ${hold.p50.toFixed(2)} p99 ${hold.p99.toFixed(2)} ms (held ${(busyShare * 100).toFixed(0)}% of wall)   wait p50 ${wait.p50.toFixed(1)} p99 ${wait.p99.toFixed(1)} max ${wait.max.toFixed(0)} ms`;
}

function pct(values: readonly number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN };
}

function fmtRate(v: number): string {
  return v.toFixed(0);
}

function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'ELECTRON_RUN_AS_NODE' || k.startsWith('VSCODE_') || k.startsWith('SPRINGFIELD_') || k === 'NODE_OPTIONS')
      continue;
    env[k] = v;
  }
  return env;
}

if (import.meta.main) await benchContention();
