// One process of bench/postgresRaw.ts: `ops` claim + complete pairs in one transaction shape
// (bench/postgresShapes.ts), or twice as many raw transactions, over one node-postgres connection.
import pg from 'pg';
import {
  claimSingle,
  claimStatements,
  completeSingle,
  completeStatements,
  rawTransaction,
  type Claimed,
  type Holder,
  type Outcome,
  type Sql,
} from './postgresShapes.ts';
import { messageOf } from '../src/shared/errorMessage.ts';

export type Shape = 'raw' | 'statements' | 'single' | 'derived';

/** What the parent passes as argv[2] (JSON). */
export interface PgWorkerConfig {
  readonly shape: Shape;
  readonly url: string;
  readonly schema: string | null;
  readonly worker: number;
  readonly ops: number;
  readonly leaseSeconds: number;
}

/** What the worker sends back when it is done. */
export interface PgWorkerReport {
  readonly type: 'done';
  /** Per claim (or the first raw transaction of a pair), in ms, including lock waits and retries. */
  readonly claimMs: number[];
  readonly completeMs: number[];
  /** Opening the connection (a Unix socket and SCRAM authentication on the throwaway server). */
  readonly connectMs: number;
  transactions: number;
  /** Deadlocks and serialization failures retried inside the transaction (never surfaced). */
  retries: number;
  readonly errors: string[];
}

const config = JSON.parse(process.argv[2] ?? '{}') as PgWorkerConfig;
const who: Holder = {
  host: `bench-host-${config.worker % 2}`,
  worktree: `/bench/worktree-${config.worker}`,
  agent: `agent-${config.worker}`,
};

/** node-postgres behind the shapes' interface: named statements are parsed once per connection. */
function driver(client: pg.Client): Sql {
  return {
    query: async <R>(name: string, text: string, values: readonly unknown[]) => {
      const r = await client.query({ name, text, values: [...values] });
      return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
    },
    simple: async <R>(text: string) => {
      const r = (await client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
      return (Array.isArray(r) ? (r.at(-1)?.rows ?? []) : r.rows) as R[];
    },
  };
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const client = new pg.Client({ connectionString: config.url });
  await client.connect();
  const report: PgWorkerReport = {
    type: 'done',
    claimMs: [],
    completeMs: [],
    connectMs: performance.now() - t0,
    transactions: 0,
    retries: 0,
    errors: [],
  };
  if (config.schema) await client.query(`SET search_path TO ${config.schema}`);
  const sql = driver(client);
  const timed = async <T>(into: number[], run: () => Promise<Outcome<T>>): Promise<T> => {
    const start = performance.now();
    try {
      const { result, retries } = await run();
      report.transactions++;
      report.retries += retries;
      return result;
    } finally {
      into.push(performance.now() - start);
    }
  };
  const go = new Promise<void>((resolve) => process.once('message', () => resolve()));
  process.send?.({ type: 'ready' });
  await go;
  const single = config.shape !== 'statements';
  const counter = config.shape !== 'derived';
  for (let n = 0; n < config.ops; n++) {
    try {
      if (config.shape === 'raw') {
        const id = config.worker * config.ops * 2 + n * 2;
        await timed(report.claimMs, () => rawTransaction(sql, id));
        await timed(report.completeMs, () => rawTransaction(sql, id + 1));
        continue;
      }
      const held: Claimed = await timed(report.claimMs, () =>
        single ? claimSingle(sql, who, config.leaseSeconds, counter) : claimStatements(sql, who, config.leaseSeconds),
      );
      await timed(report.completeMs, () =>
        single ? completeSingle(sql, who, held, counter) : completeStatements(sql, who, held),
      );
    } catch (err) {
      report.errors.push(`${(err as { code?: string }).code ?? ''} ${messageOf(err)}`.trim());
    }
  }
  await client.end();
  process.send?.(report, () => process.disconnect());
}

await main();
