import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { EnvironmentError } from '../../errors.ts';
import { migrations, SCHEMA_VERSION } from './migrations.ts';
import {
  checkRuntime,
  connect,
  mapSqliteError,
  type Connect,
  type SqlConnection,
  type SqlStatement,
} from './sqlite.ts';

export interface OpenOptions {
  /** Milliseconds to wait for a lock before giving up: at least 5000, so agents that write at once wait rather than fail. */
  readonly busyTimeoutMs?: number;
  /** When the file is missing: create it (writers) or use an empty in-memory store (readers). */
  readonly ifMissing?: 'create' | 'empty';
  /** Open read-only (commands that only read): a database the user may not write can still be read. */
  readonly readOnly?: boolean;
  /** How to open a connection: better-sqlite3 unless told (the step commands pass the built-in driver, builtinSqlite.ts). */
  readonly connect?: Connect;
}

/**
 * Opens (creating if asked) the shared database with the pragmas the store relies on (WAL,
 * synchronous FULL, foreign keys), refusing a database written by a newer Springfield without touching it.
 */
export function openDatabase(path: string, options: OpenOptions = {}): SqlConnection {
  checkRuntime(); // refuses an old runtime before anything is created
  const missing = path !== ':memory:' && !existsSync(path);
  if (missing && options.ifMissing === 'empty') return openDatabase(':memory:', { ...options, readOnly: false });
  if (options.readOnly && !missing) {
    const db = openReadOnly(path, options.busyTimeoutMs ?? 10_000, options.connect ?? connect);
    // An older schema needs a migration, which is a write: the writable open does it (or says why it cannot).
    if (db) return db;
  }
  if (missing) mkdirSync(dirname(path), { recursive: true });
  let db: SqlConnection | undefined;
  try {
    db = (options.connect ?? connect)(path, { timeout: options.busyTimeoutMs ?? 10_000 });
    const version = Number(db.pragma('user_version', { simple: true }));
    if (version > SCHEMA_VERSION) throw tooNew(path, version);
    if (path !== ':memory:') {
      const mode = String(db.pragma('journal_mode = WAL', { simple: true }));
      if (mode.toLowerCase() !== 'wal') {
        throw new EnvironmentError(
          'wal_unavailable',
          `${path}: could not switch the database to WAL mode (got '${mode}')`,
        );
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

/**
 * A read-only connection, or null when the schema is older than this program's (it needs migrating).
 * SQLite reads a WAL database only where it can create the -shm index beside it; in a folder the user
 * cannot write (a read-only mount, someone else's checkout) with no writer (no -wal file), the file is
 * read as immutable instead.
 */
function openReadOnly(path: string, timeout: number, open: Connect): SqlConnection | null {
  let db: SqlConnection | undefined;
  try {
    try {
      db = open(path, { readonly: true, fileMustExist: true, timeout });
      db.pragma('schema_version');
    } catch (err) {
      db?.close();
      db = undefined;
      const code = String((err as { code?: unknown }).code ?? '');
      if (!(code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN')) || existsSync(`${path}-wal`))
        throw err;
      db = open(`file:${encodeURI(path).replace(/[?#]/g, encodeURIComponent)}?immutable=1`, {
        readonly: true,
        fileMustExist: true,
        timeout,
      });
    }
    const version = Number(db.pragma('user_version', { simple: true }));
    if (version > SCHEMA_VERSION) throw tooNew(path, version);
    if (version < SCHEMA_VERSION) {
      db.close();
      return null;
    }
    cacheStatements(db);
    return db;
  } catch (err) {
    db?.close();
    throw mapSqliteError(err, path);
  }
}

function tooNew(path: string, version: number): EnvironmentError {
  return new EnvironmentError(
    'schema_too_new',
    `${path}: database schema version ${version} is newer than this Springfield supports (${SCHEMA_VERSION}); upgrade Springfield — the database was not modified`,
  );
}

/** Distinct SQL texts kept prepared per connection; past this the cache starts over. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Makes `db.prepare` return the already-compiled statement for SQL it has seen, so a claim does not
 * recompile its queries inside the write lock. A reused statement comes back in its default modes
 * (no raw or pluck), exactly as a fresh one would; so a statement kept with a mode set must
 * be used before the same SQL is prepared again. No caller iterates a statement lazily.
 */
function cacheStatements(db: SqlConnection): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, SqlStatement>();
  db.prepare = (sql: string): SqlStatement => {
    const known = cache.get(sql);
    if (known) {
      if (known.reader) known.raw(false).pluck(false);
      return known;
    }
    const statement = prepare(sql);
    if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
    cache.set(sql, statement);
    return statement;
  };
}

/** Applies pending migrations in one IMMEDIATE transaction; safe when several processes race. */
function migrate(db: SqlConnection): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    const current = Number(db.pragma('user_version', { simple: true }));
    const all = migrations();
    for (let v = current; v < SCHEMA_VERSION; v++) db.exec(all[v] ?? '');
    if (current < SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
    db.exec('COMMIT');
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/** Runs `fn` inside BEGIN IMMEDIATE … COMMIT, rolling back on any throw. */
export function writeTransaction<T>(db: SqlConnection, fn: () => T): T {
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

/** Runs `fn` inside BEGIN IMMEDIATE and always rolls back: the exact checks of a write, nothing written. */
export function rolledBackTransaction<T>(db: SqlConnection, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    return fn();
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK');
  }
}
