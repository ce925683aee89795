import {
  STATS_EPIC_ACTIONS,
  type StatsEventRow,
  type StatsPort,
  type StatsRunRow,
  type StatsStepRow,
} from '../shared/stats.ts';
import { SESSION_ROLES_SQL } from '../shared/roleSql.ts';
import type { SqliteMethods } from './port.ts';

const ACTIONS_SQL = STATS_EPIC_ACTIONS.map((a) => `'${a}'`).join(', ');

/** What `springfield stats` reads (shared/stats.ts). */
export const statsSql: SqliteMethods<StatsPort> = {
  statsRuns(since) {
    return this.db
      .prepare(
        `SELECT id, epic_id, plan_path, step_anchor, role, iteration, command, status, started_at, ended_at,
          cost_usd, input_tokens, output_tokens
        FROM runs WHERE epic_id IS NOT NULL AND ended_at IS NOT NULL AND role IN (${SESSION_ROLES_SQL})
          ${since === null ? '' : `AND (ended_at >= ? OR epic_id IN (SELECT epic_id FROM events WHERE entity = 'epic' AND action = 'merged' AND at >= ?))`}
        ORDER BY id`,
      )
      .all(...(since === null ? [] : [since, since])) as StatsRunRow[];
  },
  statsEvents() {
    return this.db
      .prepare(
        `SELECT id, at, epic_id, entity, action, agent, step_anchor, reason FROM events
        WHERE epic_id IS NOT NULL AND ((entity = 'epic' AND action IN (${ACTIONS_SQL})) OR entity = 'route')
        ORDER BY id`,
      )
      .all() as StatsEventRow[];
  },
  statsSteps() {
    return this.db
      .prepare(
        `SELECT p.epic_id, s.plan_path, s.anchor, s.title, s.status, s.files,
          (SELECT COUNT(*) FROM checklist_items i JOIN steps c ON c.plan_path = i.plan_path AND c.anchor = i.step_anchor
            WHERE c.plan_path = s.plan_path AND coalesce(c.parent_anchor, c.anchor) = s.anchor) AS items
        FROM steps s JOIN plans p ON p.plan_path = s.plan_path
        WHERE p.epic_id IS NOT NULL AND s.parent_anchor IS NULL
        ORDER BY p.epic_id, s.plan_path, s.step_index`,
      )
      .all() as StatsStepRow[];
  },
};
