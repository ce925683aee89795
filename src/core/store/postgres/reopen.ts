import { RefusedError } from '../../errors.ts';
import type { Actor, FencedClaim, ReopenResult } from '../types.ts';
import { lockOwner, requireStep, writeEvent, type PgStepRow } from './rows.ts';
import type { Tx } from './session.ts';

const CLEAR_COMPLETION = 'completed_at = NULL, completed_host = NULL, completed_by = NULL, completed_token = NULL, commit_hash = NULL, complete_reason = NULL';
const CLEAR_CLAIM = 'claimed_host = NULL, claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1, claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL';

/**
 * Admin: takes a completed step back to pending (a substep back to its parent's claim, or, when the
 * parent is completed too, both back to pending), as on SQLite (docs/steps.md). Claimed steps that
 * depend on it now wait again, so their claims are reset and fenced. Rows are locked as claims lock them.
 */
export async function reopenStep(tx: Tx, plan: string, anchor: string, actor: Actor, reason: string): Promise<ReopenResult> {
  const { step, owner } = await lockOwner(tx, plan, anchor);
  if (step.status !== 'completed') {
    throw new RefusedError('not_completed', `cannot reopen ${anchor}: it is ${step.status}, not completed${step.status === 'pending' ? '' : ` (to take the claim back use 'springfield reset')`}`);
  }
  const parent = step.parent_anchor ? owner : null;
  const reopened: PgStepRow[] = parent?.status === 'completed' ? [parent, step] : [step];
  let status = 'pending';
  if (parent && parent.status !== 'completed') {
    // A substep of a live claim goes back under that claim.
    status = parent.status;
    await tx.q(`UPDATE steps SET status = $4, ${CLEAR_COMPLETION}, claimed_host = $5, claimed_by = $6, claimed_agent = $7, claim_token = $8,
        claimed_at = $9, lease_expires_at = $10, heartbeat_at = $11, started_at = $12
      WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 AND status = 'completed'`,
    [tx.repo, plan, anchor, status, parent.claimed_host, parent.claimed_by, parent.claimed_agent, parent.claim_token, parent.claimed_at, parent.lease_expires_at,
      parent.heartbeat_at, parent.started_at]);
  } else {
    for (const s of reopened) {
      await tx.q(`UPDATE steps SET status = 'pending', ${CLEAR_COMPLETION}, ${CLEAR_CLAIM} WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 AND status = 'completed'`,
        [tx.repo, plan, s.anchor]);
    }
  }
  const family = new Set(reopened.map((s) => s.parent_anchor ?? s.anchor));
  const fenced = await fenceDependents(tx, plan, reopened.map((s) => s.anchor), family, actor, anchor);
  const planRow = await tx.q(`UPDATE plans SET status = 'active', updated_at = $3 WHERE repo_id = $1 AND plan_path = $2 AND status = 'done' RETURNING plan_path`, [tx.repo, plan, tx.now]);
  for (const s of reopened) {
    await writeEvent(tx, actor, {
      entity: 'step', action: 'reopen', planPath: plan, stepAnchor: s.anchor, from: 'completed', to: s === step ? status : 'pending', reason,
      data: { previous_commit: s.commit_hash, previous_completer: s.completed_by, previous_token: s.completed_token, previous_reason: s.complete_reason, dependents_fenced: s === step ? fenced : undefined },
    });
  }
  if (planRow.length > 0) await writeEvent(tx, actor, { entity: 'plan', action: 'reopen', planPath: plan, from: 'done', to: 'active', reason: `${anchor} reopened: ${reason}` });
  return {
    reopened: true, plan_path: plan, step_anchor: anchor, steps_reopened: reopened.map((s) => s.anchor), status,
    previous_commit: step.commit_hash, previous_completer: step.completed_by, dependents_fenced: fenced, plan_reopened: planRow.length > 0,
  };
}

/** Resets the claims of top-level steps (outside `family`) that depend, themselves or through a substep, on one of `anchors`. */
async function fenceDependents(tx: Tx, plan: string, anchors: readonly string[], family: ReadonlySet<string>, actor: Actor, cause: string): Promise<FencedClaim[]> {
  const tops = new Set<string>();
  for (const a of anchors) {
    const rows = await tx.q<{ top: string }>(`SELECT coalesce(c.parent_anchor, c.anchor) AS top FROM step_deps d
      JOIN steps c ON c.repo_id = d.repo_id AND c.plan_path = d.plan_path AND c.anchor = d.step_anchor
      WHERE d.repo_id = $1 AND d.plan_path = $2 AND d.depends_on = $3 ORDER BY d.step_anchor`, [tx.repo, plan, a]);
    for (const r of rows) if (!family.has(r.top)) tops.add(r.top);
  }
  const fenced: FencedClaim[] = [];
  for (const top of tops) {
    const row = await requireStep(tx, plan, top, true);
    if (row.status !== 'claimed' && row.status !== 'in_progress') continue;
    await tx.q(`UPDATE steps SET status = 'pending', ${CLEAR_CLAIM}
      WHERE repo_id = $1 AND plan_path = $2 AND (anchor = $3 OR parent_anchor = $3) AND status IN ('claimed', 'in_progress')`, [tx.repo, plan, top]);
    await tx.q(`UPDATE checklist_items SET status = 'open', updated_at = $4, updated_by = NULL
      WHERE repo_id = $1 AND plan_path = $2 AND status = 'in_progress'
        AND step_anchor IN (SELECT $3 UNION ALL SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor = $3)`, [tx.repo, plan, top, tx.now]);
    const token = row.claim_token + 1;
    await writeEvent(tx, actor, {
      entity: 'step', action: 'reset', planPath: plan, stepAnchor: top, from: row.status, to: 'pending', reason: `its dependency ${cause} was reopened`,
      data: { previous_holder: row.claimed_by, claim_token: row.claim_token, new_claim_token: token },
    });
    fenced.push({ step_anchor: top, previous_holder: row.claimed_by, claim_token: token });
  }
  return fenced;
}
