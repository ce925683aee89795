import { stepViews } from '../shared/stepViews.ts';
import type { EventQuery, EventView, ItemView, PlanView, StepStatus, StepView } from '../types.ts';
import { findPlan, PLAN_COLUMNS, requirePlan, requireStep, STEP_COLUMNS, type PgPlanRow, type PgStepRow } from './rows.ts';
import type { Tx } from './session.ts';

/** Every plan of the repository (or one) with its step tree, items, deps, blockers and progress. */
export async function showPlans(tx: Tx, plan?: string): Promise<PlanView[]> {
  const rows = plan ? [await requirePlan(tx, plan)] : await tx.q<PgPlanRow>(`SELECT ${PLAN_COLUMNS} FROM plans WHERE repo_id = $1 ORDER BY created_at, plan_path`, [tx.repo]);
  const out: PlanView[] = [];
  for (const row of rows) out.push(await planView(tx, row));
  return out;
}

async function planView(tx: Tx, row: PgPlanRow): Promise<PlanView> {
  const P = [tx.repo, row.plan_path];
  const steps = await tx.q<PgStepRow>(`SELECT ${STEP_COLUMNS} FROM steps WHERE repo_id = $1 AND plan_path = $2 ORDER BY step_index`, P);
  const deps = await tx.q<{ step_anchor: string; depends_on: string }>('SELECT step_anchor, depends_on FROM step_deps WHERE repo_id = $1 AND plan_path = $2 ORDER BY step_anchor, depends_on', P);
  const items = await tx.q<ItemView & { step_anchor: string }>(`SELECT id, step_anchor, kind, ordinal, text, status, updated_by FROM checklist_items WHERE repo_id = $1 AND plan_path = $2
    ORDER BY step_anchor, CASE kind WHEN 'task' THEN 0 WHEN 'test' THEN 1 ELSE 2 END, ordinal`, P);
  const { top, itemsDone } = stepViews(tx.now, steps, deps, items, new Map(steps.map((s) => [s.anchor, s.status])));
  return {
    plan_path: row.plan_path, title: row.title, status: row.status, epic_id: row.epic_id, plan_hash: row.plan_hash,
    created_at: row.created_at, updated_at: row.updated_at, steps: top,
    progress: { steps_completed: top.filter((s) => s.status === 'completed').length, steps_total: top.length, items_completed: itemsDone, items_total: items.length },
  };
}

/** One step (or substep) with its substeps, reading only their rows: what `show PLAN STEP` prints. */
export async function showStep(tx: Tx, plan: string, anchor: string): Promise<StepView> {
  await requireStep(tx, plan, anchor);
  const P = [tx.repo, plan, anchor];
  const family = 'SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND (anchor = $3 OR parent_anchor = $3)';
  const steps = await tx.q<PgStepRow>(`SELECT ${STEP_COLUMNS} FROM steps WHERE repo_id = $1 AND plan_path = $2 AND anchor IN (${family}) ORDER BY step_index`, P);
  const deps = await tx.q<{ step_anchor: string; depends_on: string; status: StepStatus }>(`SELECT d.step_anchor, d.depends_on, t.status FROM step_deps d
    JOIN steps t ON t.repo_id = d.repo_id AND t.plan_path = d.plan_path AND t.anchor = d.depends_on
    WHERE d.repo_id = $1 AND d.plan_path = $2 AND d.step_anchor IN (${family}) ORDER BY d.step_anchor, d.depends_on`, P);
  const items = await tx.q<ItemView & { step_anchor: string }>(`SELECT id, step_anchor, kind, ordinal, text, status, updated_by FROM checklist_items
    WHERE repo_id = $1 AND plan_path = $2 AND step_anchor IN (${family}) ORDER BY step_anchor, CASE kind WHEN 'task' THEN 0 WHEN 'test' THEN 1 ELSE 2 END, ordinal`, P);
  const status = new Map([...deps.map((d): [string, StepStatus] => [d.depends_on, d.status]), ...steps.map((s): [string, StepStatus] => [s.anchor, s.status])]);
  return stepViews(tx.now, steps, deps, items, status).top[0] as StepView;
}

const EVENT_COLUMNS = 'id, at, worktree, agent, entity, action, plan_path, step_anchor, epic_id, from_status, to_status, reason, data';

/** The repository's audit log, oldest first, filtered by plan, epic (with its plans' events), step and/or position. */
export async function listEvents(tx: Tx, q: EventQuery = {}): Promise<EventView[]> {
  const where = ['repo_id = $1'];
  const args: unknown[] = [tx.repo];
  const add = (sql: string, v: unknown) => { args.push(v); where.push(sql.replace('?', `$${args.length}`)); };
  if (q.planPath !== undefined) add('plan_path = ?', q.planPath);
  if (q.epicId !== undefined) {
    // Its own events and its plans' (pruned ones included: their versions stay), whose step events carry no epic id.
    args.push(q.epicId);
    const e = `$${args.length}`;
    where.push(`(epic_id = ${e} OR plan_path IN (SELECT plan_path FROM plans WHERE repo_id = $1 AND epic_id = ${e} UNION SELECT plan_path FROM plan_versions WHERE repo_id = $1 AND epic_id = ${e}))`);
  }
  if (q.stepAnchor !== undefined) add('step_anchor = ?', q.stepAnchor);
  if (q.afterId !== undefined) add('id > ?', q.afterId);
  const n = Math.max(1, Math.floor(q.limit ?? 1000));
  const filter = `WHERE ${where.join(' AND ')}`;
  const sql = q.afterId !== undefined
    ? `SELECT ${EVENT_COLUMNS} FROM events ${filter} ORDER BY id LIMIT ${n}`
    : `SELECT * FROM (SELECT ${EVENT_COLUMNS} FROM events ${filter} ORDER BY id DESC LIMIT ${n}) e ORDER BY id`;
  const rows = await tx.q<EventView>(sql, args);
  if (rows.length === 0 && q.planPath !== undefined && !(await findPlan(tx, q.planPath))) await requirePlan(tx, q.planPath);
  return rows;
}
