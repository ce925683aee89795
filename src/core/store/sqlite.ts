import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { EnvironmentError } from '../errors.ts';

export type Database = BetterSqlite3.Database;
type DatabaseConstructor = typeof BetterSqlite3;

let cached: DatabaseConstructor | undefined;

/**
 * Loads better-sqlite3 only after checking Node-API 10 is available: on older runtimes the
 * native module crashes the process instead of failing cleanly.
 */
export function loadSqlite(): DatabaseConstructor {
  if (cached) return cached;
  const napi = Number(process.versions.napi ?? 0);
  if (!(napi >= 10)) {
    throw new EnvironmentError(
      'runtime_too_old',
      `Springfield needs Node.js >= 22.14 (Node-API 10); this is Node.js ${process.version} with Node-API ${napi || 'unknown'}`,
    );
  }
  const load = typeof require === 'function' ? require : createRequire(import.meta.url);
  cached = load('better-sqlite3') as DatabaseConstructor;
  return cached;
}

interface SqliteLikeError {
  code?: unknown;
  message?: unknown;
}

/** Turns SQLite's environment failures (busy, corrupt, read-only, …) into one clear line. */
export function mapSqliteError(err: unknown, dbPath: string): unknown {
  const e = err as SqliteLikeError;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (!code.startsWith('SQLITE_')) return err;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new EnvironmentError('database_locked', `${dbPath}: database is locked by another process (gave up after the busy timeout)`);
  }
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new EnvironmentError('database_corrupt', `${dbPath}: not a valid Springfield database (${String(e.message)}); run 'springfield doctor'`);
  }
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_PERM')) {
    return new EnvironmentError('database_unavailable', `${dbPath}: cannot open the database for writing (${String(e.message)})`);
  }
  if (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR')) {
    return new EnvironmentError('database_io', `${dbPath}: disk error (${String(e.message)})`);
  }
  return err;
}
