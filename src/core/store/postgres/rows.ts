import { RefusedError, UsageError } from '../../errors.ts';
import { describeDrift, planHash, planStructure, type PlanStructure } from '../../plan/hash.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { EventInput } from '../sqlite/rows.ts';
import type { Actor, PlanRecord, StepRecord } from '../types.ts';
import type { Tx } from './session.ts';
import { openStepsSql } from './readiness.ts';

export type PgPlanRow = PlanRecord;
/** A step row with the hosts of its holder and completer (a holder is host, worktree, agent). */
export type PgStepRow = StepRecord & { claimed_host: string | null; completed_host: string | null };

export const PLAN_COLUMNS = `plan_path, epic_id, plan_hash, title, status,
  ${openStepsSql('plan_open.repo_id = plans.repo_id AND plan_open.plan_path = plans.plan_path')} AS open_steps, created_at, updated_at`;
export const STEP_COLUMNS = `plan_path, anchor, parent_anchor, step_index, number, title, status, claimed_by, claimed_agent, claim_token, claimed_at,
  lease_expires_at, heartbeat_at, started_at, completed_at, completed_by, completed_token, commit_hash, complete_reason, blockers, claimed_host, completed_host`;

/** The step as the Store interface returns it (the same shape on every backend). */
export function stepRecord(row: PgStepRow): StepRecord {
  const { claimed_host: _h, completed_host: _c, ...record } = row;
  return record;
}

/** Appends one audit event with this operation's id and host; every state change calls this in its transaction. */
export async function writeEvent(tx: Tx, actor: Actor | null, e: EventInput): Promise<void> {
  await tx.q(`INSERT INTO events (repo_id, op_id, at, host, worktree, agent, entity, action, plan_path, step_anchor, epic_id, from_status, to_status, reason, data)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`, [
    tx.repo, tx.op, tx.now, actor ? tx.host : null, actor?.worktree ?? null, actor?.agent ?? null, e.entity, e.action, e.planPath ?? null, e.stepAnchor ?? null,
    e.epicId ?? null, e.from ?? null, e.to ?? null, e.reason ?? null, e.data === undefined ? null : JSON.stringify(e.data),
  ]);
}

/** An event as opEvent reads it. */
export interface OpEvent {
  readonly epic_id: string | null;
  readonly action: string;
  readonly from_status: string | null;
  readonly to_status: string | null;
  readonly reason: string | null;
  readonly data: Record<string, unknown>;
}

/**
 * The event of `entity` and `action` that operation `op` wrote in this repository for this holder (host,
 * worktree, agent), whose columns or expressions in `match` (the callers' own text, never input) equal
 * the values given; undefined when it committed none of that (docs/postgres.md, "Failures, retries, idempotence": a write whose
 * reply was lost, handed over to the next process).
 */
export async function opEvent(tx: Tx, op: string, actor: Actor, entity: string, action: string, match: Readonly<Record<string, string | null>>): Promise<OpEvent | undefined> {
  const keys = Object.keys(match);
  const more = keys.map((k, i) => ` AND ${k} IS NOT DISTINCT FROM $${i + 8}::text`).join('');
  return (await tx.q<OpEvent>(`SELECT epic_id, action, from_status, to_status, reason, coalesce(data, '{}'::jsonb) AS data FROM events
    WHERE op_id = $1 AND repo_id = $2 AND entity = $3 AND action = $4 AND host = $5 AND worktree = $6 AND agent IS NOT DISTINCT FROM $7${more}
    ORDER BY id LIMIT 1`, [op, tx.repo, entity, action, tx.host, actor.worktree, actor.agent, ...keys.map((k) => match[k])]))[0];
}

/** The same event as an INSERT with inlined values, for a statement sent with its COMMIT (Tx.finish). */
export function eventInsert(tx: Tx, actor: Actor | null, e: EventInput): string {
  const values = [
    tx.repo, tx.op, tx.now, actor ? tx.host : null, actor?.worktree ?? null, actor?.agent ?? null, e.entity, e.action, e.planPath ?? null, e.stepAnchor ?? null,
    e.epicId ?? null, e.from ?? null, e.to ?? null, e.reason ?? null, e.data === undefined ? null : JSON.stringify(e.data),
  ].map((v) => tx.lit(v));
  return `INSERT INTO events (repo_id, op_id, at, host, worktree, agent, entity, action, plan_path, step_anchor, epic_id, from_status, to_status, reason, data)
    VALUES (${values.join(', ')})`;
}

export async function findPlan(tx: Tx, planPath: string): Promise<PgPlanRow | undefined> {
  return (await tx.q<PgPlanRow>(`SELECT ${PLAN_COLUMNS} FROM plans WHERE repo_id = $1 AND plan_path = $2`, [tx.repo, planPath]))[0];
}

export async function requirePlan(tx: Tx, planPath: string): Promise<PgPlanRow> {
  const row = await findPlan(tx, planPath);
  if (!row) throw unknownPlan(planPath);
  return row;
}

function unknownPlan(planPath: string): UsageError {
  return new UsageError('unknown_plan', `${planPath}: plan is not initialised (run 'springfield init ${planPath}')`);
}

