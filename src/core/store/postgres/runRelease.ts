import type { Actor } from '../types.ts';
import { resetStep } from './claims.ts';
import { lockOwner, lockPlan, writeEvent } from './rows.ts';
import type { Tx } from './session.ts';

/**
 * Releases a claim the moment its run ends without finishing the step (docs/scheduler-faults.md):
 * back to pending, fenced by the holder (host, worktree) and the token the run held, so a newer claim
 * is never touched. Returns whether it released anything.
 */
export async function releaseClaim(tx: Tx, plan: string, anchor: string, holder: { host: string | null; worktree: string; token: number }, actor: Actor, reason: string): Promise<boolean> {
  const found = await tx.q<{ n: number }>('SELECT 1 AS n FROM steps WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3', [tx.repo, plan, anchor]);
  if (found.length === 0) return false;
  const { step } = await lockOwner(tx, plan, anchor);
  if ((step.status !== 'claimed' && step.status !== 'in_progress') || step.claimed_by !== holder.worktree || step.claimed_host !== holder.host || step.claim_token !== holder.token) return false;
  await resetStep(tx, plan, anchor, actor, reason);
  return true;
}

/**
 * Reopens a step its run completed with a commit that is not on the epic's branch: the step, its
 * substeps and their items go back to pending and open, fenced by the completing token (as on SQLite).
 */
export async function reopenCompleted(tx: Tx, plan: string, anchor: string, token: number, actor: Actor, reason: string): Promise<boolean> {
  await lockPlan(tx, plan, false);
  const step = (await tx.q<{ status: string; completed_token: number | null; commit_hash: string | null }>(
    'SELECT status, completed_token, commit_hash FROM steps WHERE repo_id = $1 AND plan_path = $2 AND anchor = $3 FOR UPDATE', [tx.repo, plan, anchor]))[0];
  if (!step || step.status !== 'completed' || step.completed_token !== token) return false;
  const family = 'repo_id = $1 AND plan_path = $2 AND (anchor = $3 OR parent_anchor = $3)';
  await tx.q(`UPDATE steps SET status = 'pending', claimed_host = NULL, claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1, claimed_at = NULL,
      lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL, completed_at = NULL, completed_host = NULL, completed_by = NULL, completed_token = NULL,
      commit_hash = NULL, complete_reason = NULL
    WHERE ${family} AND status = 'completed'`, [tx.repo, plan, anchor]);
  await tx.q(`UPDATE checklist_items SET status = 'open', updated_at = $4, updated_by = NULL
    WHERE repo_id = $1 AND plan_path = $2 AND step_anchor IN (SELECT anchor FROM steps WHERE ${family})`, [tx.repo, plan, anchor, tx.now]);
  await tx.q(`UPDATE plans SET status = 'active', updated_at = $3 WHERE repo_id = $1 AND plan_path = $2 AND status = 'done'`, [tx.repo, plan, tx.now]);
  await writeEvent(tx, actor, { entity: 'step', action: 'reopen', planPath: plan, stepAnchor: anchor, from: 'completed', to: 'pending', reason, data: { commit_hash: step.commit_hash, claim_token: token } });
  return true;
}
