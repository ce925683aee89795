import { systemClock, type Clock } from '../../clock.ts';
import { runSync, type Op } from '../shared/op.ts';
import type { Transactions } from '../shared/stepOperations.ts';
import type { StoreDescription } from '../store.ts';
import { openDatabase, rolledBackTransaction, writeTransaction, type OpenOptions } from './open.ts';
import { mapSqliteError, type SqlConnection } from './sqlite.ts';

export interface SqliteStoreOptions extends OpenOptions {
  readonly clock?: Clock;
}

/**
 * One connection running the shared operations over port `P`, each as one transaction (writes BEGIN
 * IMMEDIATE), run synchronously inside it, so no other operation of this process interleaves with it.
 * Both SQLite stores run their operation tables on it: the whole one (sqliteStore.ts) and the step commands' (stepStore.ts).
 */
export class SqliteTransactions<P> implements Transactions<P> {
  readonly path: string;
  readonly db: SqlConnection;
  private readonly clock: Clock;
  private readonly portOf: (db: SqlConnection, now: Date) => P;

  constructor(path: string, options: SqliteStoreOptions, portOf: (db: SqlConnection, now: Date) => P) {
    this.path = path;
    this.db = openDatabase(path, options);
    this.clock = options.clock ?? systemClock;
    this.portOf = portOf;
  }

  describe(): StoreDescription {
    return { backend: 'sqlite', place: this.path, file: this.path === ':memory:' ? null : this.path };
  }

  close(): Promise<void> {
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }

  /** In an IMMEDIATE transaction, SQLite's failures mapped (its messages say what; `doing` is PostgreSQL's). */
  write<T>(_doing: string, op: (port: P) => Op<T>): Promise<T> {
    return this.guard(() => writeTransaction(this.db, () => this.run(op)));
  }

  /** In one deferred transaction, so it sees a single consistent snapshot. */
  read<T>(_doing: string, op: (port: P) => Op<T>): Promise<T> {
    return this.guard(() => this.db.transaction(() => this.run(op))());
  }

  /** In an IMMEDIATE transaction that is always rolled back. */
  preview<T>(_doing: string, op: (port: P) => Op<T>): Promise<T> {
    return this.guard(() => rolledBackTransaction(this.db, () => this.run(op)));
  }

  /** The operation run to its end, synchronously, over this connection's port at the clock's time. */
  private run<T>(op: (port: P) => Op<T>): T {
    return runSync(op(this.portOf(this.db, this.clock.now())));
  }

  private guard<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(mapSqliteError(err, this.path));
    }
  }
}
