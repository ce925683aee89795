import type { EpicSpendRow, SpendPort } from '../shared/spend.ts';
import { SESSION_ROLES_SQL } from '../shared/roleSql.ts';
import type { PgMethods } from './port.ts';

/** What agents have spent (shared/spend.ts): ended sessions only; a run without a reported cost counts its minutes instead. */
export const spendPg: PgMethods<SpendPort> = {
  spendByEpic(epicId) {
    return this.tx.q<EpicSpendRow>(
      `SELECT epic_id, count(*)::int AS runs, COALESCE(sum(cost_usd), 0)::float8 AS usd,
        COALESCE(sum(COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0)), 0)::float8 AS tokens,
        COALESCE(sum(CASE WHEN cost_usd IS NULL THEN greatest(0, round(extract(epoch FROM ended_at - started_at) * 1000)) END), 0)::float8 AS ms
      FROM runs WHERE repo_id = $1 AND epic_id IS NOT NULL ${epicId !== undefined ? 'AND epic_id = $2' : ''} AND ended_at IS NOT NULL AND role IN (${SESSION_ROLES_SQL})
      GROUP BY epic_id ORDER BY epic_id COLLATE "C"`,
      epicId !== undefined ? [this.tx.repo, epicId] : [this.tx.repo],
    );
  },
  async costSince(since) {
    return Number(
      (
        await this.tx.q<{ usd: number }>(
          'SELECT COALESCE(sum(cost_usd), 0)::float8 AS usd FROM runs WHERE repo_id = $1 AND ended_at >= $2 AND cost_usd IS NOT NULL',
          [this.tx.repo, since],
        )
      )[0]?.usd ?? 0,
    );
  },
  async setEpicBudgetRow(id, budget) {
    await this.tx.q(
      'UPDATE epics SET budget_usd = $3, budget_tokens = $4, budget_minutes = $5, updated_at = $6 WHERE repo_id = $1 AND id = $2',
      [this.tx.repo, id, budget.usd, budget.tokens, budget.minutes, this.now],
    );
  },
};
