import { planHash } from '../../plan/hash.ts';
import type { PlanSource } from '../../plan/types.ts';
import { completeResult, planDoneEvent } from '../shared/complete.ts';
import { claimChangedMessage } from '../shared/refusals.ts';
import type { Actor, CompleteOptions, CompleteResult } from '../types.ts';
import { nowSql } from './claimOne.ts';
import { countRemaining, openStepsSql } from './readiness.ts';
import { PLAN_LOCK_CLASS } from './rows.ts';
import type { Direct, Tx } from './session.ts';

const PLAN = 'repo_id = $1 AND plan_path = $2';
const S_PLAN = 's.repo_id = $1 AND s.plan_path = $2';

// $1 repo, $2 plan, $3 anchor, $4 host, $5 worktree, $6 agent, $7 token or null, $8 plan hash, $9 commit, $10 operation id, $11 test clock or null, $12 message.
const COMPLETE_TYPES = [
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'bigint',
  'text',
  'text',
  'uuid',
  'timestamptz',
  'text',
];
const COMPLETE = `WITH t AS (SELECT ${nowSql('$11')} AS now),
  step AS (SELECT anchor, status, claim_token FROM steps WHERE ${PLAN} AND anchor = $3 AND parent_anchor IS NULL
    AND status IN ('claimed', 'in_progress') AND claimed_host = $4 AND claimed_by = $5
    AND (claimed_agent IS NULL OR $6 IS NULL OR claimed_agent = $6)
    AND ($7 IS NULL OR claim_token = $7)
    AND EXISTS (SELECT 1 FROM plans WHERE ${PLAN} AND plan_hash = $8) FOR UPDATE),
  open_subs AS (SELECT anchor FROM steps WHERE ${PLAN} AND parent_anchor = $3 AND status <> 'completed'),
  ok AS (SELECT s.status, s.claim_token FROM step s WHERE NOT EXISTS (SELECT 1 FROM checklist_items WHERE ${PLAN} AND status <> 'completed'
    AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM open_subs))),
  subs AS (UPDATE steps s SET status = 'completed', completed_at = t.now, completed_host = $4, completed_by = $5,
      completed_token = s.claim_token, complete_reason = NULL, lease_expires_at = NULL
    FROM ok, t WHERE ${S_PLAN} AND s.parent_anchor = $3 AND s.status <> 'completed' RETURNING s.anchor, s.step_index),
  done AS (UPDATE steps s SET status = 'completed', completed_at = t.now, completed_host = $4, completed_by = $5,
      completed_token = ok.claim_token, commit_hash = $9, complete_reason = NULL, lease_expires_at = NULL
    FROM ok, t WHERE ${S_PLAN} AND s.anchor = $3 RETURNING 1),
  ev AS (INSERT INTO events (repo_id, op_id, at, host, worktree, agent, entity, action, plan_path, step_anchor, from_status, to_status, reason, data)
    SELECT $1, $10, t.now, $4, $5, $6, 'step', 'complete', $2, $3, ok.status, 'completed', NULL,
      jsonb_build_object('claim_token', ok.claim_token, 'commit_hash', $9, 'forced', false, 'items_auto_completed', 0,
        'substeps_completed', (SELECT coalesce(jsonb_agg(anchor ORDER BY step_index), '[]'::jsonb) FROM subs))
    FROM ok, t RETURNING 1)
  SELECT sf_expect((SELECT count(*) FROM done), 1, $12)`;

// $1 repo, $2 plan, $3 host, $4 worktree, $5 agent, $6 operation id, $7 test clock or null, $8 reason.
const PLAN_DONE_TYPES = ['text', 'text', 'text', 'text', 'text', 'uuid', 'timestamptz', 'text'];
// Sent after the completion's COMMIT (docs/postgres-design.md, "Concurrency"): the last completion to commit sees
// every other one and no open step; of several that see that, the row lock and the status test let one through.
const PLAN_DONE = `WITH u AS (UPDATE plans SET status = 'done', updated_at = ${nowSql('$7')} WHERE ${PLAN} AND status <> 'done'
      AND CASE WHEN ${openStepsSql(PLAN)} = 0 THEN NOT EXISTS (SELECT 1 FROM steps WHERE ${PLAN} AND status <> 'completed') ELSE false END RETURNING 1),
    e AS (INSERT INTO events (repo_id, op_id, at, host, worktree, agent, entity, action, plan_path, from_status, to_status, reason)
      SELECT $1, $6, ${nowSql('$7')}, $3, $4, $5, 'plan', 'complete', $2, 'active', 'done', $8 FROM u RETURNING 1)
  SELECT ${openStepsSql(PLAN)} AS remaining, EXISTS (SELECT 1 FROM e) AS done`;

