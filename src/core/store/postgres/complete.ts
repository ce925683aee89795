import type { CompletePort } from '../shared/complete.ts';
import { claimChangedMessage, type OpenItem } from '../shared/refusals.ts';
import type { EventInput } from '../shared/rows.ts';
import type { Actor } from '../types.ts';
import { openStepsSql } from './readiness.ts';
import { EVENT_INSERT, eventInsert, eventValues } from './rows.ts';
import type { PgMethods } from './port.ts';
import type { Tx } from './session.ts';

/** Completion's reads and writes (shared/complete.ts), under the locks requireClaim took; its writes go with the COMMIT. */
export const completePg: PgMethods<CompletePort> = {
  async openWork(plan, anchor) {
    const open = await this.tx.q<OpenItem & { what: string }>(
      `SELECT 'item' AS what, step_anchor, kind, ordinal, text, id AS n FROM checklist_items
        WHERE repo_id = $1 AND plan_path = $2 AND status <> 'completed'
          AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed')
      UNION ALL SELECT 'substep', anchor, '', 0, '', step_index FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3 AND status <> 'completed'
      ORDER BY what, n`,
      [this.tx.repo, plan, anchor],
    );
    return {
      items: open
        .filter((r) => r.what === 'item')
        .map(({ step_anchor, kind, ordinal, text }) => ({ step_anchor, kind, ordinal, text })),
      substeps: open.filter((r) => r.what === 'substep').map((r) => r.step_anchor),
    };
  },
  async completeItems(plan, anchor, worktree) {
    return (
      await this.tx.q(
        `UPDATE checklist_items SET status = 'completed', updated_at = $4, updated_by = $5 WHERE repo_id = $1 AND plan_path = $2 AND status <> 'completed'
        AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3) RETURNING id`,
        [this.tx.repo, plan, anchor, this.now, worktree],
      )
    ).length;
  },
  async finishCompletion(c) {
    const tx = this.tx;
    const L = (v: unknown) => tx.lit(v);
    const where = `repo_id = ${L(tx.repo)} AND plan_path = ${L(c.planPath)}`;
    const completer = `completed_at = ${L(this.now)}, completed_host = ${L(this.host)}, completed_by = ${L(c.actor.worktree)}`;
    // The step's UPDATE makes the readiness trigger lock its shard's open-step counter: it goes last, with its COMMIT, in one round trip.
    const tail = [eventInsert(tx, c.actor, c.event)];
    if (c.substeps.length > 0) {
      tail.push(`UPDATE steps SET status = 'completed', ${completer}, completed_token = claim_token, complete_reason = ${L(c.forceReason)}, lease_expires_at = NULL
        WHERE ${where} AND parent_anchor = ${L(c.anchor)} AND status <> 'completed'`);
    }
    tail.push(`WITH done AS (UPDATE steps SET status = 'completed', ${completer}, completed_token = ${L(c.token)}, commit_hash = ${L(c.commitHash)},
        complete_reason = ${L(c.forceReason)}, lease_expires_at = NULL
      WHERE ${where} AND anchor = ${L(c.anchor)} AND status IN ('claimed', 'in_progress') AND claimed_host = ${L(this.host)} AND claimed_by = ${L(c.actor.worktree)}
        AND claim_token = ${L(c.token)} RETURNING 1)
      SELECT sf_expect((SELECT count(*) FROM done), 1, ${L(claimChangedMessage('complete', c.anchor))})`);
    // After the COMMIT (docs/postgres-design.md, "Concurrency"): what is left open, and the plan marked done when nothing is.
    const results = await tx.finish(tail, [planDoneSql(tx, c.actor, c.planPath, c.planDone)]);
    const counted = results[tail.length]?.[0] as { remaining: number; done: boolean } | undefined;
    return { remaining: Number(counted?.remaining ?? 0), planCompleted: counted?.done === true };
  },
  async completingAgent(plan, anchor) {
    return (
      await this.tx.q<{ agent: string | null }>(
        `SELECT agent FROM events WHERE repo_id = $1 AND plan_path = $2 AND step_anchor = $3 AND entity = 'step' AND action = 'complete'
      ORDER BY id DESC LIMIT 1`,
        [this.tx.repo, plan, anchor],
      )
    )[0]?.agent;
  },
  async markPlanDone(actor, plan, event) {
    const results = await this.tx.finish([], [planDoneSql(this.tx, actor, plan, event)]);
    return (results[0]?.[0] as { done?: boolean } | undefined)?.done === true;
  },
};

/**
 * The plan marked done with `event` when nothing in it is open; what is left open. Sent after a
 * completion's COMMIT (Tx.finish's afterCommit): the last completion to commit sees every other one,
 * and of several that see nothing open the row lock and the status test let one through.
 */
function planDoneSql(tx: Tx, actor: Actor, plan: string, event: EventInput): string {
  const L = (v: unknown) => tx.lit(v);
  const where = `repo_id = ${L(tx.repo)} AND plan_path = ${L(plan)}`;
  return `WITH u AS (UPDATE plans SET status = 'done', updated_at = ${L(tx.now)} WHERE ${where} AND status <> 'done'
        AND CASE WHEN ${openStepsSql(where)} = 0 THEN NOT EXISTS (SELECT 1 FROM steps WHERE ${where} AND status <> 'completed') ELSE false END RETURNING 1),
      e AS (${EVENT_INSERT} SELECT ${eventValues(tx, actor, event)} FROM u RETURNING 1)
    SELECT ${openStepsSql(where)} AS remaining, EXISTS (SELECT 1 FROM e) AS done`;
}
