import type { ContextView, PreviousRun } from '../epicTypes.ts';
import type { ContextPort, DecisionNote } from '../shared/context.ts';
import type { PgMethods } from './port.ts';

/** What a session's context reads (shared/context.ts); the held step is this host's worktree's. */
export const contextPg: PgMethods<ContextPort> = {
  async heldStep(worktree, epicId) {
    return (
      await this.tx.q<{ plan_path: string; anchor: string }>(
        `SELECT plan_path, anchor FROM steps WHERE repo_id = $1 AND claimed_by = $2 AND claimed_host = $3
        AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress')
        ${epicId ? 'AND plan_path IN (SELECT plan_path FROM plans WHERE repo_id = $1 AND epic_id = $4)' : ''} ORDER BY claimed_at DESC LIMIT 1`,
        [this.tx.repo, worktree, this.host, ...(epicId ? [epicId] : [])],
      )
    )[0];
  },
  recentFeedback(epicId) {
    return this.tx.q<ContextView['feedback'][number]>(
      `SELECT version, feedback, decided_at AS at FROM plan_versions
      WHERE repo_id = $1 AND epic_id = $2 AND feedback IS NOT NULL ORDER BY version DESC LIMIT 3`,
      [this.tx.repo, epicId],
    );
  },
  recentArtifacts(plan, anchor) {
    return this.tx.q<DecisionNote>(
      'SELECT recorded_at AS at, kind, summary FROM artifacts WHERE repo_id = $1 AND plan_path = $2 AND step_anchor = $3 ORDER BY id DESC LIMIT 5',
      [this.tx.repo, plan, anchor],
    );
  },
  epicDecisions(epicId) {
    return this.tx.q<DecisionNote>(
      `SELECT at, action AS kind, reason AS summary FROM events WHERE repo_id = $1 AND epic_id = $2 AND reason IS NOT NULL ORDER BY id DESC LIMIT 5`,
      [this.tx.repo, epicId],
    );
  },
  verificationFailures(epicId, plan) {
    return this.tx.q<ContextView['verification_failures'][number]>(
      `SELECT command, exit_code, output_tail, created_at, step_anchor FROM verifications
      WHERE repo_id = $1 AND verdict <> 'pass' AND (epic_id = $2 OR plan_path = $3) ORDER BY id DESC LIMIT 3`,
      [this.tx.repo, epicId, plan],
    );
  },
  async previousRun(epicId, role, before) {
    return (
      await this.tx.q<PreviousRun>(
        `SELECT id, role, step_anchor, status, exit_code, outcome_reason, output_tail, ended_at FROM runs
      WHERE repo_id = $1 AND epic_id = $2 AND role = $3 AND status <> 'running' AND id < $4 ORDER BY id DESC LIMIT 1`,
        [this.tx.repo, epicId, role, before],
      )
    )[0];
  },
};
