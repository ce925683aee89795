import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { EnvironmentError } from '../errors.ts';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations.ts';
import { connect, loadSqlite, mapSqliteError, type Database } from './sqlite.ts';

export interface OpenOptions {
  /** Milliseconds to wait for a lock before giving up; SPEC §3 wants at least 5000. */
  readonly busyTimeoutMs?: number;
  /** When the file is missing: create it (writers) or use an empty in-memory store (readers). */
  readonly ifMissing?: 'create' | 'empty';
}

/**
 * Opens (creating if asked) the shared database with the pragmas SPEC §3 requires, refusing a
 * database written by a newer Springfield without touching it.
 */
export function openDatabase(path: string, options: OpenOptions = {}): Database {
  loadSqlite(); // refuses an old runtime before anything is created
  const missing = path !== ':memory:' && !existsSync(path);
  if (missing && options.ifMissing === 'empty') return openDatabase(':memory:', options);
  if (missing) mkdirSync(dirname(path), { recursive: true });
  let db: Database | undefined;
  try {
    db = connect(path, { timeout: options.busyTimeoutMs ?? 10_000 });
    const version = Number(db.pragma('user_version', { simple: true }));
    if (version > SCHEMA_VERSION) {
      throw new EnvironmentError(
        'schema_too_new',
        `${path}: database schema version ${version} is newer than this Springfield supports (${SCHEMA_VERSION}); upgrade Springfield — the database was not modified`,
      );
    }
    if (path !== ':memory:') {
      const mode = String(db.pragma('journal_mode = WAL', { simple: true }));
      if (mode.toLowerCase() !== 'wal') {
        throw new EnvironmentError('wal_unavailable', `${path}: could not switch the database to WAL mode (got '${mode}')`);
      }
    }
    db.exec('PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON');
    if (version < SCHEMA_VERSION) migrate(db);
    cacheStatements(db);
    return db;
  } catch (err) {
    db?.close();
    throw mapSqliteError(err, path);
  }
}

/** Distinct SQL texts kept prepared per connection; past this the cache starts over. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Makes `db.prepare` return the already-compiled statement for SQL it has seen, so a claim does not
 * recompile its queries inside the write lock. A reused statement comes back in its default modes
 * (no raw, pluck or expand), exactly as a fresh one would; so a statement kept with a mode set must
 * be used before the same SQL is prepared again. No caller iterates a statement lazily.
 */
function cacheStatements(db: Database): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, ReturnType<Database['prepare']>>();
  db.prepare = ((sql: string) => {
    const known = cache.get(sql);
    if (known) {
      if (known.reader) known.raw(false).pluck(false).expand(false);
      return known;
    }
    const statement = prepare(sql);
    if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
    cache.set(sql, statement);
    return statement;
  }) as Database['prepare'];
}

/** Applies pending migrations in one IMMEDIATE transaction; safe when several processes race. */
function migrate(db: Database): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    const current = Number(db.pragma('user_version', { simple: true }));
    for (let v = current; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v] ?? '');
    if (current < SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
    db.exec('COMMIT');
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/** Runs `fn` inside BEGIN IMMEDIATE … COMMIT, rolling back on any throw. */
export function writeTransaction<T>(db: Database, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}
