// The transactions bench/postgresRaw.ts compares, written against a minimal driver interface:
// - `statements`: claim and complete as the SQLite store runs them, one statement per read or
//   write (8 round trips each), the straightforward port;
// - `single`: one data-modifying statement (CTE) per operation, committed on its own (1 round trip),
//   refusals classified from what the statement returns — the shape docs/postgres-design.md settles on;
// - `derived`: the same without the plans.open_steps counter (every completion of a plan's steps
//   updates that one row): open steps are counted, and a completion marks the plan done in a second
//   statement after its commit, guarded so exactly one completer does;
// - `raw`: BEGIN; UPDATE … RETURNING; COMMIT on a row nobody else touches.
// All run READ COMMITTED with row locks, take the plan's advisory lock shared, and log an event with
// the client's operation id; lease times come from the server's now().
import { randomUUID } from 'node:crypto';
import { PLAN_LOCK_CLASS, PLAN_PATH, REPO_ID } from './postgresSchema.ts';

/** What a shape needs from a driver: named (prepared once per connection) statements, and plain text. */
export interface Sql {
  query<R>(name: string, text: string, values: readonly unknown[]): Promise<{ rows: R[]; rowCount: number }>;
  /** Text without parameters, possibly several statements, in one round trip: the last result's rows. */
  simple<R>(text: string): Promise<R[]>;
}

export interface Holder {
  readonly host: string;
  readonly worktree: string;
  readonly agent: string;
}

export interface Claimed {
  readonly anchor: string;
  readonly token: string;
}

const PLAN = 'repo_id = $1 AND plan_path = $2';
/** Step operations hold the plan's advisory lock shared: no row is written for it, and `init --force` takes it exclusively. */
const PLAN_LOCK = `pg_advisory_xact_lock_shared(${PLAN_LOCK_CLASS}, hashtext($1 || '/' || $2))`;
const HASH = 'bench-hash';
const RETRYABLE = new Set(['40001', '40P01']);

/** The outcome of one transaction, and how often it ran again after a deadlock or serialization failure. */
export interface Outcome<T> {
  readonly result: T;
  readonly retries: number;
}

/**
 * Runs `first` (BEGIN, perhaps with a query riding along in the same round trip), then `body` with
 * its rows, then COMMIT — or, with `first` null, `body`'s one statement committed on its own. Rolls
 * back on any error and runs it all again on a deadlock or serialization failure (nothing of the
 * failed attempt was committed).
 */
export async function transaction<T>(
  sql: Sql,
  first: string | null,
  body: (head: Record<string, unknown>[]) => Promise<T>,
): Promise<Outcome<T>> {
  for (let attempt = 0; ; attempt++) {
    try {
      const head = first === null ? [] : await sql.simple<Record<string, unknown>>(first);
      const result = await body(head);
      if (first !== null) await sql.simple('COMMIT');
      return { result, retries: attempt };
    } catch (err) {
      if (first !== null) await sql.simple('ROLLBACK').catch(() => undefined);
      if (attempt < 5 && RETRYABLE.has((err as { code?: string }).code ?? '')) continue;
      throw err;
    }
  }
}

/** BEGIN and the server's clock in one round trip. */
const BEGIN_WITH_CLOCK = 'BEGIN; SELECT now() AS now';
const CANDIDATE = 'anchor, step_index, claim_token, status, claimed_by, lease_expires_at';

