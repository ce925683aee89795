import { OperationStore, type PortOp } from '../shared/operationStore.ts';
import type { StorePort } from '../shared/port.ts';
import type { StoreDescription, Watch } from '../store.ts';
import { sqlitePort } from './port.ts';
import type { Database } from './sqlite.ts';
import { SqliteTransactions, type SqliteStoreOptions } from './transactions.ts';
import { watchDatabase } from './watch.ts';

export type { SqliteStoreOptions } from './transactions.ts';

const connections = new WeakMap<SqliteStore, Database>();

/** The store's own connection, for benches that time SQLite itself (bench/); nothing in src outside the store may import it. */
export function sqliteConnection(store: SqliteStore): Database {
  const db = connections.get(store);
  if (!db) throw new Error('not a SqliteStore');
  return db;
}

/**
 * The SQLite store: every operation (shared/operationStore.ts) is one transaction on one connection
 * (transactions.ts). The step commands use a store of their operations only (stepStore.ts).
 */
export class SqliteStore extends OperationStore {
  private readonly sqlite: SqliteTransactions<StorePort>;
  private readonly watches = new Set<Watch>();

  constructor(path: string, options: SqliteStoreOptions = {}) {
    super();
    this.sqlite = new SqliteTransactions(path, options, sqlitePort);
    connections.set(this, this.sqlite.db);
  }

  describe(): StoreDescription {
    return this.sqlite.describe();
  }

  close(): Promise<void> {
    for (const w of [...this.watches]) w.dispose();
    return this.sqlite.close();
  }

  watch(listener: () => void): Watch {
    const w = watchDatabase(
      this.sqlite.path,
      () => this.dataVersion(),
      listener,
      () => this.watches.delete(w),
    );
    this.watches.add(w);
    return w;
  }

  /** A counter that changes whenever another connection commits a write. */
  private dataVersion(): number {
    return Number(this.sqlite.db.pragma('data_version', { simple: true }));
  }

  protected write<T>(_doing: string, op: PortOp<T>): Promise<T> {
    return this.sqlite.write(op);
  }

  protected read<T>(_doing: string, op: PortOp<T>): Promise<T> {
    return this.sqlite.read(op);
  }

  protected preview<T>(_doing: string, op: PortOp<T>): Promise<T> {
    return this.sqlite.preview(op);
  }
}
