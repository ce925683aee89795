import type { ItemOfStep, QueriesPort } from '../shared/queries.ts';
import type { EventView, StepStatus } from '../types.ts';
import { PLAN_COLUMNS, type PlanRow, type StepRow } from './rows.ts';
import type { SqliteMethods } from './port.ts';

const ITEMS = 'SELECT id, step_anchor, kind, ordinal, text, status, updated_by FROM checklist_items';
const ITEM_ORDER = "ORDER BY step_anchor, CASE kind WHEN 'task' THEN 0 WHEN 'test' THEN 1 ELSE 2 END, ordinal";

/**
 * The plans of an epic, pruned ones included (their versions stay): its events are its own and
 * those of its plans, whose step events (claim, reset, complete, …) carry no epic id.
 */
const EPIC_PLANS =
  'SELECT plan_path FROM plans WHERE epic_id = @epic UNION SELECT plan_path FROM plan_versions WHERE epic_id = @epic';

/** What the read commands show (shared/queries.ts). */
export const queriesSql: SqliteMethods<QueriesPort> = {
  listPlans() {
    return this.db.prepare(`SELECT ${PLAN_COLUMNS} FROM plans ORDER BY created_at, plan_path`).all() as PlanRow[];
  },
  planContents(plan) {
    return {
      steps: this.db.prepare('SELECT * FROM steps WHERE plan_path = ? ORDER BY step_index').all(plan) as StepRow[],
      deps: this.db.prepare('SELECT step_anchor, depends_on FROM step_deps WHERE plan_path = ?').all(plan) as {
        step_anchor: string;
        depends_on: string;
      }[],
      items: this.db.prepare(`${ITEMS} WHERE plan_path = ? ${ITEM_ORDER}`).all(plan) as ItemOfStep[],
    };
  },
  stepFamily(plan, anchor) {
    const family = 'SELECT anchor FROM steps WHERE plan_path = @plan AND (anchor = @anchor OR parent_anchor = @anchor)';
    return {
      steps: this.db
        .prepare(`SELECT * FROM steps WHERE plan_path = @plan AND anchor IN (${family}) ORDER BY step_index`)
        .all({ plan, anchor }) as StepRow[],
      deps: this.db
        .prepare(
          `SELECT d.step_anchor, d.depends_on, t.status FROM step_deps d JOIN steps t ON t.plan_path = d.plan_path AND t.anchor = d.depends_on
        WHERE d.plan_path = @plan AND d.step_anchor IN (${family}) ORDER BY d.step_anchor, d.depends_on`,
        )
        .all({ plan, anchor }) as { step_anchor: string; depends_on: string; status: StepStatus }[],
      items: this.db
        .prepare(`${ITEMS} WHERE plan_path = @plan AND step_anchor IN (${family}) ${ITEM_ORDER}`)
        .all({ plan, anchor }) as ItemOfStep[],
    };
  },
  events(q) {
    const where: string[] = [];
    const args: Record<string, string | number> = {};
    if (q.planPath !== undefined) {
      where.push('plan_path = @plan');
      args.plan = q.planPath;
    }
    if (q.epicId !== undefined) {
      where.push(`(epic_id = @epic OR plan_path IN (${EPIC_PLANS}))`);
      args.epic = q.epicId;
    }
    if (q.stepAnchor !== undefined) {
      where.push('step_anchor = @step');
      args.step = q.stepAnchor;
    }
    if (q.afterId !== undefined) {
      where.push('id > @after');
      args.after = q.afterId;
    }
    const filter = where.length ? 'WHERE ' + where.join(' AND ') : '';
    const sql =
      q.afterId !== undefined
        ? `SELECT * FROM events ${filter} ORDER BY id LIMIT ${q.limit}`
        : `SELECT * FROM (SELECT * FROM events ${filter} ORDER BY id DESC LIMIT ${q.limit}) ORDER BY id`;
    const rows = this.db.prepare(sql).all(args) as (Omit<EventView, 'data'> & { data: string | null })[];
    return rows.map((e) => ({ ...e, data: e.data === null ? null : (JSON.parse(e.data) as unknown) }));
  },
};
