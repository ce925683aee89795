import type { InitPlanPort, KeptItem } from '../shared/initPlan.ts';
import type { StepRow } from './rows.ts';
import type { SqliteMethods } from './port.ts';

/** Initialising a plan (shared/initPlan.ts): a prepared statement run per row. */
export const initPlanSql: SqliteMethods<InitPlanPort> = {
  setPlanStatus(plan, status) {
    this.db.prepare('UPDATE plans SET status = ?, updated_at = ? WHERE plan_path = ?').run(status, this.now, plan);
  },
  linkPlanToEpic(plan, epicId) {
    this.db.prepare('UPDATE plans SET epic_id = ?, updated_at = ? WHERE plan_path = ?').run(epicId, this.now, plan);
  },
  writePlan(source, hash, structure, epicId, existing) {
    if (existing) {
      this.db
        .prepare(
          'UPDATE plans SET plan_hash = ?, title = ?, epic_id = COALESCE(?, epic_id), updated_at = ? WHERE plan_path = ?',
        )
        .run(hash, source.plan().title, epicId, this.now, source.planPath);
    } else {
      this.db
        .prepare(
          'INSERT INTO plans (plan_path, epic_id, plan_hash, title, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        .run(source.planPath, epicId, hash, source.plan().title, 'active', this.now, this.now);
    }
    // The file's bytes go with the structure they have (docs/cli-cost.md); none known, none kept.
    const read = source.bytes();
    const bytes = read === undefined ? null : Buffer.from(read);
    this.db
      .prepare(
        'INSERT INTO plan_files (plan_path, source, structure) VALUES (?, ?, ?) ON CONFLICT (plan_path) DO UPDATE SET source = excluded.source, structure = excluded.structure',
      )
      .run(source.planPath, bytes, structure);
  },
  oldPlanRows(plan) {
    return {
      steps: this.db.prepare('SELECT * FROM steps WHERE plan_path = ?').all(plan) as StepRow[],
      items: this.db
        .prepare(
          'SELECT step_anchor, kind, text, status, updated_at, updated_by FROM checklist_items WHERE plan_path = ? ORDER BY id',
        )
        .all(plan) as KeptItem[],
    };
  },
  clearPlanLinks(plan) {
    this.db.prepare('DELETE FROM checklist_items WHERE plan_path = ?').run(plan);
    this.db.prepare('DELETE FROM step_deps WHERE plan_path = ?').run(plan);
    this.db.prepare('UPDATE steps SET parent_anchor = NULL WHERE plan_path = ?').run(plan);
  },
  removeSteps(plan, anchors) {
    const remove = this.db.prepare('DELETE FROM steps WHERE plan_path = ? AND anchor = ?');
    for (const anchor of anchors) remove.run(plan, anchor);
  },
  insertSteps(plan, steps, files) {
    const insert = this.db.prepare(
      `INSERT INTO steps (plan_path, anchor, step_index, number, title, status, files) VALUES (?, ?, ?, ?, ?, 'pending', ?)`,
    );
    for (const s of steps) insert.run(plan, s.anchor, s.stepIndex, s.number, s.title, files.get(s.anchor) ?? null);
  },
  refreshSteps(plan, steps, files) {
    const refresh = this.db.prepare(
      'UPDATE steps SET step_index = ?, number = ?, title = ?, files = ? WHERE plan_path = ? AND anchor = ?',
    );
    for (const s of steps) refresh.run(s.stepIndex, s.number, s.title, files.get(s.anchor) ?? null, plan, s.anchor);
  },
  releaseSteps(plan, anchors) {
    const release = this.db
      .prepare(`UPDATE steps SET status = 'pending', claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1,
      claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL, completed_at = NULL, completed_by = NULL,
      completed_token = NULL, commit_hash = NULL, complete_reason = NULL WHERE plan_path = ? AND anchor = ?`);
    for (const anchor of anchors) release.run(plan, anchor);
  },
  setParents(plan, children) {
    const parent = this.db.prepare('UPDATE steps SET parent_anchor = ? WHERE plan_path = ? AND anchor = ?');
    for (const s of children) parent.run(s.parentAnchor, plan, s.anchor);
  },
  insertDeps(plan, deps) {
    const dep = this.db.prepare('INSERT INTO step_deps (plan_path, step_anchor, depends_on) VALUES (?, ?, ?)');
    for (const [anchor, on] of deps) dep.run(plan, anchor, on);
  },
  insertItems(plan, items) {
    const item = this.db.prepare(
      'INSERT INTO checklist_items (plan_path, step_anchor, kind, ordinal, text, status, updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    for (const i of items) item.run(plan, i.anchor, i.kind, i.ordinal, i.text, i.status, i.updatedAt, i.updatedBy);
  },
};
