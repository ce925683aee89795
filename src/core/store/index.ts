/**
 * The store's public face: open a store, diagnose one, and the types of its interface. Nothing
 * here names the backends' internals: the SQLite implementation lives in ./sqlite/, the PostgreSQL one
 * in ./postgres/ (loaded lazily, from its own bundle), and nothing outside src/core/store may import
 * either (eslint no-restricted-imports; docs/architecture.md).
 */
import type { Clock } from '../clock.ts';
import type { DoctorInput } from './maintenanceTypes.ts';
import type { Checklist } from './shared/checklist.ts';
import { builtinConnect } from './sqlite/builtinSqlite.ts';
import { diagnoseDatabase } from './sqlite/doctor.ts';
import { sqliteStore } from './sqlite/sqliteStore.ts';
import { sqliteStepStore } from './sqlite/stepStore.ts';
import type { StepStore, Store } from './store.ts';
import { openPostgresLazily } from './postgres/lazy.ts';
import { isDatabaseUrl } from './databaseUrl.ts';

export * from './types.ts';
export * from './epicTypes.ts';
export * from './runTypes.ts';
export * from './maintenanceTypes.ts';
export type * from './store.ts';
export { Checklist, commandFinding } from './shared/checklist.ts';
export { planRoots } from './shared/planRoots.ts';
export { claimElsewhere, claimPlace, type Claimer, type EpicPlace } from './shared/claims.ts';
export { isDatabaseUrl, redactDatabaseUrl } from './databaseUrl.ts';
export { migrateToPostgres, migrateToSqlite, type MigrateResult } from './migrate/migrate.ts';

export interface StoreSettings {
  /** Where the store is: the SQLite database file, or a `postgres://` URL (docs/postgres.md). */
  readonly location: string;
  /** PostgreSQL only: the repository whose rows this store reads and writes, and this machine's host id. */
  readonly repository?: { readonly id: string; readonly source: 'root_commit' | 'configured' };
  readonly host?: string;
  /** When it does not exist yet: create it (writers), or read an empty store (readers; nothing is created). */
  readonly ifMissing?: 'create' | 'empty';
  /** Open it only to read (a database the user may not write can still be read). */
  readonly readOnly?: boolean;
  /** PostgreSQL only: how long to keep trying to reach the server before giving up (default 10 s; SPRINGFIELD_PG_CONNECT_TIMEOUT). */
  readonly connectRetryMs?: number;
  /** How long to wait for another writer before giving up (default 10 s). */
  readonly busyTimeoutMs?: number;
  /** The time operations use (tests pass a fake one). */
  readonly clock?: Clock;
}

/** Opens the store at `settings.location`, migrating an older schema; refuses one written by a newer Springfield. */
export function openStore(settings: StoreSettings): Store {
  if (isDatabaseUrl(settings.location)) return openPostgresLazily(settings);
  return sqliteStore(settings.location, sqliteOptions(settings));
}

/**
 * Opens the store for the step commands only (StepStore), as openStore does: on SQLite a store of
 * those operations alone, so the step commands' bundle links nothing else (docs/cli-cost.md, "The step store").
 */
export function openStepStore(settings: StoreSettings, options: { readonly builtinSqlite?: boolean } = {}): StepStore {
  if (isDatabaseUrl(settings.location)) return openPostgresLazily(settings);
  // The runtime's own SQLite where it has it (docs/architecture.md, "Two SQLite drivers"): only a process that
  // opens the database through no other driver may ask for it.
  const connect = options.builtinSqlite ? builtinConnect() : undefined;
  return sqliteStepStore(settings.location, { ...sqliteOptions(settings), ...(connect ? { connect } : {}) });
}

/** The settings SQLite takes (the rest are PostgreSQL's). */
function sqliteOptions(
  settings: StoreSettings,
): Omit<StoreSettings, 'location' | 'repository' | 'host' | 'connectRetryMs'> {
  const { location: _l, repository: _r, host: _h, connectRetryMs: _c, ...options } = settings;
  return options;
}

/** Diagnoses a PostgreSQL store into `list`, read-only (node-postgres loaded only here and by the store). */
export async function diagnoseRemoteStore(
  input: import('./postgres/doctor.ts').RemoteDoctorInput,
  list: Checklist,
): Promise<void> {
  const { diagnosePostgres } = await import('./postgres/entry.ts');
  await diagnosePostgres(input, list);
}

/** Diagnoses the store at `input.dbPath` into `list`, read-only, even when it could not be opened as a store. */
export function diagnoseStore(input: DoctorInput, list: Checklist): void {
  diagnoseDatabase(input, list);
}