/** The straightforward port of claimNext: drift check, two candidate seeks, guarded UPDATE, event, counts. */
export function claimStatements(sql: Sql, who: Holder, leaseSeconds: number): Promise<Outcome<Claimed>> {
  return transaction(sql, BEGIN_WITH_CLOCK, async (head) => {
    const now = head[0]?.now as Date;
    const plan = await sql.query<{ plan_hash: string }>(
      'c1',
      `SELECT plan_hash FROM plans, ${PLAN_LOCK} WHERE ${PLAN}`,
      [REPO_ID, PLAN_PATH],
    );
    if (plan.rows[0]?.plan_hash !== HASH) throw new Error('plan drift');
    type Cand = { anchor: string; step_index: number; claim_token: string; status: string };
    const ready = await sql.query<Cand>(
      'c2',
      `SELECT ${CANDIDATE} FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0
      ORDER BY step_index LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [REPO_ID, PLAN_PATH],
    );
    const expired = await sql.query<Cand>(
      'c3',
      `SELECT ${CANDIDATE} FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress')
      AND lease_expires_at < $3 AND blockers = 0 ORDER BY step_index LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [REPO_ID, PLAN_PATH, now],
    );
    const cand = [...ready.rows, ...expired.rows].sort((a, b) => a.step_index - b.step_index)[0];
    if (!cand) throw new Error('nothing to claim');
    const until = new Date(now.getTime() + leaseSeconds * 1000);
    const changed = await sql.query<{ claim_token: string }>(
      'c4',
      `UPDATE steps SET status = 'claimed', claimed_host = $4, claimed_by = $5, claimed_agent = $6,
        claim_token = claim_token + 1, claimed_at = $7, lease_expires_at = $8, heartbeat_at = NULL, started_at = NULL
      WHERE ${PLAN} AND anchor = $3 AND claim_token = $9 RETURNING claim_token`,
      [REPO_ID, PLAN_PATH, cand.anchor, who.host, who.worktree, who.agent, now, until, cand.claim_token],
    );
    if (changed.rowCount !== 1) throw new Error(`${cand.anchor} changed while being claimed`);
    const token = changed.rows[0]?.claim_token ?? '';
    await sql.query(
      'c5',
      `INSERT INTO events (repo_id, op_id, at, host, worktree, agent, entity, action, plan_path, step_anchor, from_status, to_status, data)
      VALUES ($1, $11, $2, $3, $4, $5, 'step', $6, $7, $8, $9, 'claimed', $10)`,
      [
        REPO_ID,
        now,
        who.host,
        who.worktree,
        who.agent,
        cand.status === 'pending' ? 'claim' : 'reclaim',
        PLAN_PATH,
        cand.anchor,
        cand.status,
        { claim_token: Number(token), lease_expires_at: until.toISOString() },
        randomUUID(),
      ],
    );
    await sql.query(
      'c6',
      `SELECT (SELECT count(*) FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0)
        + (SELECT count(*) FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress') AND lease_expires_at < $3 AND blockers = 0) AS ready,
      (SELECT open_steps FROM plans WHERE ${PLAN}) AS remaining`,
      [REPO_ID, PLAN_PATH, now],
    );
    return { anchor: cand.anchor, token };
  });
}

/** The straightforward port of completeStep: drift check, the step locked, strictness, guarded UPDATE (triggers), event, remaining. */
export function completeStatements(sql: Sql, who: Holder, step: Claimed): Promise<Outcome<void>> {
  return transaction(sql, BEGIN_WITH_CLOCK, async (head) => {
    const now = head[0]?.now as Date;
    const plan = await sql.query<{ plan_hash: string }>(
      'c1',
      `SELECT plan_hash FROM plans, ${PLAN_LOCK} WHERE ${PLAN}`,
      [REPO_ID, PLAN_PATH],
    );
    if (plan.rows[0]?.plan_hash !== HASH) throw new Error('plan drift');
    const row = (
      await sql.query<{ claimed_by: string; claim_token: string }>(
        'd1',
        `SELECT status, claimed_by, claim_token FROM steps WHERE ${PLAN} AND anchor = $3 FOR UPDATE`,
        [REPO_ID, PLAN_PATH, step.anchor],
      )
    ).rows[0];
    if (!row || row.claimed_by !== who.worktree || row.claim_token !== step.token)
      throw new Error(`not the holder of ${step.anchor}`);
    const open = await sql.query(
      'd2',
      `SELECT 'item' AS what, kind || ' ' || ordinal AS which FROM checklist_items WHERE ${PLAN} AND step_anchor = $3 AND status <> 'completed'
      UNION ALL SELECT 'substep', anchor FROM steps WHERE ${PLAN} AND parent_anchor = $3 AND status <> 'completed'`,
      [REPO_ID, PLAN_PATH, step.anchor],
    );
    if (open.rowCount !== 0) throw new Error('incomplete');
    const changed = await sql.query(
      'd3',
      `UPDATE steps SET status = 'completed', completed_at = $4, completed_host = $5, completed_by = $6, completed_token = $7, lease_expires_at = NULL
      WHERE ${PLAN} AND anchor = $3 AND status IN ('claimed', 'in_progress') AND claimed_by = $6 AND claim_token = $7`,
      [REPO_ID, PLAN_PATH, step.anchor, now, who.host, who.worktree, step.token],
    );
    if (changed.rowCount !== 1) throw new Error(`cannot complete ${step.anchor}: the claim changed`);
    await sql.query(
      'd4',
      `INSERT INTO events (repo_id, op_id, at, host, worktree, agent, entity, action, plan_path, step_anchor, from_status, to_status, data)
      VALUES ($1, $9, $2, $3, $4, $5, 'step', 'complete', $6, $7, 'claimed', 'completed', $8)`,
      [
        REPO_ID,
        now,
        who.host,
        who.worktree,
        who.agent,
        PLAN_PATH,
        step.anchor,
        { claim_token: Number(step.token), forced: false },
        randomUUID(),
      ],
    );
    await sql.query('d5', `SELECT open_steps FROM plans WHERE ${PLAN}`, [REPO_ID, PLAN_PATH]);
  });
}

