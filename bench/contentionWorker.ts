import { readFileSync } from 'node:fs';
import { EnvironmentError } from '../src/core/errors.ts';
import { parsePlan } from '../src/core/plan/parse.ts';
import { loadSqlite, type SqlConnection } from '../src/core/store/sqlite/sqlite.ts';
import { sqliteStore, sqliteConnection } from '../src/core/store/sqlite/sqliteStore.ts';
import type { Actor } from '../src/core/store/types.ts';
import type { PlanSource } from '../src/core/plan/types.ts';
import { messageOf } from '../src/shared/errorMessage.ts';
import { planSourceOf } from '../src/core/plan/source.ts';

/** What the parent passes as argv[2] (JSON). */
export interface WorkerConfig {
  readonly mode: 'springfield' | 'raw';
  readonly db: string;
  readonly planFile: string;
  readonly planPath: string;
  readonly worker: number;
  readonly ops: number;
  readonly busyTimeoutMs: number;
}

/** What the worker sends back when it is done. */
export interface WorkerReport {
  readonly type: 'done';
  /** Per claim (springfield) or per transaction (raw), in ms, including lock waits. */
  readonly claimMs: number[];
  readonly completeMs: number[];
  /** Time from BEGIN IMMEDIATE returning (lock taken) to COMMIT returning: how long the write lock is held. */
  readonly holdMs: number[];
  /** Time spent inside BEGIN IMMEDIATE, i.e. waiting for the write lock (SQLite's busy handler). */
  readonly waitMs: number[];
  transactions: number;
  busyErrors: number;
  readonly otherErrors: string[];
}

type Op = () => Promise<void>;

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const report: WorkerReport = {
  type: 'done',
  claimMs: [],
  completeMs: [],
  holdMs: [],
  waitMs: [],
  transactions: 0,
  busyErrors: 0,
  otherErrors: [],
};

function isBusy(err: unknown): boolean {
  if (err instanceof EnvironmentError) return err.code === 'database_locked';
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

function timed<T>(into: number[], fn: () => T): T {
  const t0 = performance.now();
  try {
    return fn();
  } finally {
    into.push(performance.now() - t0);
  }
}

/** Wraps db.exec to time lock waits and lock holds of every BEGIN IMMEDIATE … COMMIT. */
function instrument(db: SqlConnection): void {
  const exec = db.exec.bind(db);
  let lockedAt = 0;
  db.exec = (sql: string) => {
    const t0 = performance.now();
    exec(sql);
    const t1 = performance.now();
    if (sql === 'BEGIN IMMEDIATE') {
      report.waitMs.push(t1 - t0);
      lockedAt = t1;
    } else if (sql === 'COMMIT') {
      report.holdMs.push(t1 - lockedAt);
    }
    return db;
  };
}

/** Springfield: claimNext then complete through the store, as an agent loop would. */
function springfieldOp(): { op: Op; close: () => void } {
  const store = sqliteStore(config.db, { busyTimeoutMs: config.busyTimeoutMs });
  instrument(sqliteConnection(store));
  const source: PlanSource = planSourceOf(
    config.planPath,
    parsePlan(readFileSync(config.planFile, 'utf8'), config.planPath),
  );
  const actor: Actor = { worktree: `/bench/worktree-${config.worker}`, agent: `agent-${config.worker}` };
  const op = async (): Promise<void> => {
    const t0 = performance.now();
    const claim = await store.claimNext(source, actor).finally(() => report.claimMs.push(performance.now() - t0));
    report.transactions++;
    if (!claim.claimed) throw new Error(`nothing to claim: ${claim.reason}`);
    const t1 = performance.now();
    await store
      .complete(source, claim.step_anchor, { ...actor, token: claim.claim_token })
      .finally(() => report.completeMs.push(performance.now() - t1));
    report.transactions++;
  };
  return { op, close: () => store.close() };
}

/** Raw SQLite: two BEGIN IMMEDIATE; UPDATE; COMMIT per op (as many transactions as claim+complete). */
function rawOp(): { op: Op; close: () => void } {
  const Sqlite = loadSqlite();
  const db = new Sqlite(config.db, { timeout: config.busyTimeoutMs });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  instrument(db);
  const update = db.prepare('UPDATE counters SET n = n + 1, at = ? WHERE id = ?');
  let i = 0;
  const tx = (into: number[]): void =>
    timed(into, () => {
      db.exec('BEGIN IMMEDIATE');
      try {
        update.run(new Date().toISOString(), config.worker * config.ops + (i % config.ops));
        db.exec('COMMIT');
        report.transactions++;
      } catch (err) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw err;
      }
    });
  const op = (): Promise<void> => {
    tx(report.claimMs);
    tx(report.completeMs);
    i++;
    return Promise.resolve();
  };
  return { op, close: () => db.close() };
}

async function main(): Promise<void> {
  const { op, close } = config.mode === 'raw' ? rawOp() : springfieldOp();
  const go = new Promise<void>((resolve) => process.once('message', () => resolve()));
  process.send?.({ type: 'ready' });
  await go;
  for (let n = 0; n < config.ops; n++) {
    try {
      await op();
    } catch (err) {
      if (isBusy(err)) report.busyErrors++;
      else report.otherErrors.push(messageOf(err));
    }
  }
  close();
  process.send?.(report, () => process.disconnect());
}

await main();
