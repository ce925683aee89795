import { iso } from '../../clock.ts';
import { portOver, type StepPort } from '../shared/port.ts';
import { claimsSql } from './claims.ts';
import { completeSql } from './complete.ts';
import { filesClaimSql } from './filesClaim.ts';
import { initPlanSql } from './initPlan.ts';
import { itemsSql } from './items.ts';
import type { SqliteMethods, SqliteState } from './port.ts';
import { queriesSql } from './queries.ts';
import { readinessSql } from './readiness.ts';
import { rowsSql } from './rows.ts';
import type { SqlConnection } from './sqlite.ts';

/** The step commands' methods (StepPort): all the step commands' bundle links (docs/cli-cost.md, "The step store"). */
export const STEP_METHODS: SqliteMethods<StepPort> = {
  ...rowsSql,
  ...readinessSql,
  ...claimsSql,
  ...completeSql,
  ...itemsSql,
  ...initPlanSql,
  ...queriesSql,
  ...filesClaimSql,
};

/** The port of one SQLite transaction of a step command (StepStore). */
export function sqliteStepPort(db: SqlConnection, now: Date): StepPort {
  return portOver<StepPort, SqliteState>(STEP_METHODS, { db, now: iso(now), host: null });
}
