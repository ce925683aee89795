import type { CommitTargetPort, HeldStep } from '../shared/commitTarget.ts';
import type { PgMethods } from './port.ts';

/** The commit target's queries (shared/commitTarget.ts): a worktree's held steps are those of this host. */
export const commitTargetPg: PgMethods<CommitTargetPort> = {
  async plansWithStep(anchor) {
    return (
      await this.tx.q<{ plan_path: string }>(
        'SELECT plan_path FROM steps WHERE repo_id = $1 AND anchor = $2 ORDER BY plan_path',
        [this.tx.repo, anchor],
      )
    ).map((r) => r.plan_path);
  },
  heldSteps(q) {
    return this.tx.q<HeldStep>(
      `SELECT s.plan_path, s.anchor,
        EXISTS (SELECT 1 FROM steps c WHERE c.repo_id = s.repo_id AND c.plan_path = s.plan_path AND c.parent_anchor = s.anchor AND c.anchor = $5) AS has_substep
      FROM steps s WHERE s.repo_id = $1 AND s.parent_anchor IS NULL AND s.claimed_by = $2 AND s.claimed_host = $3 AND s.status IN ('claimed', 'in_progress')
        AND (s.claimed_agent IS NULL OR $4::text IS NULL OR s.claimed_agent = $4)
      ORDER BY s.plan_path, s.step_index`,
      [this.tx.repo, q.worktree, this.host, q.agent, q.step ?? null],
    );
  },
};
