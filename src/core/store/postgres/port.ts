import { runAsync, type Op } from '../shared/op.ts';
import type { PortState, StorePort } from '../shared/port.ts';
import { claimsPg } from './claims.ts';
import { commitTargetPg } from './commitTarget.ts';
import { readinessPg } from './readiness.ts';
import { reconcilePg } from './reconcile.ts';
import { rowsPg } from './rows.ts';
import type { Tx } from './session.ts';
import { completePg } from './complete.ts';
import { itemsPg } from './items.ts';
import { reopenPg } from './reopen.ts';
import { initPlanPg } from './initPlan.ts';
import { epicsPg } from './epics.ts';
import { planVersionsPg } from './planVersions.ts';
import { epicVerificationPg } from './epicVerification.ts';
import { schedulerPg } from './schedulerSnapshot.ts';
import { handoffPg } from './handoffVersions.ts';
import { signalsPg } from './signals.ts';
import { planningNotesPg } from './planningNotes.ts';
import { runsPg } from './runs.ts';
import { queriesPg } from './queries.ts';
import { contextPg } from './context.ts';
import { recordsPg } from './records.ts';
import { prunePg } from './prune.ts';

/** What a PostgreSQL port method sees as `this`: the transaction (every query scoped to its repository), its time and host. */
export interface PgTx {
  readonly tx: Tx;
  readonly now: string;
  readonly host: string;
}

/** A table of PostgreSQL port methods answering part of the port, with promises of rows (shared/op.ts). */
export type PgMethods<P> = Omit<P, PortState> & ThisType<PgTx>;

const METHODS: PgMethods<StorePort> = { ...rowsPg, ...readinessPg, ...claimsPg, ...commitTargetPg, ...reconcilePg, ...completePg, ...itemsPg, ...reopenPg, ...initPlanPg, ...epicsPg, ...planVersionsPg, ...epicVerificationPg, ...schedulerPg, ...handoffPg, ...signalsPg, ...planningNotesPg, ...runsPg, ...queriesPg, ...contextPg, ...recordsPg, ...prunePg };

/** The port of one PostgreSQL transaction: its time is the server's (or the test clock's); holders are named by host. */
export function pgPort(tx: Tx): StorePort {
  const port = Object.create(METHODS) as { tx: Tx; now: string; host: string };
  port.tx = tx;
  port.now = tx.now;
  port.host = tx.host;
  return port as unknown as StorePort;
}

/** Runs a shared operation in this transaction, awaiting each backend call. */
export function runPg<T>(tx: Tx, op: (port: StorePort) => Op<T>): Promise<T> {
  return runAsync(op(pgPort(tx)));
}
