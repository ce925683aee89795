import type { PlanVersionRow } from '../epicTypes.ts';
import type { PlanVersionsPort } from '../shared/planVersions.ts';
import type { SqliteMethods } from './port.ts';

/** Plan versions (shared/planVersions.ts). */
export const planVersionsSql: SqliteMethods<PlanVersionsPort> = {
  versionedPlanOwner(plan) {
    return this.db.prepare('SELECT epic_id FROM plan_versions WHERE plan_path = ? LIMIT 1').pluck().get(plan) as
      string | undefined;
  },
  latestVersion(epicId) {
    return this.db
      .prepare('SELECT * FROM plan_versions WHERE epic_id = ? ORDER BY version DESC LIMIT 1')
      .get(epicId) as PlanVersionRow | undefined;
  },
  listVersions(epicId) {
    return this.db
      .prepare('SELECT * FROM plan_versions WHERE epic_id = ? ORDER BY version')
      .all(epicId) as PlanVersionRow[];
  },
  proposedVersion(epicId, version) {
    return (
      version !== undefined
        ? this.db.prepare('SELECT * FROM plan_versions WHERE epic_id = ? AND version = ?').get(epicId, version)
        : this.db
            .prepare(
              `SELECT * FROM plan_versions WHERE epic_id = ? AND status = 'proposed' ORDER BY version DESC LIMIT 1`,
            )
            .get(epicId)
    ) as PlanVersionRow | undefined;
  },
  approvedVersion(epicId) {
    return this.db
      .prepare(`SELECT * FROM plan_versions WHERE epic_id = ? AND status = 'approved' ORDER BY version DESC LIMIT 1`)
      .get(epicId) as PlanVersionRow | undefined;
  },
  supersedeProposals(epicId) {
    this.db
      .prepare(
        `UPDATE plan_versions SET status = 'superseded', decided_at = ? WHERE epic_id = ? AND status = 'proposed'`,
      )
      .run(this.now, epicId);
  },
  insertVersion(epicId, plan, version, hash, structure, actor) {
    this.db
      .prepare(
        `INSERT INTO plan_versions (epic_id, plan_path, version, plan_hash, structure, body, status, proposed_by, proposed_agent, created_at)
      VALUES (?, ?, ?, ?, ?, ?, 'proposed', ?, ?, ?)`,
      )
      .run(epicId, plan.planPath, version, hash, structure, plan.body, actor.worktree, actor.agent, this.now);
  },
  bumpPlanIteration(epicId) {
    this.db
      .prepare('UPDATE epics SET plan_iteration = plan_iteration + 1, updated_at = ? WHERE id = ?')
      .run(this.now, epicId);
  },
  decideVersion(id, status, by, feedback) {
    this.db
      .prepare(
        'UPDATE plan_versions SET status = ?, feedback = COALESCE(?, feedback), decided_by = ?, decided_at = ? WHERE id = ?',
      )
      .run(status, feedback, by, this.now, id);
  },
  livePlanPath(epicId) {
    return (
      (this.db
        .prepare('SELECT plan_path FROM plans WHERE epic_id = ? ORDER BY updated_at DESC LIMIT 1')
        .pluck()
        .get(epicId) as string | undefined) ?? null
    );
  },
  openStepAnchors(plan) {
    return this.db
      .prepare(`SELECT anchor FROM steps WHERE plan_path = ? AND status != 'completed' ORDER BY step_index`)
      .pluck()
      .all(plan) as string[];
  },
};