/** The step row, locked FOR UPDATE in a write (every decision that follows is made under that lock). */
export async function requireStep(tx: Tx, planPath: string, anchor: string, lock = false): Promise<PgStepRow> {
  const row = (await tx.q<PgStepRow>(`SELECT ${STEP_COLUMNS} FROM steps WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3${lock ? ' FOR UPDATE' : ''}`,
    [tx.repo, planPath, anchor]))[0];
  if (row) return row;
  await requirePlan(tx, planPath);
  throw new UsageError('unknown_step', `${planPath}: no step '${anchor}' (see 'springfield show ${planPath}')`);
}

/**
 * The step and the row that carries its claim, both locked FOR UPDATE, the claim's owner first (the
 * order claims lock them in). A top-level step is one locked read; a substep locks its parent first.
 * `planLocked`: the caller already holds the plan's lock (requireCurrentPlan).
 */
export async function lockOwner(tx: Tx, planPath: string, anchor: string, planLocked = false): Promise<{ step: PgStepRow; owner: PgStepRow }> {
  if (!planLocked) await lockPlan(tx, planPath, false);
  const top = (await tx.q<PgStepRow>(`SELECT ${STEP_COLUMNS} FROM steps WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 AND parent_anchor IS NULL FOR UPDATE`,
    [tx.repo, planPath, anchor]))[0];
  if (top) return { step: top, owner: top };
  const found = await requireStep(tx, planPath, anchor);
  const owner = await requireStep(tx, planPath, found.parent_anchor ?? anchor, true);
  return { step: await requireStep(tx, planPath, anchor, true), owner };
}

/** A holder as messages name it: `host:path (agent id)`, the host left out when it is the caller's. */
export function holderName(host: string | null, worktree: string | null, agent: string | null, myHost: string): string {
  const where = host !== null && host !== myHost ? `${host}:${worktree ?? ''}` : `${worktree ?? ''}`;
  return agent ? `${where} (agent ${agent})` : where;
}

/** Refuses unless `actor` on this host holds the claim on `owner` (and carries its current token, when given). */
export function assertHolder(tx: Tx, owner: PgStepRow, actor: Actor, action: string): void {
  if (owner.status !== 'claimed' && owner.status !== 'in_progress') {
    throw new RefusedError('not_claimed', `cannot ${action} ${owner.anchor}: it is ${owner.status}, not claimed (claim it first)`);
  }
  const agentMismatch = owner.claimed_agent !== null && actor.agent !== null && owner.claimed_agent !== actor.agent;
  if (owner.claimed_by !== actor.worktree || owner.claimed_host !== tx.host || agentMismatch) {
    const holder = holderName(owner.claimed_host, owner.claimed_by, owner.claimed_agent, tx.host);
    const caller = holderName(tx.host, actor.worktree, actor.agent, owner.claimed_host ?? tx.host);
    throw new RefusedError('not_holder', `cannot ${action} ${owner.anchor}: it is held by ${holder}, not by ${caller}`);
  }
  if (actor.token != null && actor.token > owner.claim_token) {
    throw new UsageError('unknown_token', `cannot ${action} ${owner.anchor}: claim token ${actor.token} is unknown (no claim has been given it; current ${owner.claim_token})`);
  }
  if (actor.token != null && actor.token !== owner.claim_token) {
    throw new RefusedError('stale_token', `cannot ${action} ${owner.anchor}: claim token ${actor.token} is stale (current ${owner.claim_token}); the claim was reset or reclaimed since`);
  }
}

/** The class (first key) of every plan's advisory lock. */
export const PLAN_LOCK_CLASS = 1397096449;

/** The plan's advisory lock, shared by step operations and exclusive while its structure is rewritten (docs/postgres.md, "Concurrency"). */
export async function lockPlan(tx: Tx, planPath: string, exclusive: boolean): Promise<void> {
  await tx.q(`SELECT ${exclusive ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared'}(${PLAN_LOCK_CLASS}, hashtext($1 || '/' || $2))`, [tx.repo, planPath]);
}

/** The plan's row, refusing an unknown plan or one whose file's structure differs from what was initialised. */
export async function requireCurrentPlan(tx: Tx, source: PlanSource): Promise<PgPlanRow> {
  await lockPlan(tx, source.planPath, false);
  const plan = await findPlan(tx, source.planPath);
  if (!plan) throw unknownPlan(source.planPath);
  if (planHash(source.plan) === plan.plan_hash) return plan;
  throw await driftRefusal(tx, plan.plan_path, source.plan);
}

/** The refusal for a plan file whose structure is no longer the initialised one: what changed, and the way out. */
export async function driftRefusal(tx: Tx, planPath: string, plan: PlanSource['plan']): Promise<RefusedError> {
  const text = (await tx.q<{ structure: string }>('SELECT structure FROM plans WHERE repo_id = $1 AND plan_path = $2', [tx.repo, planPath]))[0]?.structure ?? '{}';
  const changes = describeDrift(JSON.parse(text) as PlanStructure, planStructure(plan));
  const what = changes.length > 0 ? changes.slice(0, 5).join('; ') + (changes.length > 5 ? `; and ${changes.length - 5} more` : '') : 'structure changed';
  return new RefusedError('plan_drift', `${planPath}: plan changed since init (${what}); re-initialise with 'springfield init --force ${planPath}'`);
}

/** The ISO time `seconds` after `now`. */
export function leaseUntil(now: string, seconds: number): string {
  return new Date(new Date(now).getTime() + seconds * 1000).toISOString();
}
