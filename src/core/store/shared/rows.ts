/**
 * The rows every operation reads (plans, steps), the audit event every change writes, and the rules
 * about who holds a claim: once for both backends. The port below is what each backend answers them with.
 */
import { iso } from '../../clock.ts';
import { describeDrift, planStructure, type PlanStructure } from '../../plan/hash.ts';
import type { Plan, PlanSource } from '../../plan/types.ts';
import type { RefusedError } from '../../errors.ts';
import type { Actor, PlanRecord, StepRecord } from '../types.ts';
import { call, type Io, type Op } from './op.ts';
import * as refuse from './refusals.ts';

export type PlanRow = PlanRecord;

/**
 * A step as the store keeps it. On PostgreSQL a holder is a host, a worktree and an agent: the row also
 * names the host of its holder and of its completer (docs/postgres-design.md, "Who and what: repository, holder, plan"); SQLite's rows have no
 * such columns (one machine).
 */
export type StepRow = StepRecord & {
  claimed_host?: string | null;
  completed_host?: string | null;
  files?: string | null;
};

/** One audit event; every state change writes one inside its own transaction. */
export interface EventInput {
  readonly entity: string;
  readonly action: string;
  readonly planPath?: string | null;
  readonly stepAnchor?: string | null;
  readonly epicId?: string | null;
  readonly from?: string | null;
  readonly to?: string | null;
  readonly reason?: string | null;
  readonly data?: unknown;
}

/**
 * An event's own column values, both backends' order after their own leading columns: worktree,
 * agent, entity, action, plan_path, step_anchor, epic_id, from_status, to_status, reason, data (JSON).
 */
export function eventValues(actor: Actor | null, e: EventInput): unknown[] {
  return [
    actor?.worktree ?? null,
    actor?.agent ?? null,
    e.entity,
    e.action,
    e.planPath ?? null,
    e.stepAnchor ?? null,
    e.epicId ?? null,
    e.from ?? null,
    e.to ?? null,
    e.reason ?? null,
    e.data === undefined ? null : JSON.stringify(e.data),
  ];
}

/** A step and the row that carries its claim: its parent for a substep, the step itself otherwise. */
export interface Claim {
  readonly step: StepRow;
  readonly owner: StepRow;
}

/** What every operation asks of its backend: the transaction's time and host, the plan and step rows, events. */
export interface RowsPort {
  /** The operation's time, ISO-8601 UTC with milliseconds (the server's on PostgreSQL, or the test clock's). */
  readonly now: string;
  /** The host this store names holders by (PostgreSQL), or null where the store serves one machine (SQLite). */
  readonly host: string | null;
  findPlan(planPath: string): Io<PlanRow | undefined>;
  /** The step's row; with `lock`, PostgreSQL locks it FOR UPDATE. */
  findStep(planPath: string, anchor: string, lock?: boolean): Io<StepRow | undefined>;
  /**
   * The step and its claim's row, undefined when there is no such step. PostgreSQL takes the plan's
   * shared lock (unless `planLocked`: the caller holds it) and locks both rows FOR UPDATE, the claim's first.
   */
  findClaim(planPath: string, anchor: string, planLocked?: boolean): Io<Claim | undefined>;
  /**
   * The plan's row when `source` has the structure initialised (`current`), or with `current` false when it
   * drifted; undefined for an unknown plan. PostgreSQL takes the plan's shared lock; SQLite compares the
   * file's bytes first and records them on a match (docs/cli-cost.md).
   */
  currentPlan(source: PlanSource): Io<{ plan: PlanRow; current: boolean } | undefined>;
  /** The structure recorded when the plan was initialised. */
  initialisedStructure(planPath: string): Io<PlanStructure>;
  /** The plan's advisory lock on PostgreSQL: shared by step operations, exclusive while its structure is rewritten. SQLite: nothing (its writes are serial). */
  lockPlan(planPath: string, exclusive: boolean): Io<void>;
  writeEvent(actor: Actor | null, e: EventInput): Io<void>;
}

