// One process of bench/postgresStore.ts: `ops` claim + complete pairs through the real Store (openStore
// on a postgres:// URL or a SQLite file), or as many pairs of raw `BEGIN; UPDATE … RETURNING; COMMIT`.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { parsePlan } from '../src/core/plan/parse.ts';
import { openStore } from '../src/core/store/index.ts';
import { messageOf } from '../src/shared/errorMessage.ts';
import { planSourceOf } from '../src/core/plan/source.ts';

export interface StoreWorkerConfig {
  readonly kind: 'store' | 'raw';
  /** A postgres:// URL or a SQLite file. */
  readonly db: string;
  readonly planFile: string;
  readonly planPath: string;
  readonly worker: number;
  readonly ops: number;
}

export interface StoreWorkerReport {
  readonly claimMs: number[];
  readonly completeMs: number[];
  readonly errors: string[];
  empty: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as StoreWorkerConfig;

async function main(): Promise<void> {
  const report: StoreWorkerReport = { claimMs: [], completeMs: [], errors: [], empty: 0 };
  const go = new Promise<void>((resolve) => process.once('message', () => resolve()));
  const timed = async <T>(into: number[], run: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await run();
    } finally {
      into.push(performance.now() - start);
    }
  };
  if (config.kind === 'raw') {
    const client = new pg.Client({ connectionString: config.db });
    await client.connect();
    const raw = async (id: number) => {
      await client.query('BEGIN');
      await client.query({
        name: 'raw',
        text: 'UPDATE bench_counters SET n = n + 1, at = now() WHERE id = $1 RETURNING n',
        values: [id],
      });
      await client.query('COMMIT');
    };
    process.send?.('ready');
    await go;
    for (let n = 0; n < config.ops; n++) {
      const id = config.worker * config.ops * 2 + n * 2;
      await timed(report.claimMs, () => raw(id));
      await timed(report.completeMs, () => raw(id + 1));
    }
    await client.end();
  } else {
    const source = planSourceOf(config.planPath, parsePlan(readFileSync(config.planFile, 'utf8'), config.planPath));
    const store = openStore({
      location: config.db,
      repository: { id: 'bench-repo', source: 'configured' },
      host: `bench-host-${config.worker % 2}`,
    });
    const actor = { worktree: `/bench/worktree-${config.worker}`, agent: `agent-${config.worker}` };
    await store.ready(config.planPath); // connected (and, on SQLite, opened) before the clock starts
    process.send?.('ready');
    await go;
    for (let n = 0; n < config.ops; n++) {
      try {
        const c = await timed(report.claimMs, () => store.claimNext(source, actor));
        if (!c.claimed) {
          report.empty++;
          continue;
        }
        await timed(report.completeMs, () => store.complete(source, c.step_anchor, { ...actor, token: c.claim_token }));
      } catch (err) {
        report.errors.push(`${(err as { code?: string }).code ?? ''} ${messageOf(err)}`.trim());
      }
    }
    await store.close();
  }
  process.send?.(report, () => process.disconnect());
}

await main();
