// Prototype contention benchmark for the PostgreSQL backend (docs/postgres-design.md), before the backend
// exists: 16 processes × 100 claim + complete pairs (FOR UPDATE SKIP LOCKED on the ready candidates,
// readiness kept by a plpgsql trigger) in two transaction shapes (bench/postgresShapes.ts), against
// 16 processes × 200 raw `BEGIN; UPDATE … RETURNING; COMMIT` on the same server in the same run.
//   node bench/postgresRaw.ts              a throwaway durable server (scripts/postgres.ts)
//   node bench/postgresRaw.ts --url URL    an existing server (tables in a temporary schema, dropped after)
//   node bench/postgresRaw.ts --sqlite     also runs bench/contention.ts for SQLite side by side
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startPostgres, type PostgresServer } from '../scripts/postgres.ts';
import type { PgWorkerConfig, PgWorkerReport, Shape } from './postgresRawWorker.ts';
import { LEAD, PLAN_PATH, REPO_ID, schema, seedPlan } from './postgresSchema.ts';
import type { TargetRow } from './run.ts';

const WORKERS = 16;
const OPS = 100;
const ROUNDS = 2;
const LEASE_SECONDS = 7200;
const WORKER = join(dirname(fileURLToPath(import.meta.url)), 'postgresRawWorker.ts');

interface Round {
  readonly wallMs: number;
  readonly reports: PgWorkerReport[];
}

interface Target {
  /** A URL for one round's database (and the schema its tables live in, on a borrowed server). */
  fresh(label: string): Promise<{ url: string; schema: string | null; drop: () => Promise<void> }>;
  readonly describe: string;
  close(): void;
}

function throwaway(): Target {
  const server: PostgresServer = startPostgres({ durability: 'durable' });
  return {
    describe: `throwaway PostgreSQL ${server.install.version}, durable (fsync on, synchronous_commit on), Unix socket`,
    fresh: async (label) => ({ url: server.createDatabase(label), schema: null, drop: async () => undefined }),
    close: () => server.stop(),
  };
}

function borrowed(url: string): Target {
  return {
    describe: 'the server at --url (credentials not shown)',
    async fresh(label) {
      const schema = `springfield_bench_${label}_${randomBytes(4).toString('hex')}`;
      await exec(url, null, `CREATE SCHEMA ${schema}`);
      return {
        url,
        schema,
        drop: async () => {
          await exec(url, null, `DROP SCHEMA ${schema} CASCADE`);
        },
      };
    },
    close: () => undefined,
  };
}

async function exec(url: string, schema: string | null, sql: string): Promise<pg.QueryResult[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    if (schema) await client.query(`SET search_path TO ${schema}`);
    const result = (await client.query(sql)) as unknown as pg.QueryResult | pg.QueryResult[];
    return Array.isArray(result) ? result : [result];
  } finally {
    await client.end();
  }
}

