import { systemClock, type Clock } from '../../clock.ts';
import { claimNext, DEFAULT_LEASE_SECONDS, heartbeat, resetStep, startStep } from './claims.ts';
import { completeStep } from './complete.ts';
import { initPlan } from './initPlan.ts';
import { recordArtifact, updateItems, type UpdateOptions } from './items.ts';
import { openDatabase, writeTransaction, type OpenOptions } from './open.ts';
import { listEvents, readySteps, showPlans, showStep } from './queries.ts';
import { mapSqliteError, type Database } from './sqlite.ts';
import type {
  Actor, ArtifactResult, ClaimResult, CompleteOptions, CompleteResult, EventQuery, EventView, HeartbeatResult, InitResult,
  ItemChange, PlanSource, PlanView, ReadyResult, ResetResult, StartResult, StepStore, StepView, UpdateResult,
} from '../types.ts';

export interface SqliteStoreOptions extends OpenOptions {
  readonly clock?: Clock;
}

/**
 * The SQLite backend of StepStore (plans, steps, claims): every write is one BEGIN IMMEDIATE
 * transaction. The CLI's step commands use it alone; SqliteStore adds the planning layer.
 */
export class SqliteStepStore implements StepStore {
  readonly location: string;
  readonly db: Database;
  private readonly clock: Clock;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.location = path;
    this.db = openDatabase(path, options);
    this.clock = options.clock ?? systemClock;
  }

  /** Runs a write in an IMMEDIATE transaction with the current time, mapping SQLite failures. */
  write<T>(fn: (db: Database, now: Date) => T): Promise<T> {
    return this.guard(() => writeTransaction(this.db, () => fn(this.db, this.clock.now())));
  }

  /** Runs a read in one deferred transaction, so it sees a single consistent snapshot. */
  read<T>(fn: (db: Database, now: Date) => T): Promise<T> {
    return this.guard(() => this.db.transaction(() => fn(this.db, this.clock.now()))());
  }

  private guard<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(mapSqliteError(err, this.location));
    }
  }

  initPlan(source: PlanSource, actor: Actor, options: { force?: boolean; epicId?: string | null } = {}): Promise<InitResult> {
    return this.write((db, now) => initPlan(db, now.toISOString(), source, actor, options.force ?? false, options.epicId ?? null));
  }
  /** The claim and its counts are one transaction. */
  claimNext(source: PlanSource, actor: Actor, options: { leaseSeconds?: number } = {}): Promise<ClaimResult> {
    return this.write((db, now) => claimNext(db, now, source, actor, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS));
  }
  start(planPath: string, anchor: string, actor: Actor): Promise<StartResult> {
    return this.write((db, now) => startStep(db, now, planPath, anchor, actor));
  }
  heartbeat(planPath: string, anchor: string, actor: Actor, options: { leaseSeconds?: number } = {}): Promise<HeartbeatResult> {
    return this.write((db, now) => heartbeat(db, now, planPath, anchor, actor, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS));
  }
  updateItems(source: PlanSource, anchor: string, changes: readonly ItemChange[], actor: Actor, options?: UpdateOptions): Promise<UpdateResult> {
    return this.write((db, now) => updateItems(db, now, source, anchor, changes, actor, options));
  }
  recordArtifact(planPath: string, anchor: string, kind: string, summary: string, actor: Actor): Promise<ArtifactResult> {
    return this.write((db, now) => recordArtifact(db, now, planPath, anchor, kind, summary, actor));
  }
  complete(source: PlanSource, anchor: string, actor: Actor, options: CompleteOptions = {}): Promise<CompleteResult> {
    return this.write((db, now) => completeStep(db, now, source, anchor, actor, options));
  }
  reset(planPath: string, anchor: string, actor: Actor, reason: string | null = null): Promise<ResetResult> {
    return this.write((db, now) => resetStep(db, now, planPath, anchor, actor, reason));
  }
  ready(planPath: string): Promise<ReadyResult> {
    return this.read((db, now) => readySteps(db, now, planPath));
  }
  showPlans(planPath?: string): Promise<PlanView[]> {
    return this.read((db, now) => showPlans(db, now, planPath));
  }
  showStep(planPath: string, anchor: string): Promise<StepView> {
    return this.read((db, now) => showStep(db, now, planPath, anchor));
  }
  events(query?: EventQuery): Promise<EventView[]> {
    return this.read((db) => listEvents(db, query));
  }
  dataVersion(): Promise<number> {
    return this.read((db) => Number(db.pragma('data_version', { simple: true })));
  }
  close(): void {
    if (this.db.open) this.db.close();
  }
}
