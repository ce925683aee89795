import { stepViews } from '../shared/stepViews.ts';
import { findPlan, PLAN_COLUMNS, requirePlan, requireStep, type PlanRow, type StepRow } from './rows.ts';
import type { Database } from './sqlite.ts';
import type { EventQuery, EventView, ItemView, PlanView, StepStatus, StepView } from '../types.ts';

/** Every plan (or one) with its step tree, items, deps, blockers and progress. */
export function showPlans(db: Database, now: Date, plan?: string): PlanView[] {
  const rows = plan ? [requirePlan(db, plan)] : (db.prepare(`SELECT ${PLAN_COLUMNS} FROM plans ORDER BY created_at, plan_path`).all() as PlanRow[]);
  return rows.map((row) => planView(db, now, row));
}

/** One step (or substep) with its substeps, reading only their rows: what `show PLAN STEP` prints. */
export function showStep(db: Database, now: Date, plan: string, anchor: string): StepView {
  requireStep(db, plan, anchor);
  const family = 'SELECT anchor FROM steps WHERE plan_path = @plan AND (anchor = @anchor OR parent_anchor = @anchor)';
  const steps = db.prepare(`SELECT * FROM steps WHERE plan_path = @plan AND anchor IN (${family}) ORDER BY step_index`).all({ plan, anchor }) as StepRow[];
  const deps = db.prepare(`SELECT d.step_anchor, d.depends_on, t.status FROM step_deps d JOIN steps t ON t.plan_path = d.plan_path AND t.anchor = d.depends_on
    WHERE d.plan_path = @plan AND d.step_anchor IN (${family}) ORDER BY d.step_anchor, d.depends_on`).all({ plan, anchor }) as { step_anchor: string; depends_on: string; status: StepStatus }[];
  const items = db.prepare(`${ITEMS} WHERE plan_path = @plan AND step_anchor IN (${family}) ${ITEM_ORDER}`).all({ plan, anchor }) as (ItemView & { step_anchor: string })[];
  const status = new Map([...deps.map((d): [string, StepStatus] => [d.depends_on, d.status]), ...steps.map((s): [string, StepStatus] => [s.anchor, s.status])]);
  const { top } = stepViews(now.toISOString(), steps, deps, items, status);
  return top[0] as StepView;
}

const ITEMS = 'SELECT id, step_anchor, kind, ordinal, text, status, updated_by FROM checklist_items';
const ITEM_ORDER = "ORDER BY step_anchor, CASE kind WHEN 'task' THEN 0 WHEN 'test' THEN 1 ELSE 2 END, ordinal";

function planView(db: Database, now: Date, row: PlanRow): PlanView {
  const steps = db.prepare('SELECT * FROM steps WHERE plan_path = ? ORDER BY step_index').all(row.plan_path) as StepRow[];
  const deps = db.prepare('SELECT step_anchor, depends_on FROM step_deps WHERE plan_path = ?').all(row.plan_path) as { step_anchor: string; depends_on: string }[];
  const items = db.prepare(`${ITEMS} WHERE plan_path = ? ${ITEM_ORDER}`).all(row.plan_path) as (ItemView & { step_anchor: string })[];
  const { top, itemsDone } = stepViews(now.toISOString(), steps, deps, items, new Map(steps.map((s) => [s.anchor, s.status])));
  return {
    plan_path: row.plan_path, title: row.title, status: row.status, epic_id: row.epic_id, plan_hash: row.plan_hash,
    created_at: row.created_at, updated_at: row.updated_at, steps: top,
    progress: {
      steps_completed: top.filter((s) => s.status === 'completed').length, steps_total: top.length,
      items_completed: itemsDone, items_total: items.length,
    },
  };
}

/**
 * The plans of an epic, pruned ones included (their versions stay): its events are its own and
 * those of its plans, whose step events (claim, reset, complete, …) carry no epic id.
 */
const EPIC_PLANS = 'SELECT plan_path FROM plans WHERE epic_id = @epic UNION SELECT plan_path FROM plan_versions WHERE epic_id = @epic';

/** The audit log, oldest first, filtered by plan, epic (with its plans' events), step and/or position. */
export function listEvents(db: Database, q: EventQuery = {}): EventView[] {
  const where: string[] = [];
  const args: Record<string, string | number> = {};
  if (q.planPath !== undefined) { where.push('plan_path = @plan'); args.plan = q.planPath; }
  if (q.epicId !== undefined) { where.push(`(epic_id = @epic OR plan_path IN (${EPIC_PLANS}))`); args.epic = q.epicId; }
  if (q.stepAnchor !== undefined) { where.push('step_anchor = @step'); args.step = q.stepAnchor; }
  if (q.afterId !== undefined) { where.push('id > @after'); args.after = q.afterId; }
  const limit = q.limit ?? 1000;
  const filter = where.length ? 'WHERE ' + where.join(' AND ') : '';
  const n = Math.max(1, Math.floor(limit));
  // Paging forward from an id takes the oldest events after it; otherwise the newest N, oldest first.
  const sql = q.afterId !== undefined
    ? `SELECT * FROM events ${filter} ORDER BY id LIMIT ${n}`
    : `SELECT * FROM (SELECT * FROM events ${filter} ORDER BY id DESC LIMIT ${n}) ORDER BY id`;
  const rows = db.prepare(sql).all(args) as (Omit<EventView, 'data'> & { data: string | null })[];
  // A plan that never existed is a typo; a pruned one still has its history.
  if (rows.length === 0 && q.planPath !== undefined && !findPlan(db, q.planPath)) requirePlan(db, q.planPath);
  return rows.map((e) => ({ ...e, data: e.data === null ? null : JSON.parse(e.data) as unknown }));
}