/** Open top-level steps: the trigger-kept counter, or a count over steps_open. */
function openSteps(counter: boolean): string {
  return counter
    ? `(SELECT open_steps FROM plans WHERE ${PLAN})`
    : `(SELECT count(*) FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status <> 'completed')`;
}

const claimOne = (counter: boolean): string => `WITH plan AS (SELECT plan_hash FROM plans, ${PLAN_LOCK} WHERE ${PLAN}),
  current AS (SELECT 1 FROM plan WHERE plan_hash = $3),
  ready AS (SELECT ${CANDIDATE} FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0
    AND EXISTS (SELECT 1 FROM current) ORDER BY step_index LIMIT 1 FOR UPDATE SKIP LOCKED),
  expired AS (SELECT ${CANDIDATE} FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress')
    AND lease_expires_at < now() AND blockers = 0 AND EXISTS (SELECT 1 FROM current) ORDER BY step_index LIMIT 1 FOR UPDATE SKIP LOCKED),
  candidate AS (SELECT * FROM ready UNION ALL SELECT * FROM expired ORDER BY step_index LIMIT 1),
  claimed AS (UPDATE steps s SET status = 'claimed', claimed_host = $4, claimed_by = $5, claimed_agent = $6, claim_token = s.claim_token + 1,
      claimed_at = now(), lease_expires_at = now() + make_interval(secs => $7), heartbeat_at = NULL, started_at = NULL
    FROM candidate c WHERE s.repo_id = $1 AND s.plan_path = $2 AND s.anchor = c.anchor AND s.claim_token = c.claim_token
    RETURNING s.anchor, s.title, s.step_index, s.claim_token, s.lease_expires_at, c.status AS from_status, c.claimed_by AS previous_holder, c.lease_expires_at AS previous_lease),
  substeps AS (UPDATE steps s SET status = 'claimed', claimed_host = $4, claimed_by = $5, claimed_agent = $6, claim_token = c.claim_token,
      claimed_at = now(), lease_expires_at = c.lease_expires_at, heartbeat_at = NULL, started_at = NULL
    FROM claimed c WHERE s.repo_id = $1 AND s.plan_path = $2 AND s.parent_anchor = c.anchor AND s.status <> 'completed'
    RETURNING s.anchor, s.step_index),
  reopened AS (UPDATE checklist_items i SET status = 'open', updated_at = now(), updated_by = NULL FROM claimed c
    WHERE c.from_status <> 'pending' AND i.repo_id = $1 AND i.plan_path = $2 AND i.status = 'in_progress'
      AND (i.step_anchor = c.anchor OR i.step_anchor IN (SELECT anchor FROM substeps)) RETURNING i.id),
  event AS (INSERT INTO events (repo_id, op_id, at, host, worktree, agent, entity, action, plan_path, step_anchor, from_status, to_status, reason, data)
    SELECT $1, $8, now(), $4, $5, $6, 'step', CASE WHEN from_status = 'pending' THEN 'claim' ELSE 'reclaim' END, $2, anchor, from_status, 'claimed',
      CASE WHEN from_status = 'pending' THEN NULL ELSE 'lease of ' || previous_holder || ' expired at ' || previous_lease END,
      jsonb_build_object('claim_token', claim_token, 'lease_expires_at', lease_expires_at, 'substeps', (SELECT coalesce(jsonb_agg(anchor ORDER BY step_index), '[]') FROM substeps))
    FROM claimed RETURNING id)
SELECT (SELECT plan_hash FROM plan) AS plan_hash, c.anchor, c.title, c.step_index, c.claim_token, c.lease_expires_at, c.from_status, c.previous_holder,
  (SELECT count(*) FROM reopened) AS items_reopened, (SELECT id FROM event) AS event_id,
  (SELECT count(*) FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0) AS ready_before,
  ${openSteps(counter)} AS total_remaining
FROM (VALUES (1)) AS one LEFT JOIN claimed c ON true`;

/** claimNext as one statement: nothing claimed and the plan's hash differs → drift; nothing claimed otherwise → nothing ready. */
export function claimSingle(sql: Sql, who: Holder, leaseSeconds: number, counter = true): Promise<Outcome<Claimed>> {
  return transaction(sql, null, async () => {
    const row = (
      await sql.query<{ plan_hash: string | null; anchor: string | null; claim_token: string }>(
        `claim${counter ? '' : '_derived'}`,
        claimOne(counter),
        [REPO_ID, PLAN_PATH, HASH, who.host, who.worktree, who.agent, leaseSeconds, randomUUID()],
      )
    ).rows[0];
    if (row?.plan_hash !== HASH) throw new Error('plan drift');
    if (!row.anchor) throw new Error('nothing to claim');
    return { anchor: row.anchor, token: row.claim_token };
  });
}

