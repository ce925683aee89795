import { planHash, type PlanStructure } from '../../plan/hash.ts';
import { eventValues as eventColumnValues, type EventInput, type PlanRow, type StepRow } from '../shared/rows.ts';
import type { Actor } from '../types.ts';
import type { Tx } from './session.ts';
import type { Claim, RowsPort } from '../shared/rows.ts';
import type { PgMethods } from './port.ts';
import { openStepsSql } from './readiness.ts';

export type PgPlanRow = PlanRow;
/** A step row with the hosts of its holder and completer (a holder is host, worktree, agent). */
export type PgStepRow = StepRow & { claimed_host: string | null; completed_host: string | null };

export const PLAN_COLUMNS = `plan_path, epic_id, plan_hash, title, status,
  ${openStepsSql('plan_open.repo_id = plans.repo_id AND plan_open.plan_path = plans.plan_path')} AS open_steps, created_at, updated_at`;
export const STEP_COLUMNS = `plan_path, anchor, parent_anchor, step_index, number, title, status, claimed_by, claimed_agent, claim_token, claimed_at,
  lease_expires_at, heartbeat_at, started_at, completed_at, completed_by, completed_token, commit_hash, complete_reason, blockers, claimed_host, completed_host, files`;

/** The events table's columns, in the order eventValues gives them. */
export const EVENT_INSERT =
  'INSERT INTO events (repo_id, op_id, at, host, worktree, agent, entity, action, plan_path, step_anchor, epic_id, from_status, to_status, reason, data)';

/** An event's values in EVENT_INSERT's order: with this operation's id and, when someone acts, this host. */
function eventParams(tx: Tx, actor: Actor | null, e: EventInput): unknown[] {
  return [tx.repo, tx.op, tx.now, actor ? tx.host : null, ...eventColumnValues(actor, e)];
}

/** Appends one audit event; every state change calls this in its transaction. */
export async function writeEvent(tx: Tx, actor: Actor | null, e: EventInput): Promise<void> {
  await tx.q(
    `${EVENT_INSERT} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
    eventParams(tx, actor, e),
  );
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
 * the values given; undefined when it committed none of that (docs/postgres-design.md, "Failures, retries, idempotence": a write whose
 * reply was lost, handed over to the next process).
 */
export async function opEvent(
  tx: Tx,
  op: string,
  actor: Actor,
  entity: string,
  action: string,
  match: Readonly<Record<string, string | null>>,
): Promise<OpEvent | undefined> {
  const keys = Object.keys(match);
  const more = keys.map((k, i) => ` AND ${k} IS NOT DISTINCT FROM $${i + 8}::text`).join('');
  return (
    await tx.q<OpEvent>(
      `SELECT epic_id, action, from_status, to_status, reason, coalesce(data, '{}'::jsonb) AS data FROM events
    WHERE op_id = $1 AND repo_id = $2 AND entity = $3 AND action = $4 AND host = $5 AND worktree = $6 AND agent IS NOT DISTINCT FROM $7${more}
    ORDER BY id LIMIT 1`,
      [op, tx.repo, entity, action, tx.host, actor.worktree, actor.agent, ...keys.map((k) => match[k])],
    )
  )[0];
}

/** An event's values as SQL literals (Tx.lit), in EVENT_INSERT's order. */
export function eventValues(tx: Tx, actor: Actor | null, e: EventInput): string {
  return eventParams(tx, actor, e)
    .map((v) => tx.lit(v))
    .join(', ');
}

/** The same event as an INSERT with inlined values, for a statement sent with its COMMIT (Tx.finish). */
export function eventInsert(tx: Tx, actor: Actor | null, e: EventInput): string {
  return `${EVENT_INSERT} VALUES (${eventValues(tx, actor, e)})`;
}

export async function findPlan(tx: Tx, planPath: string): Promise<PgPlanRow | undefined> {
  return (
    await tx.q<PgPlanRow>(`SELECT ${PLAN_COLUMNS} FROM plans WHERE repo_id = $1 AND plan_path = $2`, [
      tx.repo,
      planPath,
    ])
  )[0];
}

/** The class (first key) of every plan's advisory lock. */
export const PLAN_LOCK_CLASS = 1397096449;

/** The plan's advisory lock, shared by step operations and exclusive while its structure is rewritten (docs/postgres-design.md, "Concurrency"). */
export async function lockPlan(tx: Tx, planPath: string, exclusive: boolean): Promise<void> {
  await tx.q(
    `SELECT ${exclusive ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared'}(${PLAN_LOCK_CLASS}, hashtext($1 || '/' || $2))`,
    [tx.repo, planPath],
  );
}

async function stepRow(tx: Tx, planPath: string, anchor: string, lock = false): Promise<PgStepRow | undefined> {
  return (
    await tx.q<PgStepRow>(
      `SELECT ${STEP_COLUMNS} FROM steps WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3${lock ? ' FOR UPDATE' : ''}`,
      [tx.repo, planPath, anchor],
    )
  )[0];
}

/**
 * The rows every operation reads, and the event every change writes (shared/rows.ts), scoped to this
 * repository. A step operation locks what it decides on: the plan's advisory lock (shared), then its
 * claim's row and its own FOR UPDATE, in the order claims lock them (docs/postgres-design.md, "Concurrency").
 */
export const rowsPg: PgMethods<RowsPort> = {
  findPlan(planPath) {
    return findPlan(this.tx, planPath);
  },
  findStep(planPath, anchor, lock = false) {
    return stepRow(this.tx, planPath, anchor, lock);
  },
  async findClaim(planPath, anchor, planLocked = false): Promise<Claim | undefined> {
    const tx = this.tx;
    if (!planLocked) await lockPlan(tx, planPath, false);
    const top = (
      await tx.q<PgStepRow>(
        `SELECT ${STEP_COLUMNS} FROM steps WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 AND parent_anchor IS NULL FOR UPDATE`,
        [tx.repo, planPath, anchor],
      )
    )[0];
    if (top) return { step: top, owner: top };
    const found = await stepRow(tx, planPath, anchor);
    if (!found) return undefined;
    const owner = await stepRow(tx, planPath, found.parent_anchor ?? anchor, true);
    const step = await stepRow(tx, planPath, anchor, true);
    return step && owner ? { step, owner } : undefined;
  },
  async currentPlan(source) {
    await lockPlan(this.tx, source.planPath, false);
    const plan = await findPlan(this.tx, source.planPath);
    return plan ? { plan, current: planHash(source.plan()) === plan.plan_hash } : undefined;
  },
  async initialisedStructure(planPath) {
    const text =
      (
        await this.tx.q<{ structure: string }>('SELECT structure FROM plans WHERE repo_id = $1 AND plan_path = $2', [
          this.tx.repo,
          planPath,
        ])
      )[0]?.structure ?? '{}';
    return JSON.parse(text) as PlanStructure;
  },
  lockPlan(planPath, exclusive) {
    return lockPlan(this.tx, planPath, exclusive);
  },
  writeEvent(actor, e) {
    return writeEvent(this.tx, actor, e);
  },
};
