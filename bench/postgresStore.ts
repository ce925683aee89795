// The PostgreSQL store against SQLite's and a raw transaction (docs/performance.md, "PostgreSQL"): 16
// processes × OPS claim + complete pairs through the real Store on a durable throwaway server, the
// same on a SQLite file, and 16 × OPS pairs of raw `BEGIN; UPDATE … RETURNING; COMMIT` on the same
// server, in the same run. Plus uncontended latency from one process. Targets: ≥ 0.5× the raw
// transaction rate, p99 claim ≤ 250 ms, 0 errors surfaced to agents.
//   node bench/postgresStore.ts [--ops N]
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePlan } from '../src/core/plan/parse.ts';
import { openStore } from '../src/core/store/index.ts';
import { startPostgres } from '../scripts/postgres.ts';
import type { StoreWorkerConfig, StoreWorkerReport } from './postgresStoreWorker.ts';
import type { TargetRow } from './run.ts';
import { planSourceOf } from '../src/core/plan/source.ts';

const WORKERS = 16;
const opsFlag = process.argv.indexOf('--ops');
const OPS = opsFlag > 0 ? Number(process.argv[opsFlag + 1]) : 60;
const LEAD = 160;
const WORKER = join(dirname(fileURLToPath(import.meta.url)), 'postgresStoreWorker.ts');
const PLAN_PATH = 'plans/wide.md';

