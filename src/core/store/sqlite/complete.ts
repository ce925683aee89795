import type { CompletePort } from '../shared/complete.ts';
import type { EventInput } from '../shared/rows.ts';
import type { Actor } from '../types.ts';
import { claimChanged, type OpenItem } from '../shared/refusals.ts';
import { countRemaining } from './readiness.ts';
import { findPlan, writeEvent } from './rows.ts';
import type { SqliteMethods } from './port.ts';
import type { SqlConnection } from './sqlite.ts';

/** Completion's reads and writes (shared/complete.ts), all inside the operation's IMMEDIATE transaction. */
export const completeSql: SqliteMethods<CompletePort> = {
  openWork(plan, anchor) {
    const items = this.db
      .prepare(
        `SELECT step_anchor, kind, ordinal, text FROM checklist_items WHERE plan_path = @plan AND status != 'completed'
        AND step_anchor IN (SELECT @a UNION ALL SELECT anchor FROM steps WHERE plan_path = @plan AND parent_anchor = @a AND status != 'completed') ORDER BY id`,
      )
      .all({ plan, a: anchor }) as OpenItem[];
    const substeps = this.db
      .prepare(
        `SELECT anchor FROM steps WHERE plan_path = ? AND parent_anchor = ? AND status != 'completed' ORDER BY step_index`,
      )
      .pluck()
      .all(plan, anchor) as string[];
    return { items, substeps };
  },
  completeItems(plan, anchor, worktree) {
    return this.db
      .prepare(
        `UPDATE checklist_items SET status = 'completed', updated_at = @now, updated_by = @wt WHERE plan_path = @plan AND status != 'completed'
        AND step_anchor IN (SELECT @anchor UNION ALL SELECT anchor FROM steps WHERE plan_path = @plan AND parent_anchor = @anchor)`,
      )
      .run({ now: this.now, wt: worktree, plan, anchor }).changes;
  },
  finishCompletion(c) {
    const { db, now } = this;
    const params = {
      now,
      wt: c.actor.worktree,
      token: c.token,
      commit: c.commitHash,
      reason: c.forceReason,
      plan: c.planPath,
      anchor: c.anchor,
    };
    const changed = db
      .prepare(
        `UPDATE steps SET status = 'completed', completed_at = @now, completed_by = @wt, completed_token = @token,
        commit_hash = @commit, complete_reason = @reason, lease_expires_at = NULL
      WHERE plan_path = @plan AND anchor = @anchor AND status IN ('claimed', 'in_progress') AND claimed_by = @wt AND claim_token = @token`,
      )
      .run(params).changes;
    if (changed !== 1) throw claimChanged('complete', c.anchor);
    // Substeps go with their parent: every item is done now (strict) or was just completed (forced).
    if (c.substeps.length > 0) {
      db.prepare(
        `UPDATE steps SET status = 'completed', completed_at = @now, completed_by = @wt, completed_token = claim_token, complete_reason = @reason, lease_expires_at = NULL
        WHERE plan_path = @plan AND parent_anchor = @anchor AND status != 'completed'`,
      ).run({ now, wt: c.actor.worktree, reason: c.forceReason, plan: c.planPath, anchor: c.anchor });
    }
    writeEvent(db, now, c.actor, c.event);
    const remaining = countRemaining(db, c.planPath);
    // Substeps finish with their parent, so only a plan without open top-level steps needs the full check.
    const planCompleted = remaining === 0 && markDone(db, now, c.actor, c.planPath, c.planDone);
    return { remaining, planCompleted };
  },
  completingAgent(plan, anchor) {
    return this.db
      .prepare(
        `SELECT agent FROM events WHERE plan_path = ? AND step_anchor = ? AND entity = 'step' AND action = 'complete' ORDER BY id DESC LIMIT 1`,
      )
      .pluck()
      .get(plan, anchor) as string | null | undefined;
  },
  markPlanDone(actor, plan, event) {
    return markDone(this.db, this.now, actor, plan, event);
  },
};

/** The plan marked done, with its event, when no step of it is open and it is not done yet: whether it was. */
function markDone(db: SqlConnection, now: string, actor: Actor, plan: string, event: EventInput): boolean {
  if (db.prepare(`SELECT 1 FROM steps WHERE plan_path = ? AND status != 'completed' LIMIT 1`).get(plan) !== undefined)
    return false;
  const status = findPlan(db, plan)?.status;
  if (status === undefined || status === 'done') return false;
  db.prepare(`UPDATE plans SET status = 'done', updated_at = ? WHERE plan_path = ?`).run(now, plan);
  writeEvent(db, now, actor, event);
  return true;
}
