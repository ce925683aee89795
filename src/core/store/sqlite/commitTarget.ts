import type { CommitTargetPort, HeldStep } from '../shared/commitTarget.ts';
import type { SqliteMethods } from './port.ts';

/** The commit target's queries (shared/commitTarget.ts). */
export const commitTargetSql: SqliteMethods<CommitTargetPort> = {
  plansWithStep(anchor) {
    return this.db
      .prepare('SELECT plan_path FROM steps WHERE anchor = ? ORDER BY plan_path')
      .pluck()
      .all(anchor) as string[];
  },
  heldSteps(q) {
    return this.db
      .prepare(
        `SELECT s.plan_path, s.anchor,
        EXISTS (SELECT 1 FROM steps c WHERE c.plan_path = s.plan_path AND c.parent_anchor = s.anchor AND c.anchor = @step) AS has_substep
      FROM steps s WHERE s.parent_anchor IS NULL AND s.claimed_by = @wt AND s.status IN ('claimed', 'in_progress')
        AND (s.claimed_agent IS NULL OR @agent IS NULL OR s.claimed_agent = @agent)
      ORDER BY s.plan_path, s.step_index`,
      )
      .all({ wt: q.worktree, agent: q.agent, step: q.step ?? null }) as HeldStep[];
  },
};
