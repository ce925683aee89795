import { systemClock, type Clock } from '../../clock.ts';
import { runSync } from '../shared/op.ts';
import { OperationStore, type PortOp } from '../shared/operationStore.ts';
import type { StoreDescription, Watch } from '../store.ts';
import { openDatabase, rolledBackTransaction, writeTransaction, type OpenOptions } from './open.ts';
import { sqlitePort } from './port.ts';
import { mapSqliteError, type Database } from './sqlite.ts';
import { watchDatabase } from './watch.ts';

export interface SqliteStoreOptions extends OpenOptions {
  readonly clock?: Clock;
}

const connections = new WeakMap<SqliteStore, Database>();

/** The store's own connection, for benches that time SQLite itself (bench/); nothing in src outside the store may import it. */
export function sqliteConnection(store: SqliteStore): Database {
  const db = connections.get(store);
  if (!db) throw new Error('not a SqliteStore');
  return db;
}

/**
 * The SQLite store: every operation (shared/operationStore.ts) is one transaction on one connection
 * (writes BEGIN IMMEDIATE), run synchronously inside it over this connection's port, so no other
 * operation of this process interleaves with it.
 */
export class SqliteStore extends OperationStore {
  private readonly path: string;
  private readonly db: Database;
  private readonly clock: Clock;
  private readonly watches = new Set<Watch>();

  constructor(path: string, options: SqliteStoreOptions = {}) {
    super();
    this.path = path;
    this.db = openDatabase(path, options);
    this.clock = options.clock ?? systemClock;
    connections.set(this, this.db);
  }

  describe(): StoreDescription {
    return { backend: 'sqlite', place: this.path, file: this.path === ':memory:' ? null : this.path };
  }

  close(): Promise<void> {
    for (const w of [...this.watches]) w.dispose();
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }

  watch(listener: () => void): Watch {
    const w = watchDatabase(
      this.path,
      () => this.dataVersion(),
      listener,
      () => this.watches.delete(w),
    );
    this.watches.add(w);
    return w;
  }

  /** A counter that changes whenever another connection commits a write. */
  private dataVersion(): number {
    return Number(this.db.pragma('data_version', { simple: true }));
  }

  /** The operation run to its end, synchronously, over this connection's port at the clock's time. */
  private run<T>(op: PortOp<T>): T {
    return runSync(op(sqlitePort(this.db, this.clock.now())));
  }

  /** In an IMMEDIATE transaction, SQLite's failures mapped. */
  protected write<T>(_doing: string, op: PortOp<T>): Promise<T> {
    return this.guard(() => writeTransaction(this.db, () => this.run(op)));
  }

  /** In one deferred transaction, so it sees a single consistent snapshot. */
  protected read<T>(_doing: string, op: PortOp<T>): Promise<T> {
    return this.guard(() => this.db.transaction(() => this.run(op))());
  }

  /** In an IMMEDIATE transaction that is always rolled back. */
  protected preview<T>(_doing: string, op: PortOp<T>): Promise<T> {
    return this.guard(() => rolledBackTransaction(this.db, () => this.run(op)));
  }

  private guard<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(mapSqliteError(err, this.path));
    }
  }
}
