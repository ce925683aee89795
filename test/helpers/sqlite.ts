import { openDatabase } from '../../src/core/store/sqlite/open.ts';
import type { SqlConnection } from '../../src/core/store/sqlite/sqlite.ts';
import type { Store } from '../../src/core/store/index.ts';

const connections = new Map<string, SqlConnection>();

/**
 * A connection of the test's own to a SQLite store's file, opened as the store opens its own (same
 * pragmas and statement cache), for setting up or inspecting raw rows: the Store interface hands out
 * no database handle (docs/architecture.md). One per file, reused until `closeSqlite`.
 */
export function sqliteOf(store: Store): SqlConnection {
  const file = store.describe().file;
  if (file === null) throw new Error('an in-memory store has no file a test could open');
  const known = connections.get(file);
  if (known?.open) return known;
  const db = openDatabase(file);
  connections.set(file, db);
  return db;
}

/** Closes the test's connection to the store's file (before checks that need it to be the only one). */
export function closeSqlite(store: Store): void {
  const file = store.describe().file;
  if (file === null) return;
  connections.get(file)?.close();
  connections.delete(file);
}
