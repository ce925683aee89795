import { DEFAULT_LEASE_SECONDS } from '../shared/claims.ts';
import { markPlanDone } from '../shared/complete.ts';
import { runAsync } from '../shared/op.ts';
import {
  storeOperations,
  type PortOp,
  type StoreOperations,
  type StoreTransactions,
} from '../shared/storeOperations.ts';
import type { Store, Watch } from '../store.ts';
import { claimDirect, findClaim, resumeClaim } from './claimOne.ts';
import { completeDirect, findCompletion } from './completeOne.ts';
import { openPool } from './connection.ts';
import { findCreatedEpic } from './epics.ts';
import { findArtifact } from './items.ts';
import { findProposal } from './planVersions.ts';
import { pgPort } from './port.ts';
import { Session, type SessionOptions, type Tx } from './session.ts';
import { findSignal } from './signals.ts';
import { watchRepository } from './watch.ts';

/**
 * The store on PostgreSQL (docs/postgres-design.md): the operation tables (shared/storeOperations.ts),
 * each operation one transaction over this repository's port (rows scoped by the repository id,
 * holders named by host, lease times from the server's clock, claims with FOR UPDATE SKIP LOCKED).
 * Beyond them (oneRoundTrip below): a claim and a plain completion in one round trip when they can
 * (claimOne.ts, completeOne.ts), and writes whose reply was lost looked up by their operation id
 * (docs/postgres-design.md, "Failures, retries, idempotence").
 */
export function postgresStore(options: SessionOptions): Store & { schemaVersion(): Promise<number> } {
  const session = new Session(openPool(options.url), options);
  const run =
    <T>(op: PortOp<T>) =>
    (tx: Tx): Promise<T> =>
      runAsync(op(pgPort(tx)));
  const tx: StoreTransactions = {
    // Each backend call awaited inside one READ COMMITTED transaction, committed with the repository notified.
    write: (doing, op) => session.write(doing, run(op)),
    // In one REPEATABLE READ snapshot.
    read: (doing, op) => session.read(doing, run(op)),
    // The write's transaction, rolled back.
    preview: (doing, op) => session.write(doing, run(op), false),
  };
  const watches = new Set<Watch>();
  const shared = storeOperations(tx);
  return {
    ...shared,
    ...oneRoundTrip(session, tx, shared),
    describe: () => ({ backend: 'postgres', place: session.place, file: null }),
    close: async () => {
      for (const w of [...watches]) w.dispose();
      await session.close();
    },
    watch: (listener) => {
      const w = watchRepository(options.url, session.options.repo.id, listener, () => watches.delete(w));
      watches.add(w);
      return w;
    },
    // The schema version on the server, for doctor (0 when nothing was created yet).
    schemaVersion: () => session.schemaVersion(),
  };
}

/** PostgreSQL's own claim and completion, and the writes that take an operation id whose reply was lost (`resume`). */
function oneRoundTrip(session: Session, tx: StoreTransactions, shared: StoreOperations) {
  /**
   * A write an earlier process sent and lost the reply of, handed over by its operation id `resume`:
   * what it committed, found by `find` after its backend is ended, with `resumed: true`; when it
   * committed nothing (or there is no id), `write` does it now. The server still away:
   * OutcomeUnknownError with the same id, and nothing is written.
   */
  const resumeOr = async <T extends object>(
    resume: string | undefined,
    what: string,
    find: (tx: Tx, op: string) => Promise<T | null>,
    write: () => Promise<T>,
  ): Promise<T> => {
    if (resume) {
      const found = await session.settle(`looking up ${what} whose reply was lost`, resume, find);
      if (found) return { ...found, resumed: true };
    }
    return write();
  };
  return {
    /** One round trip when it claims; when it does not, the transaction that says why (docs/postgres-design.md, "Concurrency"). */
    claimNext: (source, actor, options = {}) => {
      const lease = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
      const branch = options.branch ?? null;
      // A handed-over claim counts only while its step is still this holder's under its token.
      return resumeOr(
        options.resume,
        'the claim',
        (t, op) => resumeClaim(t, op, source, actor),
        async () =>
          // The one statement claims the first ready step; a chosen one takes the transaction.
          (options.anchor === undefined
            ? await session.direct(
                'claiming',
                (d) => claimDirect(d, source, actor, lease, branch),
                (t, op) => findClaim(t, op, source, actor),
              )
            : null) ?? shared.claimNext(source, actor, options),
      );
    },
    /** One round trip for a holder's plain completion; refusals, repeats, substeps and forced ones take the transaction. */
    complete: async (source, anchor, actor, options = {}) => {
      const direct = await session.direct(
        'completing',
        (d) => completeDirect(d, source, anchor, actor, options),
        (t, op) => findCompletion(t, op, source, anchor),
      );
      if (direct === null) return shared.complete(source, anchor, actor, options);
      if (direct.remaining_steps > 0 || direct.plan_completed) return direct;
      // Nothing open and not marked by this completion: another marked it, or the reply was lost between the
      // COMMIT and the mark after it (docs/postgres-design.md, "Concurrency"). Make sure; report it only if this marked it.
      const marked = await tx.write('completing', (port) => markPlanDone(port, actor, source.planPath, anchor));
      return marked ? { ...direct, plan_completed: true } : direct;
    },
    recordArtifact: (planPath, anchor, kind, summary, actor, options = {}) =>
      resumeOr(
        options.resume,
        'the artifact',
        (t, op) => findArtifact(t, op, planPath, anchor, actor),
        () => shared.recordArtifact(planPath, anchor, kind, summary, actor),
      ),
    createEpic: (input, actor, options = {}) =>
      resumeOr(
        options.resume,
        'the epic',
        (t, op) => findCreatedEpic(t, op, input, actor),
        () => shared.createEpic(input, actor),
      ),
    proposePlan: (epicId, plan, actor, options = {}) =>
      resumeOr(
        options.resume,
        'the proposal',
        (t, op) => findProposal(t, op, epicId, plan, actor),
        () => shared.proposePlan(epicId, plan, actor),
      ),
    recordSignal: (epicId, type, summary, locations, actor, awaitPerson = false, options = {}) =>
      resumeOr(
        options.resume,
        'the signal',
        (t, op) => findSignal(t, op, epicId, type, summary, actor, awaitPerson),
        () => shared.recordSignal(epicId, type, summary, locations, actor, awaitPerson),
      ),
  } satisfies Partial<StoreOperations>;
}
