import { runSync, type Op } from '../shared/op.ts';
import type { PortState, StorePort } from '../shared/port.ts';
import { claimsSql } from './claims.ts';
import { commitTargetSql } from './commitTarget.ts';
import { readinessSql } from './readiness.ts';
import { reconcileSql } from './reconcile.ts';
import { rowsSql } from './rows.ts';
import type { Database } from './sqlite.ts';
import { completeSql } from './complete.ts';
import { itemsSql } from './items.ts';
import { reopenSql } from './reopen.ts';
import { initPlanSql } from './initPlan.ts';
import { epicsSql } from './epics.ts';
import { planVersionsSql } from './planVersions.ts';
import { epicVerificationSql } from './epicVerification.ts';
import { schedulerSql } from './schedulerSnapshot.ts';
import { handoffSql } from './handoffVersions.ts';
import { signalsSql } from './signals.ts';
import { planningNotesSql } from './planningNotes.ts';
import { runsSql } from './runs.ts';
import { queriesSql } from './queries.ts';
import { contextSql } from './context.ts';
import { recordsSql } from './records.ts';
import { pruneSql } from './prune.ts';

/** What a SQLite port method sees as `this`: the connection, inside the operation's transaction, and its time. */
export interface SqliteTx {
  readonly db: Database;
  readonly now: string;
  readonly host: null;
}

/** A table of SQLite port methods answering part of the port: synchronously, with rows (shared/op.ts). */
export type SqliteMethods<P> = Omit<P, PortState> & ThisType<SqliteTx>;

const METHODS: SqliteMethods<StorePort> = { ...rowsSql, ...readinessSql, ...claimsSql, ...commitTargetSql, ...reconcileSql, ...completeSql, ...itemsSql, ...reopenSql, ...initPlanSql, ...epicsSql, ...planVersionsSql, ...epicVerificationSql, ...schedulerSql, ...handoffSql, ...signalsSql, ...planningNotesSql, ...runsSql, ...queriesSql, ...contextSql, ...recordsSql, ...pruneSql };

/** The port of one SQLite transaction: `now` is the operation's time; holders are not named by host (one machine). */
export function sqlitePort(db: Database, now: Date): StorePort {
  const port = Object.create(METHODS) as { db: Database; now: string; host: null };
  port.db = db;
  port.now = now.toISOString();
  port.host = null;
  return port as unknown as StorePort;
}

/** Runs a shared operation on this connection at `now`, synchronously (inside the caller's transaction). */
export function runSqlite<T>(db: Database, now: Date, op: (port: StorePort) => Op<T>): T {
  return runSync(op(sqlitePort(db, now)));
}
