import { iso } from '../../clock.ts';
import { portOver, type StepPort } from '../shared/port.ts';
import { stepOperations } from '../shared/stepOperations.ts';
import type { StepStore } from '../store.ts';
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
import { SqliteTransactions, type SqliteStoreOptions } from './transactions.ts';

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

/**
 * The step commands' SQLite store (StepStore): the step operations' table over the same transactions
 * as sqliteStore's, without the rest, so the step commands' bundle links only what they run
 * (docs/cli-cost.md, "The step store").
 */
export function sqliteStepStore(path: string, options: SqliteStoreOptions = {}): StepStore {
  const sqlite = new SqliteTransactions(path, options, sqliteStepPort);
  return { ...stepOperations(sqlite), describe: () => sqlite.describe(), close: () => sqlite.close() };
}
