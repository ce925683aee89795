import type { PruneResult } from '../maintenanceTypes.ts';
import { findOrphanedPlans, foreignKeyViolations, PLAN_CHILD_TABLES } from './maintenance.ts';
import { findPlan, writeEvent } from './rows.ts';
import type { Database } from './sqlite.ts';
import type { Actor } from '../types.ts';

/**
 * Removes plans whose file is in none of `roots`, with their steps, dependencies, items and
 * artifacts (the foreign keys cascade), plus rows left dangling; events stay. Run it inside a
 * write transaction, or with `dryRun` under a read.
 */
export function prunePlans(db: Database, now: Date, actor: Actor | null, roots: readonly string[], dryRun: boolean): PruneResult {
  const orphans = findOrphanedPlans(db, roots);
  const dangling = danglingRows(db);
  if (dryRun) return { pruned: orphans, dry_run: true, dangling_rows: dangling.length };
  const at = now.toISOString();
  for (const plan of orphans) {
    const row = findPlan(db, plan);
    if (!row) continue;
    const counts = db.prepare(`SELECT COUNT(*) AS steps, COALESCE(SUM(status = 'completed'), 0) AS completed FROM steps WHERE plan_path = ?`).get(plan) as { steps: number; completed: number };
    db.prepare('DELETE FROM plans WHERE plan_path = ?').run(plan);
    writeEvent(db, at, actor, {
      entity: 'plan', action: 'prune', planPath: plan, epicId: row.epic_id, from: row.status, to: null,
      reason: 'plan file is in no worktree', data: { steps: counts.steps, steps_completed: counts.completed, plan_hash: row.plan_hash },
    });
  }
  let removed = 0;
  for (let pass = 0; pass < 4; pass++) {
    const rows = danglingRows(db);
    if (rows.length === 0) break;
    for (const r of rows) removed += db.prepare(`DELETE FROM ${r.table} WHERE rowid = ?`).run(r.rowid).changes;
  }
  if (removed > 0) writeEvent(db, at, actor, { entity: 'store', action: 'prune', reason: 'removed rows whose parent plan or step is gone', data: { dangling_rows: removed } });
  return { pruned: orphans, dry_run: false, dangling_rows: removed };
}

function danglingRows(db: Database): { table: string; rowid: number }[] {
  return foreignKeyViolations(db)
    .filter((v) => PLAN_CHILD_TABLES.includes(v.table) && v.rowid !== null)
    .map((v) => ({ table: v.table, rowid: v.rowid as number }));
}
