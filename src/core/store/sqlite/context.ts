import type { ContextView, PreviousRun } from '../epicTypes.ts';
import type { ContextPort, DecisionNote } from '../shared/context.ts';
import type { SqliteMethods } from './port.ts';

/** What a session's context reads (shared/context.ts). */
export const contextSql: SqliteMethods<ContextPort> = {
  heldStep(worktree, epicId) {
    return this.db
      .prepare(
        `SELECT plan_path, anchor FROM steps WHERE claimed_by = ? AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress')
        ${epicId ? 'AND plan_path IN (SELECT plan_path FROM plans WHERE epic_id = @epic)' : ''} ORDER BY claimed_at DESC LIMIT 1`,
      )
      .get(worktree, ...(epicId ? [{ epic: epicId }] : [])) as { plan_path: string; anchor: string } | undefined;
  },
  recentFeedback(epicId) {
    return this.db
      .prepare(
        `SELECT version, feedback, decided_at AS at FROM plan_versions WHERE epic_id = ? AND feedback IS NOT NULL ORDER BY version DESC LIMIT 3`,
      )
      .all(epicId) as { version: number; feedback: string; at: string | null }[];
  },
  recentArtifacts(plan, anchor) {
    return this.db
      .prepare(
        `SELECT recorded_at AS at, kind, summary FROM artifacts WHERE plan_path = ? AND step_anchor = ? ORDER BY id DESC LIMIT 5`,
      )
      .all(plan, anchor) as DecisionNote[];
  },
  epicDecisions(epicId) {
    return this.db
      .prepare(
        `SELECT at, action AS kind, reason AS summary FROM events WHERE epic_id = ? AND reason IS NOT NULL ORDER BY id DESC LIMIT 5`,
      )
      .all(epicId) as DecisionNote[];
  },
  verificationFailures(epicId, plan) {
    return this.db
      .prepare(
        `SELECT command, exit_code, output_tail, created_at, step_anchor FROM verifications
      WHERE verdict != 'pass' AND (epic_id = ? OR plan_path = ?) ORDER BY id DESC LIMIT 3`,
      )
      .all(epicId, plan) as ContextView['verification_failures'][number][];
  },
  previousRun(epicId, role, before) {
    return this.db
      .prepare(
        `SELECT id, role, step_anchor, status, exit_code, outcome_reason, output_tail, ended_at FROM runs
      WHERE epic_id = ? AND role = ? AND status != 'running' AND id < ? ORDER BY id DESC LIMIT 1`,
      )
      .get(epicId, role, before) as PreviousRun | undefined;
  },
};
