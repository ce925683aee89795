import type { FencedClaim, ReopenResult } from '../types.ts';
import { RefusedError } from '../../errors.ts';
import { requireStep, writeEvent, type StepRow } from './rows.ts';
import type { Database } from './sqlite.ts';
import type { Actor } from '../types.ts';

const CLEAR_COMPLETION = 'completed_at = NULL, completed_by = NULL, completed_token = NULL, commit_hash = NULL, complete_reason = NULL';

/**
 * Admin: takes a completed step back to pending (a substep back to its parent's claim, or, when the
 * parent is completed too, both back to pending). Checklist items keep their state. Claimed steps
 * that depend on it now wait again, so their claims are reset and fenced (see docs/steps.md).
 */
export function reopenStep(db: Database, now: Date, plan: string, anchor: string, actor: Actor, reason: string): ReopenResult {
  const step = requireStep(db, plan, anchor);
  if (step.status !== 'completed') {
    throw new RefusedError('not_completed', `cannot reopen ${anchor}: it is ${step.status}, not completed${step.status === 'pending' ? '' : ` (to take the claim back use 'springfield reset')`}`);
  }
  const at = now.toISOString();
  const parent = step.parent_anchor ? requireStep(db, plan, step.parent_anchor) : null;
  const reopened: StepRow[] = parent?.status === 'completed' ? [parent, step] : [step];
  let status = 'pending';
  if (parent && parent.status !== 'completed') {
    // A substep of a live claim goes back under that claim.
    status = parent.status;
    db.prepare(`UPDATE steps SET status = @status, ${CLEAR_COMPLETION}, claimed_by = @by, claimed_agent = @agent, claim_token = @token,
        claimed_at = @claimedAt, lease_expires_at = @lease, heartbeat_at = @heartbeat, started_at = @started
      WHERE plan_path = @plan AND anchor = @anchor AND status = 'completed'`)
      .run({ status, by: parent.claimed_by, agent: parent.claimed_agent, token: parent.claim_token, claimedAt: parent.claimed_at, lease: parent.lease_expires_at,
        heartbeat: parent.heartbeat_at, started: parent.started_at, plan, anchor });
  } else {
    const reset = db.prepare(`UPDATE steps SET status = 'pending', ${CLEAR_COMPLETION}, claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1,
        claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL
      WHERE plan_path = ? AND anchor = ? AND status = 'completed'`);
    for (const s of reopened) reset.run(plan, s.anchor);
  }
  const family = new Set(reopened.map((s) => s.parent_anchor ?? s.anchor));
  const fenced = fenceDependents(db, at, plan, reopened.map((s) => s.anchor), family, actor, anchor);
  const planRow = db.prepare(`UPDATE plans SET status = 'active', updated_at = ? WHERE plan_path = ? AND status = 'done' RETURNING plan_path`).pluck().get(at, plan);
  for (const s of reopened) {
    writeEvent(db, at, actor, {
      entity: 'step', action: 'reopen', planPath: plan, stepAnchor: s.anchor, from: 'completed', to: s === step ? status : 'pending', reason,
      data: { previous_commit: s.commit_hash, previous_completer: s.completed_by, previous_token: s.completed_token, previous_reason: s.complete_reason, dependents_fenced: s === step ? fenced : undefined },
    });
  }
  if (planRow !== undefined) writeEvent(db, at, actor, { entity: 'plan', action: 'reopen', planPath: plan, from: 'done', to: 'active', reason: `${anchor} reopened: ${reason}` });
  return {
    reopened: true, plan_path: plan, step_anchor: anchor, steps_reopened: reopened.map((s) => s.anchor), status,
    previous_commit: step.commit_hash, previous_completer: step.completed_by, dependents_fenced: fenced, plan_reopened: planRow !== undefined,
  };
}

/** Resets the claims of top-level steps (outside `family`) that depend, themselves or through a substep, on one of `anchors`. */
function fenceDependents(db: Database, at: string, plan: string, anchors: readonly string[], family: ReadonlySet<string>, actor: Actor, cause: string): FencedClaim[] {
  const tops = new Set<string>();
  const dependents = db.prepare(`SELECT coalesce(c.parent_anchor, c.anchor) FROM step_deps d JOIN steps c ON c.plan_path = d.plan_path AND c.anchor = d.step_anchor
    WHERE d.plan_path = ? AND d.depends_on = ?`).pluck();
  for (const a of anchors) for (const top of dependents.all(plan, a) as string[]) if (!family.has(top)) tops.add(top);
  const fenced: FencedClaim[] = [];
  for (const top of tops) {
    const row = requireStep(db, plan, top);
    if (row.status !== 'claimed' && row.status !== 'in_progress') continue;
    db.prepare(`UPDATE steps SET status = 'pending', claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1,
        claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL
      WHERE plan_path = @plan AND anchor IN (SELECT @anchor UNION ALL SELECT anchor FROM steps WHERE plan_path = @plan AND parent_anchor = @anchor) AND status IN ('claimed', 'in_progress')`)
      .run({ plan, anchor: top });
    db.prepare(`UPDATE checklist_items SET status = 'open', updated_at = @now, updated_by = NULL
      WHERE plan_path = @plan AND status = 'in_progress'
        AND step_anchor IN (SELECT @anchor UNION ALL SELECT anchor FROM steps WHERE plan_path = @plan AND parent_anchor = @anchor)`)
      .run({ now: at, plan, anchor: top });
    const token = row.claim_token + 1;
    writeEvent(db, at, actor, {
      entity: 'step', action: 'reset', planPath: plan, stepAnchor: top, from: row.status, to: 'pending', reason: `its dependency ${cause} was reopened`,
      data: { previous_holder: row.claimed_by, claim_token: row.claim_token, new_claim_token: token },
    });
    fenced.push({ step_anchor: top, previous_holder: row.claimed_by, claim_token: token });
  }
  return fenced;
}
