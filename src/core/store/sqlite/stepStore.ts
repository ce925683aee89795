import { stepOperations } from '../shared/stepOperations.ts';
import type { StepStore } from '../store.ts';
import { sqliteStepPort } from './stepPort.ts';
import { SqliteTransactions, type SqliteStoreOptions } from './transactions.ts';

/**
 * The step commands' SQLite store (StepStore): the step operations' table over the same transactions
 * as sqliteStore's, without the rest, so the step commands' bundle links only what they run
 * (docs/cli-cost.md, "The step store").
 */
export function sqliteStepStore(path: string, options: SqliteStoreOptions = {}): StepStore {
  const sqlite = new SqliteTransactions(path, options, sqliteStepPort);
  return { ...stepOperations(sqlite), describe: () => sqlite.describe(), close: () => sqlite.close() };
}
