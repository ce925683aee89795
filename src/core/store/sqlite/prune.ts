import type { PrunePort } from '../shared/prune.ts';
import { foreignKeyViolations, PLAN_CHILD_TABLES } from './maintenance.ts';
import type { SqliteMethods } from './port.ts';
import type { SqlConnection } from './sqlite.ts';

/** Pruning plans (shared/prune.ts), and the rows a file written without foreign keys may have left dangling. */
export const pruneSql: SqliteMethods<PrunePort> = {
  planPaths() {
    return this.db.prepare('SELECT plan_path FROM plans ORDER BY plan_path').pluck().all() as string[];
  },
  planStepCounts(plan) {
    return this.db
      .prepare(
        `SELECT COUNT(*) AS steps, COALESCE(SUM(status = 'completed'), 0) AS completed FROM steps WHERE plan_path = ?`,
      )
      .get(plan) as { steps: number; completed: number };
  },
  deletePlan(plan) {
    this.db.prepare('DELETE FROM plans WHERE plan_path = ?').run(plan);
  },
  countDanglingRows() {
    return danglingRows(this.db).length;
  },
  removeDanglingRows() {
    let removed = 0;
    for (let pass = 0; pass < 4; pass++) {
      const rows = danglingRows(this.db);
      if (rows.length === 0) break;
      for (const r of rows) removed += this.db.prepare(`DELETE FROM ${r.table} WHERE rowid = ?`).run(r.rowid).changes;
    }
    return removed;
  },
};

function danglingRows(db: SqlConnection): { table: string; rowid: number }[] {
  return foreignKeyViolations(db)
    .filter((v) => PLAN_CHILD_TABLES.includes(v.table) && v.rowid !== null)
    .map((v) => ({ table: v.table, rowid: v.rowid as number }));
}