async function round(
  target: Target,
  shape: Shape,
  label: string,
  workers = WORKERS,
  ops = OPS,
): Promise<Round & { check: string }> {
  const db = await target.fresh(label);
  try {
    await exec(db.url, db.schema, schema(shape !== 'derived') + seedPlan(WORKERS * OPS));
    const children = Array.from({ length: workers }, (_, worker) => {
      const config: PgWorkerConfig = {
        shape,
        url: db.url,
        schema: db.schema,
        worker,
        ops,
        leaseSeconds: LEASE_SECONDS,
      };
      return fork(WORKER, [JSON.stringify(config)], {
        execPath: process.execPath,
        execArgv: [],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
    });
    const ready = children.map((c) => message(c, 'ready'));
    const done = children.map((c) => message(c, 'done'));
    await Promise.all(ready);
    const t0 = performance.now();
    for (const c of children) c.send({ type: 'go' });
    const reports = (await Promise.all(done)) as PgWorkerReport[];
    const wallMs = performance.now() - t0;
    const check = shape === 'raw' ? '' : await verify(db.url, db.schema, workers * ops);
    return { wallMs, reports, check };
  } finally {
    await db.drop();
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
    child.once('exit', (code) =>
      reject(new Error(`postgres bench worker exited with ${String(code)} before '${type}'`)),
    );
  });
}

/** The end state, so a fast but wrong run cannot pass unnoticed: every claim once, readiness counts exact. */
async function verify(url: string, schema: string | null, expected: number): Promise<string> {
  const [r] = await exec(
    url,
    schema,
    `SELECT
      (SELECT count(*) FROM steps WHERE status = 'completed') AS completed,
      (SELECT count(*) FROM events WHERE action = 'claim') AS claims,
      (SELECT count(DISTINCT step_anchor) FROM events WHERE action = 'claim') AS claimed_steps,
      (SELECT count(*) FROM events e JOIN steps s ON s.anchor = e.step_anchor WHERE e.action = 'complete' AND e.worktree <> s.claimed_by) AS foreign_completions,
      (SELECT status FROM plans WHERE repo_id = '${REPO_ID}' AND plan_path = '${PLAN_PATH}') AS plan,
      (SELECT count(*) FROM steps WHERE status <> 'completed') AS open,
      (SELECT count(*) FROM events WHERE entity = 'plan' AND action = 'complete') AS plan_completions,
      (SELECT count(*) FROM steps s WHERE s.blockers <> (SELECT count(*) FROM step_deps d JOIN steps dep ON dep.anchor = d.depends_on
         WHERE d.step_anchor = s.anchor AND dep.status <> 'completed')) AS wrong_blockers`,
  );
  const row = r?.rows[0] as Record<string, string>;
  return (
    `${row.completed}/${WORKERS * OPS} completed (${expected} expected), ${row.claims} claims of ${row.claimed_steps} steps, ` +
    `${row.foreign_completions} completions by a non-holder, ${row.open} open, plan ${row.plan} (${row.plan_completions} completion event), ${row.wrong_blockers} wrong blocker counts`
  );
}

function pct(values: readonly number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN };
}

function totals(rounds: readonly Round[]) {
  const reports = rounds.flatMap((r) => r.reports);
  return {
    wallMs: rounds.reduce((a, r) => a + r.wallMs, 0),
    transactions: reports.reduce((a, r) => a + r.transactions, 0),
    claimMs: reports.flatMap((r) => r.claimMs),
    completeMs: reports.flatMap((r) => r.completeMs),
    connectMs: reports.map((r) => r.connectMs),
    retries: reports.reduce((a, r) => a + r.retries, 0),
    errors: reports.flatMap((r) => r.errors),
  };
}

