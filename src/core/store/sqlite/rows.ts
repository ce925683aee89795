import { RefusedError, UsageError } from '../../errors.ts';
import { describeDrift, knownPlanHash, planStructure, rememberPlanHash, structureJson, type PlanStructure } from '../../plan/hash.ts';
import type { Database } from './sqlite.ts';
import type { Actor, PlanRecord, StepRecord } from '../types.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { Claim, RowsPort } from '../shared/rows.ts';
import type { SqliteMethods } from './port.ts';

export type PlanRow = PlanRecord;

/** The plans columns callers read; the file's bytes and structure (large for big plans) live in plan_files. */
export const PLAN_COLUMNS = 'plan_path, epic_id, plan_hash, title, status, open_steps, created_at, updated_at';

export type StepRow = StepRecord;

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

/** Appends one audit event; every state change calls this inside its own transaction. */
export function writeEvent(db: Database, at: string, actor: Actor | null, e: EventInput): void {
  db.prepare(
    `INSERT INTO events (at, worktree, agent, entity, action, plan_path, step_anchor, epic_id, from_status, to_status, reason, data)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    at, actor?.worktree ?? null, actor?.agent ?? null, e.entity, e.action, e.planPath ?? null, e.stepAnchor ?? null,
    e.epicId ?? null, e.from ?? null, e.to ?? null, e.reason ?? null, e.data === undefined ? null : JSON.stringify(e.data),
  );
}

export function findPlan(db: Database, planPath: string): PlanRow | undefined {
  return db.prepare(`SELECT ${PLAN_COLUMNS} FROM plans WHERE plan_path = ?`).get(planPath) as PlanRow | undefined;
}

/** The structure recorded when the plan was initialised. */
export function initialisedStructure(db: Database, planPath: string): PlanStructure {
  return JSON.parse(String(db.prepare('SELECT structure FROM plan_files WHERE plan_path = ?').pluck().get(planPath))) as PlanStructure;
}

export function requirePlan(db: Database, planPath: string): PlanRow {
  const row = findPlan(db, planPath);
  if (!row) throw unknownPlan(planPath);
  return row;
}

function unknownPlan(planPath: string): UsageError {
  return new UsageError('unknown_plan', `${planPath}: plan is not initialised (run 'springfield init ${planPath}')`);
}

export function requireStep(db: Database, planPath: string, anchor: string): StepRow {
  requirePlan(db, planPath);
  const row = db.prepare('SELECT * FROM steps WHERE plan_path = ? AND anchor = ?').get(planPath, anchor) as StepRow | undefined;
  if (!row) throw new UsageError('unknown_step', `${planPath}: no step '${anchor}' (see 'springfield show ${planPath}')`);
  return row;
}

/** The row that carries the claim: the parent for a substep, the step itself otherwise. */
export function ownerOf(db: Database, step: StepRow): StepRow {
  return step.parent_anchor ? requireStep(db, step.plan_path, step.parent_anchor) : step;
}

/** Refuses unless `actor` holds the claim on `owner` (and carries its current token, when given). */
export function assertHolder(owner: StepRow, actor: Actor, action: string): void {
  if (owner.status !== 'claimed' && owner.status !== 'in_progress') {
    throw new RefusedError('not_claimed', `cannot ${action} ${owner.anchor}: it is ${owner.status}, not claimed (claim it first)`);
  }
  const agentMismatch = owner.claimed_agent !== null && actor.agent !== null && owner.claimed_agent !== actor.agent;
  if (owner.claimed_by !== actor.worktree || agentMismatch) {
    const holder = owner.claimed_agent ? `${owner.claimed_by} (agent ${owner.claimed_agent})` : `${owner.claimed_by}`;
    const caller = actor.agent ? `${actor.worktree} (agent ${actor.agent})` : actor.worktree;
    throw new RefusedError('not_holder', `cannot ${action} ${owner.anchor}: it is held by ${holder}, not by ${caller}`);
  }
  if (actor.token != null && actor.token > owner.claim_token) {
    throw new UsageError('unknown_token', `cannot ${action} ${owner.anchor}: claim token ${actor.token} is unknown (no claim has been given it; current ${owner.claim_token})`);
  }
  if (actor.token != null && actor.token !== owner.claim_token) {
    throw new RefusedError('stale_token', `cannot ${action} ${owner.anchor}: claim token ${actor.token} is stale (current ${owner.claim_token}); the claim was reset or reclaimed since`);
  }
}

/**
 * The plan's row, refusing an unknown plan or one whose file's structure differs from what was
 * initialised (naming the changes). When the file's bytes are the ones last matched, that is the
 * whole check: no parse (docs/cli-cost.md). Otherwise compares hashes when this parsed plan's is
 * known, else the structure JSON itself in the same query (equal JSON is equal hash), and on a
 * match records the bytes. Runs inside a write transaction.
 */
export function requireCurrentPlan(db: Database, source: PlanSource): PlanRow {
  const bytes = source.bytes === undefined ? undefined : asBuffer(source.bytes);
  if (bytes !== undefined) {
    const seen = db.prepare(`SELECT ${PLAN_COLUMNS}, (SELECT source = ? FROM plan_files f WHERE f.plan_path = plans.plan_path) AS same FROM plans WHERE plan_path = ?`).get(bytes, source.planPath) as (PlanRow & { same: number | null }) | undefined;
    if (seen?.same === 1) {
      const { same: _, ...plan } = seen;
      return plan;
    }
  }
  const plan = requireSameStructure(db, source);
  if (bytes !== undefined) db.prepare('UPDATE plan_files SET source = ? WHERE plan_path = ?').run(bytes, plan.plan_path);
  return plan;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function requireSameStructure(db: Database, source: PlanSource): PlanRow {
  const known = knownPlanHash(source.plan);
  let row: (PlanRow & { same?: number }) | undefined;
  if (known !== undefined) row = findPlan(db, source.planPath);
  else {
    row = db.prepare(`SELECT ${PLAN_COLUMNS}, (SELECT structure = ? FROM plan_files f WHERE f.plan_path = plans.plan_path) AS same FROM plans WHERE plan_path = ?`)
      .get(structureJson(source.plan), source.planPath) as (PlanRow & { same: number }) | undefined;
  }
  if (!row) throw unknownPlan(source.planPath);
  const { same, ...plan } = row;
  if (known !== undefined ? known === plan.plan_hash : same === 1) {
    rememberPlanHash(source.plan, plan.plan_hash);
    return plan;
  }
  throw driftRefusal(db, plan.plan_path, source.plan);
}

/** The refusal for a plan file whose structure is no longer the initialised one: what changed, and the way out. */
export function driftRefusal(db: Database, planPath: string, plan: PlanSource['plan']): RefusedError {
  const changes = describeDrift(initialisedStructure(db, planPath), planStructure(plan));
  const what = changes.length > 0 ? changes.slice(0, 5).join('; ') + (changes.length > 5 ? `; and ${changes.length - 5} more` : '') : 'structure changed';
  return new RefusedError('plan_drift', `${planPath}: plan changed since init (${what}); re-initialise with 'springfield init --force ${planPath}'`);
}

/** The ISO time `seconds` after `now`. */
export function leaseUntil(now: Date, seconds: number): string {
  return new Date(now.getTime() + seconds * 1000).toISOString();
}

function stepRow(db: Database, planPath: string, anchor: string): StepRow | undefined {
  return db.prepare('SELECT * FROM steps WHERE plan_path = ? AND anchor = ?').get(planPath, anchor) as StepRow | undefined;
}

/**
 * The rows every operation reads, and the event every change writes (shared/rows.ts). No locks: the
 * operation runs inside one BEGIN IMMEDIATE transaction, so nothing else writes meanwhile.
 */
export const rowsSql: SqliteMethods<RowsPort> = {
  findPlan(planPath) {
    return findPlan(this.db, planPath);
  },
  findStep(planPath, anchor) {
    return stepRow(this.db, planPath, anchor);
  },
  findClaim(planPath, anchor): Claim | undefined {
    const step = stepRow(this.db, planPath, anchor);
    if (!step) return undefined;
    return { step, owner: step.parent_anchor ? stepRow(this.db, planPath, step.parent_anchor) ?? step : step };
  },
  currentPlan(source) {
    const bytes = source.bytes === undefined ? undefined : asBuffer(source.bytes);
    if (bytes !== undefined) {
      const seen = this.db.prepare(`SELECT ${PLAN_COLUMNS}, (SELECT source = ? FROM plan_files f WHERE f.plan_path = plans.plan_path) AS same FROM plans WHERE plan_path = ?`)
        .get(bytes, source.planPath) as (PlanRow & { same: number | null }) | undefined;
      if (seen?.same === 1) {
        const { same: _, ...plan } = seen;
        return { plan, current: true };
      }
    }
    const found = sameStructure(this.db, source);
    if (found?.current && bytes !== undefined) this.db.prepare('UPDATE plan_files SET source = ? WHERE plan_path = ?').run(bytes, found.plan.plan_path);
    return found;
  },
  initialisedStructure(planPath) {
    return initialisedStructure(this.db, planPath);
  },
  lockPlan() {
    // Every write is BEGIN IMMEDIATE: no other writer runs meanwhile.
  },
  writeEvent(actor, e) {
    writeEvent(this.db, this.now, actor, e);
  },
};

/**
 * Whether the parsed plan has the initialised structure: compares hashes when this parsed plan's is
 * known, else the structure JSON itself in the same query (equal JSON is equal hash).
 */
function sameStructure(db: Database, source: PlanSource): { plan: PlanRow; current: boolean } | undefined {
  const known = knownPlanHash(source.plan);
  let row: (PlanRow & { same?: number }) | undefined;
  if (known !== undefined) row = findPlan(db, source.planPath);
  else {
    row = db.prepare(`SELECT ${PLAN_COLUMNS}, (SELECT structure = ? FROM plan_files f WHERE f.plan_path = plans.plan_path) AS same FROM plans WHERE plan_path = ?`)
      .get(structureJson(source.plan), source.planPath) as (PlanRow & { same: number }) | undefined;
  }
  if (!row) return undefined;
  const { same, ...plan } = row;
  const current = known !== undefined ? known === plan.plan_hash : same === 1;
  if (current) rememberPlanHash(source.plan, plan.plan_hash);
  return { plan, current };
}
