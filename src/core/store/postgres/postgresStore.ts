import type { SignalType } from '../../epics/transitions.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { EpicRow, NewEpic, ProposedPlan, ProposeResult, SignalLocation, SignalResult } from '../epicTypes.ts';
import { DEFAULT_LEASE_SECONDS } from '../shared/claims.ts';
import { markPlanDone } from '../shared/complete.ts';
import { runAsync } from '../shared/op.ts';
import { OperationStore, type PortOp } from '../shared/operationStore.ts';
import type { ClaimOptions, Store, StoreDescription, Watch } from '../store.ts';
import type { Actor, ArtifactResult, ClaimResult, CompleteOptions, CompleteResult } from '../types.ts';
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
 * The store on PostgreSQL (docs/postgres-design.md): every operation (shared/operationStore.ts) one
 * transaction over this repository's port (rows scoped by the repository id, holders named by host,
 * lease times from the server's clock, claims with FOR UPDATE SKIP LOCKED). Beyond them: a claim and
 * a plain completion in one round trip when they can (claimOne.ts, completeOne.ts), and writes whose
 * reply was lost looked up by their operation id (docs/postgres-design.md, "Failures, retries, idempotence").
 */
export class PostgresCore extends OperationStore {
  private readonly session: Session;
  private readonly watches = new Set<Watch>();
  private readonly url: string;

  constructor(options: SessionOptions) {
    super();
    this.url = options.url;
    this.session = new Session(openPool(options.url), options);
  }

  describe(): StoreDescription {
    return { backend: 'postgres', place: this.session.place, file: null };
  }

  async close(): Promise<void> {
    for (const w of [...this.watches]) w.dispose();
    await this.session.close();
  }

  watch(listener: () => void): Watch {
    const w = watchRepository(this.url, this.session.options.repo.id, listener, () => this.watches.delete(w));
    this.watches.add(w);
    return w;
  }

  /** The schema version on the server, for doctor (0 when nothing was created yet). */
  schemaVersion(): Promise<number> {
    return this.session.schemaVersion();
  }

  /** Each backend call awaited inside one READ COMMITTED transaction, committed with the repository notified. */
  protected write<T>(doing: string, op: PortOp<T>): Promise<T> {
    return this.session.write(doing, (tx) => runAsync(op(pgPort(tx))));
  }

  /** In one REPEATABLE READ snapshot. */
  protected read<T>(doing: string, op: PortOp<T>): Promise<T> {
    return this.session.read(doing, (tx) => runAsync(op(pgPort(tx))));
  }

  /** The write's transaction, rolled back. */
  protected preview<T>(doing: string, op: PortOp<T>): Promise<T> {
    return this.session.write(doing, (tx) => runAsync(op(pgPort(tx))), false);
  }

  /**
   * A write an earlier process sent and lost the reply of, handed over by its operation id `resume`
   * (docs/postgres-design.md, "Failures, retries, idempotence"): what it committed, found by `find` after its backend is ended, with
   * `resumed: true`; when it committed nothing (or there is no id), `write` does it now. The server
   * still away: OutcomeUnknownError with the same id, and nothing is written.
   */
  private async resumeOr<T extends object>(
    resume: string | undefined,
    what: string,
    find: (tx: Tx, op: string) => Promise<T | null>,
    write: () => Promise<T>,
  ): Promise<T> {
    if (resume) {
      const found = await this.session.settle(`looking up ${what} whose reply was lost`, resume, find);
      if (found) return { ...found, resumed: true };
    }
    return write();
  }

  /** One round trip when it claims; when it does not, the transaction that says why (docs/postgres-design.md, "Concurrency"). */
  override claimNext(source: PlanSource, actor: Actor, options: ClaimOptions = {}): Promise<ClaimResult> {
    const lease = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    const branch = options.branch ?? null;
    // A handed-over claim counts only while its step is still this holder's under its token.
    return this.resumeOr<ClaimResult>(
      options.resume,
      'the claim',
      (tx, op) => resumeClaim(tx, op, source, actor),
      async () =>
        // The one statement claims the first ready step; a chosen one takes the transaction.
        (options.anchor === undefined
          ? await this.session.direct(
              'claiming',
              (d) => claimDirect(d, source, actor, lease, branch),
              (tx, op) => findClaim(tx, op, source, actor),
            )
          : null) ?? super.claimNext(source, actor, options),
    );
  }

  /** One round trip for a holder's plain completion; refusals, repeats, substeps and forced ones take the transaction. */
  override async complete(
    source: PlanSource,
    anchor: string,
    actor: Actor,
    options: CompleteOptions = {},
  ): Promise<CompleteResult> {
    const direct = await this.session.direct(
      'completing',
      (d) => completeDirect(d, source, anchor, actor, options),
      (tx, op) => findCompletion(tx, op, source, anchor),
    );
    if (direct === null) return super.complete(source, anchor, actor, options);
    if (direct.remaining_steps > 0 || direct.plan_completed) return direct;
    // Nothing open and not marked by this completion: another marked it, or the reply was lost between the
    // COMMIT and the mark after it (docs/postgres-design.md, "Concurrency"). Make sure; report it only if this marked it.
    const marked = await this.write('completing', (port) => markPlanDone(port, actor, source.planPath, anchor));
    return marked ? { ...direct, plan_completed: true } : direct;
  }

  override recordArtifact(
    planPath: string,
    anchor: string,
    kind: string,
    summary: string,
    actor: Actor,
    options: { resume?: string } = {},
  ): Promise<ArtifactResult> {
    return this.resumeOr(
      options.resume,
      'the artifact',
      (tx, op) => findArtifact(tx, op, planPath, anchor, actor),
      () => super.recordArtifact(planPath, anchor, kind, summary, actor),
    );
  }

  override createEpic(
    input: NewEpic,
    actor: Actor,
    options: { resume?: string } = {},
  ): Promise<EpicRow & { readonly resumed?: true }> {
    return this.resumeOr(
      options.resume,
      'the epic',
      (tx, op) => findCreatedEpic(tx, op, input, actor),
      () => super.createEpic(input, actor),
    );
  }

  override proposePlan(
    epicId: string,
    plan: ProposedPlan,
    actor: Actor,
    options: { resume?: string } = {},
  ): Promise<ProposeResult> {
    return this.resumeOr(
      options.resume,
      'the proposal',
      (tx, op) => findProposal(tx, op, epicId, plan, actor),
      () => super.proposePlan(epicId, plan, actor),
    );
  }

  override recordSignal(
    epicId: string,
    type: SignalType,
    summary: string,
    locations: readonly SignalLocation[],
    actor: Actor,
    awaitPerson = false,
    options: { resume?: string } = {},
  ): Promise<SignalResult> {
    return this.resumeOr(
      options.resume,
      'the signal',
      (tx, op) => findSignal(tx, op, epicId, type, summary, actor, awaitPerson),
      () => super.recordSignal(epicId, type, summary, locations, actor, awaitPerson),
    );
  }
}

/** The Store on PostgreSQL: every operation of the interface (docs/postgres-design.md). */
export function postgresStore(options: SessionOptions): Store & { schemaVersion(): Promise<number> } {
  return new PostgresCore(options);
}