/** Runs the comparison and prints it; returns the summary rows bench/run.ts prints (targets judged on the `single` shape). */
export async function benchPostgresRaw(url?: string): Promise<TargetRow[]> {
  const target = url ? borrowed(url) : throwaway();
  const pgVersion = (createRequire(import.meta.url)('pg/package.json') as { version: string }).version;
  try {
    const rounds: Record<Shape, Round[]> = { raw: [], statements: [], single: [], derived: [] };
    const checks: string[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const order: Shape[] = ['raw', 'statements', 'single', 'derived'];
      for (const shape of r % 2 === 0 ? order : order.reverse()) {
        const result = await round(target, shape, `${shape}_${r}`);
        rounds[shape].push(result);
        if (result.check) checks.push(`${shape}: ${result.check}`);
      }
    }
    const solo: Partial<Record<Shape, ReturnType<typeof totals>>> = {};
    for (const shape of ['raw', 'statements', 'single', 'derived'] as const)
      solo[shape] = totals([await round(target, shape, `solo_${shape}`, 1, 200)]);
    const rawT = totals(rounds.raw);
    const rawTps = rawT.transactions / (rawT.wallMs / 1000);
    const rawLat = pct([...rawT.claimMs, ...rawT.completeMs]);
    console.log(
      `\n== PostgreSQL prototype: ${WORKERS} processes x ${OPS} claim+complete on one plan of ${WORKERS * OPS} steps (step i waits on i-${LEAD}), ${ROUNDS} rounds of each shape, interleaved`,
    );
    console.log(
      `  ${target.describe}; node-postgres ${pgVersion}, one connection per process, named statements, READ COMMITTED`,
    );
    console.log(
      `  raw                ${WORKERS} procs x ${OPS * 2} BEGIN; UPDATE … RETURNING; COMMIT: ${rawTps.toFixed(0).padStart(6)} txn/s   latency p50 ${rawLat.p50.toFixed(1)} p99 ${rawLat.p99.toFixed(1)} ms   errors ${rawT.errors.length}`,
    );
    const rows: TargetRow[] = [];
    for (const shape of ['statements', 'single', 'derived'] as const) {
      const t = totals(rounds[shape]);
      const tps = t.transactions / (t.wallMs / 1000);
      const ratio = tps / rawTps;
      const claim = pct(t.claimMs);
      const complete = pct(t.completeMs);
      const s = solo[shape];
      console.log(
        `  ${shape.padEnd(18)} ${WORKERS} procs x ${OPS} claim + complete: ${tps.toFixed(0).padStart(6)} txn/s = ${(tps / 2).toFixed(0)} pairs/s   ratio per txn ${ratio.toFixed(2)}x (pairs ${(tps / 2 / rawTps).toFixed(2)}x)`,
      );
      console.log(
        `  ${''.padEnd(18)} claim p50 ${claim.p50.toFixed(1)} p99 ${claim.p99.toFixed(1)} max ${claim.max.toFixed(1)} ms   complete p50 ${complete.p50.toFixed(1)} p99 ${complete.p99.toFixed(1)} max ${complete.max.toFixed(1)} ms`,
      );
      console.log(
        `  ${''.padEnd(18)} uncontended: claim p50 ${pct(s?.claimMs ?? []).p50.toFixed(2)} ms, complete p50 ${pct(s?.completeMs ?? []).p50.toFixed(2)} ms   retried ${t.retries}   errors surfaced ${t.errors.length}${t.errors[0] ? ` (first: ${t.errors[0]})` : ''}`,
      );
      console.log(
        `  ${''.padEnd(18)} per-round wall ${rounds[shape].map((x) => x.wallMs.toFixed(0)).join(', ')} ms (raw ${rounds.raw.map((x) => x.wallMs.toFixed(0)).join(', ')} ms)`,
      );
      if (shape !== 'single') continue;
      rows.push(
        {
          metric: `postgres ${WORKERS}x${OPS} (single statement): throughput vs raw (per txn)`,
          target: '>= 0.50x',
          measured: `${ratio.toFixed(2)}x (${tps.toFixed(0)} vs ${rawTps.toFixed(0)} txn/s; pairs ${(tps / 2 / rawTps).toFixed(2)}x)`,
          met: ratio >= 0.5,
        },
        {
          metric: `postgres ${WORKERS}x${OPS} (single statement): claim latency p99`,
          target: '<= 250 ms',
          measured: `${claim.p99.toFixed(1)} ms (p50 ${claim.p50.toFixed(1)} ms)`,
          met: claim.p99 <= 250,
        },
        {
          metric: `postgres ${WORKERS}x${OPS} (single statement): errors surfaced`,
          target: '0',
          measured: String(t.errors.length),
          met: t.errors.length === 0,
        },
      );
    }
    const soloRaw = solo.raw;
    const soloConnect = pct(Object.values(solo).flatMap((t) => t?.connectMs ?? []));
    const crowdConnect = pct(
      Object.values(rounds)
        .flat()
        .flatMap((r) => r.reports.map((x) => x.connectMs)),
    );
    console.log(
      `  uncontended raw txn p50 ${pct([...(soloRaw?.claimMs ?? []), ...(soloRaw?.completeMs ?? [])]).p50.toFixed(2)} ms; opening a connection (SCRAM over the socket): alone ${soloConnect.p50.toFixed(1)} ms, ${WORKERS} at once p50 ${crowdConnect.p50.toFixed(1)} ms`,
    );
    console.log(`  end state: ${checks.join('; ')}`);
    return rows;
  } finally {
    target.close();
  }
}

if (import.meta.main) {
  const at = process.argv.indexOf('--url');
  const rows = await benchPostgresRaw(at > 0 ? process.argv[at + 1] : undefined);
  if (process.argv.includes('--sqlite')) {
    const { benchContention } = await import('./contention.ts');
    rows.push(...(await benchContention()));
  }
  console.log(
    '\n' + rows.map((r) => `  ${r.metric}: ${r.measured} (target ${r.target}${r.met ? '' : ', MISSED'})`).join('\n'),
  );
}
