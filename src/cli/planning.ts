import { SqliteStore } from '../core/store/sqlite/sqliteStore.ts';
import type { CliContext } from './context.ts';

/** The whole store, epics and signals included, for the commands beyond steps (kept out of the entry bundle). */
export function planningStore(ctx: CliContext, mode: 'create' | 'write' | 'read'): SqliteStore {
  return ctx.open(mode, SqliteStore);
}
