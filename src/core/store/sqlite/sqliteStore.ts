import { storeOperations } from '../shared/storeOperations.ts';
import type { Store, Watch } from '../store.ts';
import { sqlitePort } from './port.ts';
import type { SqlConnection } from './sqlite.ts';
import { SqliteTransactions, type SqliteStoreOptions } from './transactions.ts';
import { watchDatabase } from './watch.ts';

export type { SqliteStoreOptions } from './transactions.ts';

const connections = new WeakMap<Store, SqlConnection>();

/** The store's own connection, for benches that time SQLite itself (bench/); nothing in src outside the store may import it. */
export function sqliteConnection(store: Store): SqlConnection {
  const db = connections.get(store);
  if (!db) throw new Error('not a SQLite store');
  return db;
}

/**
 * The SQLite store: the operation tables (shared/storeOperations.ts) over one connection, each
 * operation one transaction on it (transactions.ts). The step commands use their table alone (stepStore.ts).
 */
export function sqliteStore(path: string, options: SqliteStoreOptions = {}): Store {
  const sqlite = new SqliteTransactions(path, options, sqlitePort);
  const watches = new Set<Watch>();
  // A counter that changes whenever another connection commits a write.
  const dataVersion = (): number => Number(sqlite.db.pragma('data_version', { simple: true }));
  const store: Store = {
    ...storeOperations(sqlite),
    describe: () => sqlite.describe(),
    close: () => {
      for (const w of [...watches]) w.dispose();
      return sqlite.close();
    },
    watch: (listener) => {
      const w = watchDatabase(sqlite.path, dataVersion, listener, () => watches.delete(w));
      watches.add(w);
      return w;
    },
  };
  connections.set(store, sqlite.db);
  return store;
}
