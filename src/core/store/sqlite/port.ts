import { iso } from '../../clock.ts';
import { portOver, type PortMethods, type StorePort } from '../shared/port.ts';
import { STEP_METHODS } from './stepStore.ts';
import { runSync, type Op } from '../shared/op.ts';
import { commitTargetSql } from './commitTarget.ts';
import { contextSql } from './context.ts';
import { epicVerificationSql } from './epicVerification.ts';
import { epicsSql } from './epics.ts';
import { handoffSql } from './handoff.ts';
import { planVersionsSql } from './planVersions.ts';
import { planningNotesSql } from './planningNotes.ts';
import { portBlocksSql } from './portBlocks.ts';
import { pruneSql } from './prune.ts';
import { reconcileSql } from './reconcile.ts';
import { recordsSql } from './records.ts';
import { reopenSql } from './reopen.ts';
import { runsSql } from './runs.ts';
import { schedulerSql } from './schedulerSnapshot.ts';
import { signalsSql } from './signals.ts';
import { spendSql } from './spend.ts';
import { statsSql } from './stats.ts';
import type { SqlConnection } from './sqlite.ts';

/** SQLite port methods answer synchronously, with rows (shared/op.ts); each sees the connection, inside the operation's transaction, and its time. */
export type SqliteMethods<P> = PortMethods<P, SqliteState>;

/** What a SQLite port method sees as `this`: the connection, inside the operation's transaction, and its time. */
export interface SqliteState {
  readonly db: SqlConnection;
  readonly now: string;
  readonly host: null;
}

const METHODS: SqliteMethods<StorePort> = {
  ...STEP_METHODS,
  ...commitTargetSql,
  ...reconcileSql,
  ...reopenSql,
  ...epicsSql,
  ...planVersionsSql,
  ...epicVerificationSql,
  ...schedulerSql,
  ...handoffSql,
  ...signalsSql,
  ...planningNotesSql,
  ...runsSql,
  ...contextSql,
  ...recordsSql,
  ...pruneSql,
  ...spendSql,
  ...statsSql,
  ...portBlocksSql,
};

/** The port of one SQLite transaction: `now` is the operation's time; holders are not named by host (one machine). */
export function sqlitePort(db: SqlConnection, now: Date): StorePort {
  return portOver<StorePort, SqliteState>(METHODS, { db, now: iso(now), host: null });
}

/** Runs a shared operation on this connection at `now`, synchronously (inside the caller's transaction). */
export function runSqlite<T>(db: SqlConnection, now: Date, op: (port: StorePort) => Op<T>): T {
  return runSync(op(sqlitePort(db, now)));
}