/** Step i depends on step i − LEAD: completions keep unblocking later steps, as a real plan's do. */
function planText(steps: number): string {
  const out = ['# Plan: Wide'];
  for (let i = 1; i <= steps; i++)
    out.push(`## Step ${i}: Work ${i} {#w${i}}`, `**Depends on:** ${i > LEAD ? `#w${i - LEAD}` : 'none'}`, '');
  return out.join('\n');
}

async function swarm(
  kind: StoreWorkerConfig['kind'],
  db: string,
  planFile: string,
): Promise<{ wallMs: number; reports: StoreWorkerReport[] }> {
  const children = Array.from({ length: WORKERS }, (_, worker) =>
    fork(WORKER, [
      JSON.stringify({ kind, db, planFile, planPath: PLAN_PATH, worker, ops: OPS } satisfies StoreWorkerConfig),
    ]),
  );
  const ready = children.map((c) => new Promise<void>((resolve) => c.once('message', () => resolve())));
  const done = children.map(
    (c) =>
      new Promise<StoreWorkerReport>((resolve, reject) => {
        c.on('message', (m) => {
          if (typeof m === 'object') resolve(m as StoreWorkerReport);
        });
        c.on('exit', (code) => {
          if (code !== 0) reject(new Error(`a ${kind} worker exited ${code}`));
        });
      }),
  );
  await Promise.all(ready);
  const start = performance.now();
  for (const c of children) c.send('go');
  const reports = await Promise.all(done);
  return { wallMs: performance.now() - start, reports };
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

function summary(
  name: string,
  r: { wallMs: number; reports: StoreWorkerReport[] },
): { rate: number; claims: number[]; line: string; errors: number } {
  const claims = r.reports.flatMap((x) => x.claimMs);
  const completes = r.reports.flatMap((x) => x.completeMs);
  const rate = ((claims.length + completes.length) / r.wallMs) * 1000;
  const errors = r.reports.reduce((n, x) => n + x.errors.length, 0);
  const line = `${name.padEnd(22)} ${rate.toFixed(0).padStart(6)} txn/s   claim p50 ${pct(claims, 50).toFixed(1)} p99 ${pct(claims, 99).toFixed(1)} ms   complete p50 ${pct(completes, 50).toFixed(1)} p99 ${pct(completes, 99).toFixed(1)} ms   errors ${errors}`;
  return { rate, claims, line, errors };
}

/** Uncontended claim + complete latency from one process, median of `n` pairs. */
async function solo(db: string, planFile: string, n: number): Promise<string> {
  const text = planText(n);
  writeFileSync(planFile, text);
  const source = planSourceOf(PLAN_PATH, parsePlan(text, PLAN_PATH));
  const store = openStore({
    location: db,
    ifMissing: 'create',
    repository: { id: 'solo-repo', source: 'configured' },
    host: 'solo',
  });
  const actor = { worktree: '/bench/solo', agent: null };
  await store.initPlan(source, actor);
  const claims: number[] = [];
  const completes: number[] = [];
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    const c = await store.claimNext(source, actor);
    claims.push(performance.now() - t);
    if (!c.claimed) break;
    t = performance.now();
    await store.complete(source, c.step_anchor, { ...actor, token: c.claim_token });
    completes.push(performance.now() - t);
  }
  await store.close();
  return `claim ${pct(claims, 50).toFixed(2)} ms, complete ${pct(completes, 50).toFixed(2)} ms (median of ${claims.length})`;
}

export async function benchPostgresStore(): Promise<TargetRow[]> {
  const server = startPostgres({ durability: 'durable' });
  const dir = mkdtempSync(join(tmpdir(), 'sf-bench-pg-'));
  try {
    const planFile = join(dir, 'wide.md');
    const text = planText(WORKERS * OPS);
    writeFileSync(planFile, text);
    const source = planSourceOf(PLAN_PATH, parsePlan(text, PLAN_PATH));
    const pgUrl = server.createDatabase('bench_store');
    const rawUrl = server.createDatabase('bench_raw');
    const sqliteFile = join(dir, 'state.db');
    for (const db of [pgUrl, sqliteFile]) {
      const store = openStore({
        location: db,
        ifMissing: 'create',
        repository: { id: 'bench-repo', source: 'configured' },
        host: 'setup',
      });
      await store.initPlan(source, { worktree: '/bench/setup', agent: null });
      await store.close();
    }
    server.psql(
      `CREATE TABLE bench_counters (id integer PRIMARY KEY, n bigint NOT NULL DEFAULT 0, at timestamptz); INSERT INTO bench_counters (id) SELECT i FROM generate_series(0, ${WORKERS * OPS * 2}) i; ALTER TABLE bench_counters OWNER TO springfield;`,
      'bench_raw',
    );
    console.log(
      `${server.install.version}, durable, Unix socket; ${WORKERS} processes × ${OPS} claim + complete pairs (${WORKERS * OPS}-step plan, step i needs step i − ${LEAD})`,
    );
    const raw = summary('raw UPDATE … RETURNING', await swarm('raw', rawUrl, planFile));
    const store = summary('PostgreSQL store', await swarm('store', pgUrl, planFile));
    const sqlite = summary('SQLite store', await swarm('store', sqliteFile, planFile));
    for (const s of [raw, store, sqlite]) console.log(s.line);
    const ratio = store.rate / raw.rate;
    console.log(
      `PostgreSQL store / raw: ${ratio.toFixed(2)}×; SQLite store / PostgreSQL store: ${(sqlite.rate / store.rate).toFixed(2)}×`,
    );
    console.log(
      `uncontended, one process: PostgreSQL ${await solo(server.createDatabase('bench_solo'), join(dir, 'solo.md'), 200)}; SQLite ${await solo(join(dir, 'solo.db'), join(dir, 'solo.md'), 200)}`,
    );
    return [
      {
        metric: 'PostgreSQL claim+complete vs raw txn',
        target: '≥ 0.5×',
        measured: `${ratio.toFixed(2)}×`,
        met: ratio >= 0.5,
      },
      {
        metric: 'PostgreSQL claim p99, 16 processes',
        target: '≤ 250 ms',
        measured: `${pct(store.claims, 99).toFixed(0)} ms`,
        met: pct(store.claims, 99) <= 250,
      },
      {
        metric: 'PostgreSQL errors surfaced to agents',
        target: '0',
        measured: String(store.errors),
        met: store.errors === 0,
      },
    ];
  } finally {
    server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const rows = await benchPostgresStore();
  for (const r of rows) console.log(`${r.met ? 'met ' : 'MISS'}  ${r.metric}: ${r.measured} (target ${r.target})`);
}
