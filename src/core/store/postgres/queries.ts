import type { ItemOfStep, QueriesPort } from '../shared/queries.ts';
import type { EventView, StepStatus } from '../types.ts';
import { PLAN_COLUMNS, STEP_COLUMNS, type PgPlanRow, type PgStepRow } from './rows.ts';
import type { PgMethods } from './port.ts';

const ITEMS = 'SELECT id, step_anchor, kind, ordinal, text, status, updated_by FROM checklist_items';
const ITEM_ORDER = "ORDER BY step_anchor, CASE kind WHEN 'task' THEN 0 WHEN 'test' THEN 1 ELSE 2 END, ordinal";
const EVENT_COLUMNS =
  'id, at, worktree, agent, entity, action, plan_path, step_anchor, epic_id, from_status, to_status, reason, data';

/** What the read commands show (shared/queries.ts), of this repository. */
export const queriesPg: PgMethods<QueriesPort> = {
  listPlans() {
    return this.tx.q<PgPlanRow>(`SELECT ${PLAN_COLUMNS} FROM plans WHERE repo_id = $1 ORDER BY created_at, plan_path`, [
      this.tx.repo,
    ]);
  },
  async planContents(plan) {
    const P = [this.tx.repo, plan];
    return {
      steps: await this.tx.q<PgStepRow>(
        `SELECT ${STEP_COLUMNS} FROM steps WHERE repo_id = $1 AND plan_path = $2 ORDER BY step_index`,
        P,
      ),
      deps: await this.tx.q<{ step_anchor: string; depends_on: string }>(
        'SELECT step_anchor, depends_on FROM step_deps WHERE repo_id = $1 AND plan_path = $2 ORDER BY step_anchor, depends_on',
        P,
      ),
      items: await this.tx.q<ItemOfStep>(`${ITEMS} WHERE repo_id = $1 AND plan_path = $2 ${ITEM_ORDER}`, P),
    };
  },
  async stepFamily(plan, anchor) {
    const P = [this.tx.repo, plan, anchor];
    const family =
      'SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND (anchor = $3 OR parent_anchor = $3)';
    return {
      steps: await this.tx.q<PgStepRow>(
        `SELECT ${STEP_COLUMNS} FROM steps WHERE repo_id = $1 AND plan_path = $2 AND anchor IN (${family}) ORDER BY step_index`,
        P,
      ),
      deps: await this.tx.q<{ step_anchor: string; depends_on: string; status: StepStatus }>(
        `SELECT d.step_anchor, d.depends_on, t.status FROM step_deps d
        JOIN steps t ON t.repo_id = d.repo_id AND t.plan_path = d.plan_path AND t.anchor = d.depends_on
        WHERE d.repo_id = $1 AND d.plan_path = $2 AND d.step_anchor IN (${family}) ORDER BY d.step_anchor, d.depends_on`,
        P,
      ),
      items: await this.tx.q<ItemOfStep>(
        `${ITEMS} WHERE repo_id = $1 AND plan_path = $2 AND step_anchor IN (${family}) ${ITEM_ORDER}`,
        P,
      ),
    };
  },
  events(q) {
    const where = ['repo_id = $1'];
    const args: unknown[] = [this.tx.repo];
    const add = (sql: string, v: unknown) => {
      args.push(v);
      where.push(sql.replace('?', `$${args.length}`));
    };
    if (q.planPath !== undefined) add('plan_path = ?', q.planPath);
    if (q.epicId !== undefined) {
      // Its own events and its plans' (pruned ones included: their versions stay), whose step events carry no epic id.
      args.push(q.epicId);
      const e = `$${args.length}`;
      where.push(
        `(epic_id = ${e} OR plan_path IN (SELECT plan_path FROM plans WHERE repo_id = $1 AND epic_id = ${e} UNION SELECT plan_path FROM plan_versions WHERE repo_id = $1 AND epic_id = ${e}))`,
      );
    }
    if (q.stepAnchor !== undefined) add('step_anchor = ?', q.stepAnchor);
    if (q.afterId !== undefined) add('id > ?', q.afterId);
    const filter = `WHERE ${where.join(' AND ')}`;
    const sql =
      q.afterId !== undefined
        ? `SELECT ${EVENT_COLUMNS} FROM events ${filter} ORDER BY id LIMIT ${q.limit}`
        : `SELECT * FROM (SELECT ${EVENT_COLUMNS} FROM events ${filter} ORDER BY id DESC LIMIT ${q.limit}) e ORDER BY id`;
    return this.tx.q<EventView>(sql, args);
  },
};
