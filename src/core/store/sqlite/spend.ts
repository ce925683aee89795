import type { EpicSpendRow, SpendPort } from '../shared/spend.ts';
import { SESSION_ROLES_SQL } from '../shared/roleSql.ts';
import type { SqliteMethods } from './port.ts';

/** What agents have spent (shared/spend.ts): ended sessions only; a run without a reported cost counts its minutes instead. */
export const spendSql: SqliteMethods<SpendPort> = {
  spendByEpic(epicId) {
    return this.db
      .prepare(
        `SELECT epic_id, COUNT(*) AS runs, COALESCE(SUM(cost_usd), 0) AS usd,
        COALESCE(SUM(COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0)), 0) AS tokens,
        COALESCE(SUM(CASE WHEN cost_usd IS NULL THEN MAX(0, ROUND((julianday(ended_at) - julianday(started_at)) * 86400000.0)) END), 0) AS ms
      FROM runs WHERE epic_id IS NOT NULL ${epicId !== undefined ? 'AND epic_id = ?' : ''} AND ended_at IS NOT NULL AND role IN (${SESSION_ROLES_SQL})
      GROUP BY epic_id ORDER BY epic_id`,
      )
      .all(...(epicId !== undefined ? [epicId] : [])) as EpicSpendRow[];
  },
  costSince(since) {
    return Number(
      this.db
        .prepare('SELECT COALESCE(SUM(cost_usd), 0) FROM runs WHERE ended_at >= ? AND cost_usd IS NOT NULL')
        .pluck()
        .get(since),
    );
  },
  setEpicBudgetRow(id, budget) {
    this.db
      .prepare('UPDATE epics SET budget_usd = ?, budget_tokens = ?, budget_minutes = ?, updated_at = ? WHERE id = ?')
      .run(budget.usd, budget.tokens, budget.minutes, this.now, id);
  },
};
