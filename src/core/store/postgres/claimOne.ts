import { planHash } from '../../plan/hash.ts';
import type { PlanSource } from '../../plan/types.ts';
import { claimResult } from '../shared/claims.ts';
import type { Actor, ClaimResult } from '../types.ts';
import { countRemaining, openStepsSql, partitionSteps } from './readiness.ts';
import { PLAN_LOCK_CLASS } from './rows.ts';
import type { Direct, Tx } from './session.ts';

/** A timestamptz as the ISO-8601 text JSON shows (milliseconds, UTC), for event data and reasons. */
export const isoSql = (x: string): string => `to_char(${x} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The operation's time: the test clock's, else the server's (the transaction's start), at millisecond precision as SQLite keeps it. */
export const nowSql = (lit: string): string => `date_trunc('milliseconds', coalesce(${lit}::timestamptz, now()))`;

type Claimed = Extract<ClaimResult, { claimed: true }>;

const PLAN = 'repo_id = $1 AND plan_path = $2';
const CANDIDATE =
  'anchor, title, step_index, claim_token, status, claimed_by, claimed_agent, claimed_host, lease_expires_at, files';

// $1 repo, $2 plan, $3 plan hash, $4 host, $5 worktree, $6 agent, $7 lease seconds, $8 operation id, $9 test clock or null,
// $10 the branch the claimer's worktree is on (store/shared/claims.ts: an epic's steps are claimed in its worktree or on its branch).
const CLAIM_TYPES = ['text', 'text', 'text', 'text', 'text', 'text', 'double precision', 'uuid', 'timestamptz', 'text'];
const CLAIM = `WITH t AS (SELECT ${nowSql('$9')} AS now),
  plan AS (SELECT plan_hash, epic_id FROM plans WHERE ${PLAN}),
  go AS (SELECT 1 FROM plan p LEFT JOIN epics e ON e.repo_id = $1 AND e.id = p.epic_id WHERE p.plan_hash = $3
    AND coalesce(e.status, 'in_progress') = 'in_progress'
    AND (e.worktree_path IS NULL OR e.worktree_path = $5 OR regexp_replace(e.branch, '^refs/heads/', '') = regexp_replace($10, '^refs/heads/', ''))),
  ready AS (SELECT ${CANDIDATE} FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0
    AND EXISTS (SELECT 1 FROM go) ORDER BY step_index LIMIT 1 FOR UPDATE SKIP LOCKED),
  expired AS (SELECT ${CANDIDATE} FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress')
    AND lease_expires_at < (SELECT now FROM t) AND blockers = 0 AND EXISTS (SELECT 1 FROM go) ORDER BY step_index LIMIT 1 FOR UPDATE SKIP LOCKED),
  cand AS (SELECT * FROM ready UNION ALL SELECT * FROM expired ORDER BY step_index LIMIT 1),
  -- The row by its whole key, not a join the planner may run as a scan of the plan's steps (a generic plan made on an empty table).
  claimed AS (UPDATE steps s SET status = 'claimed', claimed_host = $4, claimed_by = $5, claimed_agent = $6, claim_token = c.claim_token + 1,
      claimed_at = t.now, lease_expires_at = t.now + make_interval(secs => $7), heartbeat_at = NULL, started_at = NULL
    FROM cand c, t WHERE s.repo_id = $1 AND s.plan_path = $2 AND s.anchor = (SELECT anchor FROM cand) AND s.anchor = c.anchor AND s.claim_token = c.claim_token
      -- A step that declares files is claimed by the operation, which applies the files rule (shared/filesClaim.ts).
      AND c.files IS NULL
      AND (s.status = 'pending' OR (s.status IN ('claimed', 'in_progress') AND s.lease_expires_at < t.now))
    RETURNING s.anchor, s.title, s.step_index, s.claim_token, s.claimed_at, s.lease_expires_at, c.status AS from_status,
      c.claimed_by AS prev_by, c.claimed_agent AS prev_agent, c.claimed_host AS prev_host, c.lease_expires_at AS prev_lease),
  subs AS (UPDATE steps s SET status = 'claimed', claimed_host = $4, claimed_by = $5, claimed_agent = $6, claim_token = c.claim_token,
      claimed_at = c.claimed_at, lease_expires_at = c.lease_expires_at, heartbeat_at = NULL, started_at = NULL
    FROM claimed c WHERE s.repo_id = $1 AND s.plan_path = $2 AND s.parent_anchor = c.anchor AND s.status <> 'completed'
    RETURNING s.anchor, s.step_index),
  sub_list AS (SELECT coalesce(jsonb_agg(anchor ORDER BY step_index), '[]'::jsonb) AS anchors FROM subs),
  reopened AS (UPDATE checklist_items i SET status = 'open', updated_at = c.claimed_at, updated_by = NULL FROM claimed c
    WHERE c.from_status <> 'pending' AND i.repo_id = $1 AND i.plan_path = $2 AND i.status = 'in_progress'
      AND i.step_anchor IN (SELECT c.anchor UNION ALL SELECT anchor FROM steps WHERE ${PLAN} AND parent_anchor = c.anchor) RETURNING 1),
  ev AS (INSERT INTO events (repo_id, op_id, at, host, worktree, agent, entity, action, plan_path, step_anchor, from_status, to_status, reason, data)
    SELECT $1, $8, c.claimed_at, $4, $5, $6, 'step', CASE WHEN c.from_status = 'pending' THEN 'claim' ELSE 'reclaim' END, $2, c.anchor, c.from_status, 'claimed',
      CASE WHEN c.from_status = 'pending' THEN NULL ELSE 'lease of ' || coalesce(c.prev_by, 'null') || ' expired at ' || ${isoSql('c.prev_lease')} END,
      jsonb_build_object('claim_token', c.claim_token, 'lease_expires_at', ${isoSql('c.lease_expires_at')},
        'previous_holder', CASE WHEN c.from_status = 'pending' THEN NULL ELSE c.prev_by END, 'substeps', (SELECT anchors FROM sub_list))
      || CASE WHEN c.from_status = 'pending' THEN '{}'::jsonb ELSE jsonb_build_object('previous_agent', c.prev_agent, 'previous_host', c.prev_host) END
    FROM claimed c RETURNING 1)