/**
 * completeStep in one round trip (docs/postgres-design.md, "Concurrency"), for what nearly every completion is:
 * a top-level step, not forced, completed by its holder with every item done. Three statements in one
 * simple query (one implicit transaction): the plan's lock; one statement that locks the step if and
 * only if the caller holds it (host, worktree, agent, token) and nothing is left open, completes it
 * with its open substeps and logs the event, and aborts everything (sf_expect) when it completed
 * nothing; then, in a snapshot that sees the readiness trigger's count, the plan marked done by the
 * completion that leaves nothing open. Null when it did not apply or aborted: the caller runs the
 * transaction that refuses, or repeats a completion, exactly as before.
 */
export async function completeDirect(
  d: Direct,
  source: PlanSource,
  anchor: string,
  actor: Actor,
  options: CompleteOptions,
): Promise<CompleteResult | null> {
  const top = source.plan().steps.find((s) => s.anchor === anchor);
  if (!top || top.parentAnchor !== null || options.forceReason != null) return null;
  const plan = source.planPath;
  const commit = options.commitHash ?? null;
  const complete = await d.execute('sf_complete', COMPLETE_TYPES, COMPLETE, [
    d.repo,
    plan,
    anchor,
    d.host,
    actor.worktree,
    actor.agent,
    actor.token ?? null,
    planHash(source.plan()),
    commit,
    d.op,
    d.now,
    claimChangedMessage('complete', anchor),
  ]);
  const planDone = await d.execute('sf_plan_done', PLAN_DONE_TYPES, PLAN_DONE, [
    d.repo,
    plan,
    d.host,
    actor.worktree,
    actor.agent,
    d.op,
    d.now,
    planDoneEvent(plan, anchor).reason,
  ]);
  let results: Record<string, unknown>[][];
  try {
    results = await d.batch(
      [
        `SELECT pg_advisory_xact_lock_shared(${PLAN_LOCK_CLASS}, hashtext(${d.lit(d.repo)} || '/' || ${d.lit(plan)}))`,
        complete,
      ],
      [planDone],
    );
  } catch (err) {
    if ((err as { code?: unknown }).code === 'SF001') return null;
    throw err;
  }
  const counted = results[2]?.[0] as { remaining: number; done: boolean } | undefined;
  return completeResult(anchor, {
    commitHash: commit,
    forceReason: null,
    autoCompleted: 0,
    already: false,
    planCompleted: counted?.done === true,
    remaining: Number(counted?.remaining ?? 0),
  });
}

/** The completion operation `op` made, rebuilt from its events, or null when it committed nothing (docs/postgres-design.md, "Failures, retries, idempotence"). */
export async function findCompletion(
  tx: Tx,
  op: string,
  source: PlanSource,
  anchor: string,
): Promise<CompleteResult | null> {
  const rows = await tx.q<{ entity: string; data: Record<string, unknown> | null }>(
    `SELECT entity, data FROM events WHERE op_id = $1 AND repo_id = $2 AND plan_path = $3 AND action = 'complete'`,
    [op, tx.repo, source.planPath],
  );
  const step = rows.find((r) => r.entity === 'step');
  if (!step) return null;
  const commit = step.data?.commit_hash;
  return completeResult(anchor, {
    commitHash: typeof commit === 'string' ? commit : null,
    forceReason: null,
    autoCompleted: 0,
    already: false,
    planCompleted: rows.some((r) => r.entity === 'plan'),
    remaining: await countRemaining(tx, source.planPath),
  });
}