export function* requirePlan(port: RowsPort, planPath: string): Op<PlanRow> {
  const row = yield* call(port.findPlan(planPath));
  if (!row) throw refuse.unknownPlan(planPath);
  return row;
}

/** An unknown step is refused, naming the plan when that is what is missing. */
export function* unknownStep(port: RowsPort, planPath: string, anchor: string): Op<never> {
  yield* requirePlan(port, planPath);
  throw refuse.unknownStep(planPath, anchor);
}

export function* requireStep(port: RowsPort, planPath: string, anchor: string): Op<StepRow> {
  return (yield* call(port.findStep(planPath, anchor))) ?? (yield* unknownStep(port, planPath, anchor));
}

/** The step and the row that carries its claim (locked where the backend locks); an unknown plan or step is refused. */
export function* requireClaim(port: RowsPort, planPath: string, anchor: string, planLocked = false): Op<Claim> {
  return (yield* call(port.findClaim(planPath, anchor, planLocked))) ?? (yield* unknownStep(port, planPath, anchor));
}

/**
 * The plan's row, refusing an unknown plan or one whose file's structure differs from what was
 * initialised (naming the changes). Runs inside a write.
 */
export function* requireCurrentPlan(port: RowsPort, source: PlanSource): Op<PlanRow> {
  const found = yield* call(port.currentPlan(source));
  if (!found) throw refuse.unknownPlan(source.planPath);
  if (found.current) return found.plan;
  throw yield* driftRefusal(port, found.plan.plan_path, source.plan());
}

/** The refusal for a plan file whose structure is no longer the initialised one: what changed, and the way out. */
export function* driftRefusal(port: RowsPort, planPath: string, plan: Plan): Op<RefusedError> {
  return refuse.planChanged(
    planPath,
    describeDrift(yield* call(port.initialisedStructure(planPath)), planStructure(plan)),
  );
}

/** A holder as messages name it: `host:path (agent id)`, the host left out when it is the caller's (or there is none). */
export function holderName(
  host: string | null,
  worktree: string | null,
  agent: string | null,
  myHost: string | null,
): string {
  const where = host !== null && host !== myHost ? `${host}:${worktree ?? ''}` : `${worktree ?? ''}`;
  return agent ? `${where} (agent ${agent})` : where;
}

/** Refuses unless `actor` (on `host`) holds the claim on `owner`, carrying its current token when it gives one. */
export function assertHolder(host: string | null, owner: StepRow, actor: Actor, action: string): void {
  if (owner.status !== 'claimed' && owner.status !== 'in_progress')
    throw refuse.notClaimed(action, owner.anchor, owner.status);
  const holderHost = owner.claimed_host ?? null;
  const agentMismatch = owner.claimed_agent !== null && actor.agent !== null && owner.claimed_agent !== actor.agent;
  if (owner.claimed_by !== actor.worktree || holderHost !== host || agentMismatch) {
    const holder = holderName(holderHost, owner.claimed_by, owner.claimed_agent, host);
    const caller = holderName(host, actor.worktree, actor.agent, holderHost ?? host);
    throw refuse.notHolder(action, owner.anchor, holder, caller);
  }
  if (actor.token != null && actor.token > owner.claim_token)
    throw refuse.unknownToken(action, owner.anchor, actor.token, owner.claim_token);
  if (actor.token != null && actor.token !== owner.claim_token)
    throw refuse.staleToken(action, owner.anchor, actor.token, owner.claim_token);
}

/** The step as the Store interface returns it: the same shape on every backend (no hosts). */
export function stepRecord(row: StepRow): StepRecord {
  const { claimed_host: _h, completed_host: _c, files: _f, ...record } = row;
  return record;
}

/** The ISO time `seconds` after `now` (ISO). */
export function leaseUntil(now: string, seconds: number): string {
  return iso(new Date(Date.parse(now) + seconds * 1000));
}