SELECT c.anchor, c.title, c.step_index, c.claim_token, c.lease_expires_at, c.from_status, c.prev_by, c.prev_agent, c.prev_lease,
  (SELECT anchors FROM sub_list) AS substeps, (SELECT count(*) FROM reopened) + (SELECT count(*) FROM ev) AS written,
  -- Two counts, each on its partial index (steps_ready, steps_held), rather than one OR over every top-level step.
  ((SELECT count(*) FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0)
    + (SELECT count(*) FROM steps WHERE ${PLAN} AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress')
      AND lease_expires_at < (SELECT now FROM t) AND blockers = 0))::int AS ready_before,
  ${openStepsSql(PLAN)} AS remaining
FROM (VALUES (1)) AS one LEFT JOIN claimed c ON true`;

interface ClaimRow {
  anchor: string | null;
  title: string;
  step_index: number;
  claim_token: number;
  lease_expires_at: string;
  from_status: string;
  prev_by: string | null;
  prev_agent: string | null;
  prev_lease: string | null;
  substeps: string[];
  ready_before: number;
  remaining: number;
}

/**
 * claimNext in one round trip (docs/postgres-design.md, "Concurrency"): the plan's lock, then one statement that
 * checks the plan and its epic, locks the first claimable step, claims it with its substeps, reopens a
 * reclaimed step's items and logs the event. Null when it claimed nothing: the caller then runs the
 * transaction that says why (drift, an epic not in progress, nothing ready), exactly as before; and
 * when the first ready step declares files, which that transaction claims under the files rule.
 */
export async function claimDirect(
  d: Direct,
  source: PlanSource,
  actor: Actor,
  leaseSeconds: number,
  branch: string | null = null,
): Promise<ClaimResult | null> {
  const plan = source.planPath;
  const L = (v: unknown): string => d.lit(v);
  const values = [
    d.repo,
    plan,
    planHash(source.plan()),
    d.host,
    actor.worktree,
    actor.agent,
    leaseSeconds,
    d.op,
    d.now,
    branch,
  ];
  const claim = await d.execute('sf_claim', CLAIM_TYPES, CLAIM, values);
  // The lock is its own statement so the claim's snapshot is taken after it: a re-initialisation that held it is seen whole.
  const results = await d.batch([
    `SELECT pg_advisory_xact_lock_shared(${PLAN_LOCK_CLASS}, hashtext(${L(d.repo)} || '/' || ${L(plan)}))`,
    claim,
  ]);
  const row = results[1]?.[0] as ClaimRow | undefined;
  if (!row?.anchor) return null;
  return claimResult(plan, actor, {
    anchor: row.anchor,
    title: row.title,
    index: row.step_index,
    substeps: row.substeps,
    token: Number(row.claim_token),
    until: row.lease_expires_at,
    ready: Math.max(0, Number(row.ready_before) - 1),
    remaining: Number(row.remaining),
    taken: row.from_status !== 'pending' ? { holder: row.prev_by, agent: row.prev_agent, lease: row.prev_lease } : null,
  });
}

/**
 * The claim operation `op` made for this holder, rebuilt from its event and the step, or null when it
 * committed nothing (its reply was lost: docs/postgres-design.md, "Failures, retries, idempotence"). Counts are as they are now.
 * With `held`, also null unless the step is still this holder's under that claim's token.
 */
export async function findClaim(
  tx: Tx,
  op: string,
  source: PlanSource,
  actor: Actor,
  held = false,
): Promise<Claimed | null> {
  const stillHeld = held
    ? `AND s.status IN ('claimed', 'in_progress') AND s.claimed_host = e.host AND s.claimed_by = e.worktree
      AND s.claimed_agent IS NOT DISTINCT FROM e.agent AND s.claim_token = (e.data->>'claim_token')::bigint`
    : '';
  const row = (
    await tx.q<{
      action: string;
      step_anchor: string;
      reason: string | null;
      data: Record<string, unknown>;
      title: string;
      step_index: number;
    }>(
      `SELECT e.action, e.step_anchor, e.reason, e.data, s.title, s.step_index FROM events e
      JOIN steps s ON s.repo_id = e.repo_id AND s.plan_path = e.plan_path AND s.anchor = e.step_anchor
     WHERE e.op_id = $1 AND e.repo_id = $2 AND e.plan_path = $3 AND e.entity = 'step' AND e.action IN ('claim', 'reclaim')
       AND e.host = $4 AND e.worktree = $5 AND e.agent IS NOT DISTINCT FROM $6 ${stillHeld}`,
      [op, tx.repo, source.planPath, tx.host, actor.worktree, actor.agent],
    )
  )[0];
  if (!row) return null;
  const p = await partitionSteps(tx, source.planPath);
  const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  return claimResult(source.planPath, actor, {
    anchor: row.step_anchor,
    title: row.title,
    index: row.step_index,
    substeps: Array.isArray(row.data.substeps) ? row.data.substeps.map(String) : [],
    token: Number(row.data.claim_token),
    until: String(row.data.lease_expires_at),
    ready: p.ready.length,
    remaining: await countRemaining(tx, source.planPath),
    taken:
      row.action === 'reclaim'
        ? {
            holder: str(row.data.previous_holder),
            agent: str(row.data.previous_agent),
            lease: / expired at (\S+)$/.exec(row.reason ?? '')?.[1] ?? null,
          }
        : null,
  });
}

/**
 * An earlier process's claim whose reply was lost, handed over by its operation id: the claim it made
 * if it committed and the step is still this holder's under its token; null otherwise (nothing
 * committed, or the claim has since ended: a lease taken over, a reset), and the caller claims anew.
 */
export function resumeClaim(tx: Tx, op: string, source: PlanSource, actor: Actor): Promise<Claimed | null> {
  return findClaim(tx, op, source, actor, true);
}
