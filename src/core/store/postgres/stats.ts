import {
  STATS_EPIC_ACTIONS,
  type StatsEventRow,
  type StatsPort,
  type StatsRunRow,
  type StatsStepRow,
} from '../shared/stats.ts';
import { SESSION_ROLES_SQL } from '../shared/roleSql.ts';
import type { PgMethods } from './port.ts';

const ACTIONS_SQL = STATS_EPIC_ACTIONS.map((a) => `'${a}'`).join(', ');

/** What `springfield stats` reads (shared/stats.ts). */
export const statsPg: PgMethods<StatsPort> = {
  async statsRuns(since) {
    const rows = await this.tx.q<StatsRunRow & { command: unknown }>(
      `SELECT id, epic_id, plan_path, step_anchor, role, iteration, command, status, started_at, ended_at,
        cost_usd, input_tokens, output_tokens
      FROM runs WHERE repo_id = $1 AND epic_id IS NOT NULL AND ended_at IS NOT NULL AND role IN (${SESSION_ROLES_SQL})
        ${since === null ? '' : `AND (ended_at >= $2 OR epic_id IN (SELECT epic_id FROM events WHERE repo_id = $1 AND entity = 'epic' AND action = 'merged' AND at >= $2))`}
      ORDER BY id`,
      since === null ? [this.tx.repo] : [this.tx.repo, since],
    );
    return rows.map((r) => ({ ...r, command: typeof r.command === 'string' ? r.command : JSON.stringify(r.command) }));
  },
  statsEvents() {
    return this.tx.q<StatsEventRow>(
      `SELECT id, at, epic_id, entity, action, agent, step_anchor, reason FROM events
      WHERE repo_id = $1 AND epic_id IS NOT NULL AND ((entity = 'epic' AND action IN (${ACTIONS_SQL})) OR entity = 'route')
      ORDER BY id`,
      [this.tx.repo],
    );
  },
  statsSteps() {
    return this.tx.q<StatsStepRow>(
      `SELECT p.epic_id, s.plan_path, s.anchor, s.title, s.status, s.files,
        (SELECT count(*) FROM checklist_items i JOIN steps c ON c.repo_id = i.repo_id AND c.plan_path = i.plan_path AND c.anchor = i.step_anchor
          WHERE c.repo_id = s.repo_id AND c.plan_path = s.plan_path AND coalesce(c.parent_anchor, c.anchor) = s.anchor)::int AS items
      FROM steps s JOIN plans p ON p.repo_id = s.repo_id AND p.plan_path = s.plan_path
      WHERE s.repo_id = $1 AND p.epic_id IS NOT NULL AND s.parent_anchor IS NULL
      ORDER BY p.epic_id COLLATE "C", s.plan_path COLLATE "C", s.step_index`,
      [this.tx.repo],
    );
  },
};
