import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type BetterSqlite3 from 'better-sqlite3';
import { runtimeTooOld } from '../../../shared/runtime.ts';
import { EnvironmentError } from '../../errors.ts';

/**
 * A prepared statement, as the store uses one: rows as objects, or in `raw` mode as arrays, or in
 * `pluck` mode as their first column. better-sqlite3's statements are these; so are the built-in
 * driver's (builtinSqlite.ts).
 */
export interface SqlStatement {
  /** True when it returns rows (a SELECT, or a statement with RETURNING). */
  readonly reader: boolean;
  pluck(on?: boolean): this;
  raw(on?: boolean): this;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
}

/**
 * One SQLite connection: the part of better-sqlite3's `Database` the store uses, which both drivers
 * implement (docs/architecture.md, "Two SQLite drivers"). No SQL outside src/core/store sees one.
 */
export interface SqlConnection {
  readonly open: boolean;
  readonly inTransaction: boolean;
  prepare(sql: string): SqlStatement;
  exec(sql: string): this;
  /** `PRAGMA source`: its rows, or with `simple` the first column of the first row. */
  pragma(source: string, options?: { simple?: boolean }): unknown;
  /** `fn` as a deferred transaction, rolled back on a throw. */
  transaction<T>(fn: () => T): () => T;
  close(): this;
}

export interface ConnectOptions {
  readonly readonly?: boolean;
  readonly fileMustExist?: boolean;
  /** The busy timeout, in milliseconds. */
  readonly timeout?: number;
}
/** Opens a connection: better-sqlite3's (`connect`), or the built-in driver's for the step commands (builtinSqlite.ts). */
export type Connect = (path: string, options: ConnectOptions) => SqlConnection;

/** better-sqlite3's constructor as the store calls it: `nativeBinding` may be the loaded module as well as its path. */
type SqliteDriver = new (path: string, options?: ConnectOptions & { nativeBinding?: string | object }) => SqlConnection;
type DatabaseConstructor = typeof BetterSqlite3;

/**
 * better-sqlite3, after checking Node-API 10 is available: on older runtimes its native module
 * crashes the process instead of failing cleanly. (The import loads only JavaScript; the native
 * module is loaded by the first connection.)
 */
export function loadSqlite(): DatabaseConstructor & SqliteDriver {
  checkRuntime();
  // Required on first use, not imported: the step commands open the database through the runtime's own
  // SQLite (builtinSqlite.ts) and never run better-sqlite3's JavaScript.
  const loaded: DatabaseConstructor & SqliteDriver = betterSqlite3 ?? createRequire(import.meta.url)('better-sqlite3');
  betterSqlite3 = loaded;
  return loaded;
}

/** The module, with its published types (tests, benches) and as the store calls it. */
let betterSqlite3: (DatabaseConstructor & SqliteDriver) | undefined;

/** Refuses a runtime without Node-API 10 (Node.js before 22.14), before anything is created. */
export function checkRuntime(): void {
  const tooOld = runtimeTooOld(process.version, process.versions.napi);
  if (tooOld !== undefined) throw new EnvironmentError('runtime_too_old', tooOld);
}

/**
 * Opens a connection with the native module loaded from the file named (a CLI call is mostly
 * start-up: this spares better-sqlite3's search and Node's module resolution). Should that file not
 * load, better-sqlite3 searches as usual.
 */
export function connect(path: string, options: ConnectOptions, nativeFile = addonFile()): SqlConnection {
  const Sqlite: SqliteDriver = loadSqlite();
  if (nativeFile === undefined) return new Sqlite(path, options);
  let nativeBinding: object;
  try {
    nativeBinding = loadAddon(nativeFile);
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_DLOPEN_FAILED') throw err;
    return new Sqlite(path, options);
  }
  return new Sqlite(path, { ...options, nativeBinding });
}

const addons = new Map<string, object>();

/** Loads a native module once per process, as `require` would once it had resolved the file. */
function loadAddon(file: string): object {
  let loaded = addons.get(file);
  if (!loaded) {
    const module = { exports: {} };
    // better-sqlite3 reads this once, as the module loads: `file:` URIs let a read-only open of a WAL
    // database in a folder nobody may write fall back to immutable (see open.ts). Plain paths are unaffected.
    const uri = process.env.SQLITE_USE_URI;
    process.env.SQLITE_USE_URI = '1';
    try {
      process.dlopen(module, file);
    } finally {
      if (uri === undefined) delete process.env.SQLITE_USE_URI;
      else process.env.SQLITE_USE_URI = uri;
    }
    loaded = module.exports;
    addons.set(file, loaded);
  }
  return loaded;
}

let addon: string | null | undefined;

/** better-sqlite3's native module for this platform: a local build, else the matching prebuild. */
function addonFile(): string | undefined {
  if (addon === undefined) {
    const pkg = packageDir();
    const target =
      process.platform === 'linux' && isMusl() ? `linuxmusl-${process.arch}` : `${process.platform}-${process.arch}`;
    const candidates = pkg
      ? [join(pkg, 'build', 'Release', 'better_sqlite3.node'), join(pkg, 'prebuilds', `${target}.node`)]
      : [];
    addon = candidates.find((c) => existsSync(c)) ?? null;
  }
  return addon ?? undefined;
}

/** The better-sqlite3 package: beside the bundle (dist/ and node_modules/ are siblings), else resolved. */
function packageDir(): string | undefined {
  const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
  const beside = join(here, '..', 'node_modules', 'better-sqlite3');
  if (existsSync(join(beside, 'package.json'))) return beside;
  try {
    return dirname(createRequire(join(here, 'x.js')).resolve('better-sqlite3/package.json'));
  } catch {
    return undefined;
  }
}

/** musl's dynamic loader is /lib/ld-musl-<arch>.so.1; glibc systems have none. */
function isMusl(): boolean {
  const arch = process.arch === 'x64' ? 'x86_64' : process.arch === 'arm64' ? 'aarch64' : process.arch;
  return existsSync(`/lib/ld-musl-${arch}.so.1`);
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
    return new EnvironmentError(
      'database_locked',
      `${dbPath}: database is locked by another process (gave up after the busy timeout)`,
    );
  }
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new EnvironmentError(
      'database_corrupt',
      `${dbPath}: not a valid Springfield database (${String(e.message)}); run 'springfield doctor'`,
    );
  }
  if (code === 'SQLITE_READONLY_DIRECTORY' || code === 'SQLITE_READONLY_CANTINIT') {
    return new EnvironmentError(
      'database_unavailable',
      `${dbPath}: cannot use the database: SQLite needs to create ${dbPath}-shm beside it and that folder is not writable (${String(e.message)})`,
    );
  }
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_PERM')) {
    return new EnvironmentError(
      'database_unavailable',
      `${dbPath}: cannot open the database for writing (${String(e.message)})`,
    );
  }
  if (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR')) {
    return new EnvironmentError('database_io', `${dbPath}: disk error (${String(e.message)})`);
  }
  return err;
}

const statements = new WeakMap<SqlConnection, Map<string, SqlStatement>>();

/**
 * A prepared statement kept per connection: for reads run many times in one call (the scheduler's
 * snapshot reads a dozen per epic), where compiling the SQL each time cost more than running it.
 */
export function cached(db: SqlConnection, sql: string): SqlStatement {
  let byText = statements.get(db);
  if (!byText) statements.set(db, (byText = new Map()));
  let statement = byText.get(sql);
  if (!statement) byText.set(sql, (statement = db.prepare(sql)));
  return statement;
}
