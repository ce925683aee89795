import { portOver, type PortMethods, type StorePort } from '../shared/port.ts';
import { runAsync, type Op } from '../shared/op.ts';
import { claimsPg } from './claims.ts';
import { commitTargetPg } from './commitTarget.ts';
import { completePg } from './complete.ts';
import { contextPg } from './context.ts';
import { epicVerificationPg } from './epicVerification.ts';
import { epicsPg } from './epics.ts';
import { filesClaimPg } from './filesClaim.ts';
import { handoffPg } from './handoff.ts';
import { initPlanPg } from './initPlan.ts';
import { itemsPg } from './items.ts';
import { planVersionsPg } from './planVersions.ts';
import { planningNotesPg } from './planningNotes.ts';
import { portBlocksPg } from './portBlocks.ts';
import { prunePg } from './prune.ts';
import { queriesPg } from './queries.ts';
import { readinessPg } from './readiness.ts';
import { reconcilePg } from './reconcile.ts';
import { recordsPg } from './records.ts';
import { reopenPg } from './reopen.ts';
import { rowsPg } from './rows.ts';
import { runsPg } from './runs.ts';
import { schedulerPg } from './schedulerSnapshot.ts';
import type { Tx } from './session.ts';
import { signalsPg } from './signals.ts';
import { spendPg } from './spend.ts';
import { statsPg } from './stats.ts';

/** PostgreSQL port methods answer with promises of rows (shared/op.ts); each sees the transaction (every query scoped to its repository), its time and host. */
export type PgMethods<P> = PortMethods<P, { readonly tx: Tx; readonly now: string; readonly host: string }>;

const METHODS: PgMethods<StorePort> = {
  ...rowsPg,
  ...readinessPg,
  ...claimsPg,
  ...commitTargetPg,
  ...reconcilePg,
  ...completePg,
  ...itemsPg,
  ...reopenPg,
  ...initPlanPg,
  ...epicsPg,
  ...planVersionsPg,
  ...epicVerificationPg,
  ...schedulerPg,
  ...handoffPg,
  ...signalsPg,
  ...planningNotesPg,
  ...runsPg,
  ...queriesPg,
  ...contextPg,
  ...recordsPg,
  ...prunePg,
  ...spendPg,
  ...statsPg,
  ...portBlocksPg,
  ...filesClaimPg,
};

/** The port of one PostgreSQL transaction: its time is the server's (or the test clock's); holders are named by host. */
export function pgPort(tx: Tx): StorePort {
  return portOver(METHODS, { tx, now: tx.now, host: tx.host });
}

/** Runs a shared operation in this transaction, awaiting each backend call. */
export function runPg<T>(tx: Tx, op: (port: StorePort) => Op<T>): Promise<T> {
  return runAsync(op(pgPort(tx)));
}