const COMPLETE_ONE = `WITH plan AS (SELECT plan_hash FROM plans, ${PLAN_LOCK} WHERE ${PLAN}),
  step AS (SELECT anchor, parent_anchor, status, claimed_host, claimed_by, claimed_agent, claim_token, completed_by, completed_token
    FROM steps WHERE ${PLAN} AND anchor = $3 FOR UPDATE),
  open_substeps AS (SELECT anchor FROM steps WHERE ${PLAN} AND parent_anchor = $3 AND status <> 'completed'),
  open_items AS (SELECT kind, ordinal, text FROM checklist_items WHERE ${PLAN} AND status <> 'completed'
    AND (step_anchor = $3 OR step_anchor IN (SELECT anchor FROM open_substeps)) ORDER BY kind, ordinal LIMIT 4),
  done AS (UPDATE steps SET status = 'completed', completed_at = now(), completed_host = $4, completed_by = $5, completed_token = claim_token,
      commit_hash = $8, complete_reason = $9, lease_expires_at = NULL
    WHERE ${PLAN} AND anchor = $3 AND status IN ('claimed', 'in_progress') AND claimed_host = $4 AND claimed_by = $5 AND claim_token = $6
      AND EXISTS (SELECT 1 FROM step) AND EXISTS (SELECT 1 FROM plan WHERE plan_hash = $7)
      AND ($9::text IS NOT NULL OR NOT EXISTS (SELECT 1 FROM open_substeps) AND NOT EXISTS (SELECT 1 FROM open_items))
    RETURNING anchor, parent_anchor),
  event AS (INSERT INTO events (repo_id, op_id, at, host, worktree, agent, entity, action, plan_path, step_anchor, from_status, to_status, reason, data)
    SELECT $1, $11, now(), $4, $5, $10, 'step', 'complete', $2, d.anchor, (SELECT status FROM step), 'completed', $9,
      jsonb_build_object('claim_token', $6::bigint, 'commit_hash', $8::text, 'forced', $9::text IS NOT NULL) FROM done d RETURNING id)
SELECT (SELECT plan_hash FROM plan) AS plan_hash, (SELECT row_to_json(step) FROM step) AS step, (SELECT anchor FROM done) AS completed,
  (SELECT parent_anchor IS NULL FROM done) AS top_level, (SELECT json_agg(open_items) FROM open_items) AS open_items,
  (SELECT json_agg(anchor) FROM open_substeps) AS open_substeps, (SELECT id FROM event) AS event_id`;

/**
 * completeStep as one statement; when nothing was completed, the returned step, items and plan say
 * why. The readiness trigger updates dependents and the plan's open count, and marks the plan done.
 */
export function completeSingle(sql: Sql, who: Holder, step: Claimed, counter = true): Promise<Outcome<void>> {
  return transaction(sql, null, async () => {
    const op = randomUUID();
    const row = (
      await sql.query<{ plan_hash: string | null; completed: string | null; top_level: boolean | null }>(
        'complete',
        COMPLETE_ONE,
        [REPO_ID, PLAN_PATH, step.anchor, who.host, who.worktree, step.token, HASH, null, null, who.agent, op],
      )
    ).rows[0];
    if (row?.plan_hash !== HASH) throw new Error('plan drift');
    if (!row.completed) throw new Error(`cannot complete ${step.anchor}: not the holder, stale token or open items`);
    // Every completion committed before this statement's snapshot is seen, so the last one to commit
    // always finds no open step; the guard on status lets exactly one completer mark the plan done.
    if (!counter && row.top_level)
      await sql.query('plan_done', PLAN_DONE, [REPO_ID, PLAN_PATH, who.host, who.worktree, who.agent, step.anchor, op]);
  });
}

const PLAN_DONE = `WITH done AS (UPDATE plans SET status = 'done' WHERE ${PLAN} AND status = 'active'
      AND NOT EXISTS (SELECT 1 FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status <> 'completed') RETURNING plan_path),
    event AS (INSERT INTO events (repo_id, op_id, at, host, worktree, agent, entity, action, plan_path, from_status, to_status, reason)
      SELECT $1, $7, now(), $3, $4, $5, 'plan', 'complete', plan_path, 'active', 'done', 'last step ' || $6 || ' completed' FROM done RETURNING id)
  SELECT ${openSteps(false)} AS remaining_steps, EXISTS (SELECT 1 FROM event) AS plan_completed`;

/** The baseline: one UPDATE … RETURNING on a row only this worker touches, in its own transaction. */
export function rawTransaction(sql: Sql, id: number): Promise<Outcome<void>> {
  return transaction(sql, 'BEGIN', async () => {
    await sql.query('raw', 'UPDATE counters SET n = n + 1, at = now() WHERE id = $1 RETURNING n', [id]);
  });
}
