import type { PortState, StorePort } from '../shared/port.ts';
import { commitTargetSql } from './commitTarget.ts';
import { reconcileSql } from './reconcile.ts';
import { rowsSql } from './rows.ts';
import type { Database } from './sqlite.ts';

/** What a SQLite port method sees as `this`: the connection, inside the operation's transaction, and its time. */
export interface SqliteTx {
  readonly db: Database;
  readonly now: string;
  readonly host: null;
}

/** A table of SQLite port methods answering part of the port: synchronously, with rows (shared/op.ts). */
export type SqliteMethods<P> = Omit<P, PortState> & ThisType<SqliteTx>;

const METHODS: SqliteMethods<StorePort> = { ...rowsSql, ...commitTargetSql, ...reconcileSql };

/** The port of one SQLite transaction: `now` is the operation's time; holders are not named by host (one machine). */
export function sqlitePort(db: Database, now: Date): StorePort {
  const port = Object.create(METHODS) as { db: Database; now: string; host: null };
  port.db = db;
  port.now = now.toISOString();
  port.host = null;
  return port as unknown as StorePort;
}
