import { existsSync } from 'node:fs';
import type * as NodeSqlite from 'node:sqlite';
import type { Connect, ConnectOptions, SqlConnection, SqlStatement } from './sqlite.ts';

/**
 * The SQLite built into Node (`node:sqlite`) behind the store's SqlConnection (sqlite.ts), the part of
 * better-sqlite3's API the store uses (docs/architecture.md, "Two SQLite drivers"). A step command is a fresh
 * process: loading better-sqlite3's native module and opening through it cost about 2.5 ms, the
 * built-in one about 0.3 ms (docs/cli-cost.md, "The built-in SQLite"). Only the step commands' bundle
 * asks for it (src/cli/fastPath/stepBundle.ts); a process never holds the same database through both drivers, whose
 * POSIX locks would not see each other's.
 *
 * Undefined when this runtime lacks what the adapter needs (Node 22 before 22.16) or warns that the
 * module is experimental: the caller then uses better-sqlite3.
 */
export function builtinConnect(): Connect | undefined {
  const sqlite = builtinModule();
  return sqlite === undefined ? undefined : (path, options) => new BuiltinDatabase(sqlite, path, options);
}

let loaded: typeof NodeSqlite | null | undefined;

function builtinModule(): typeof NodeSqlite | undefined {
  if (loaded === undefined) loaded = quietLoad();
  return loaded ?? undefined;
}

/** node:sqlite if it loads without a warning and has every method used here; else null. */
function quietLoad(): typeof NodeSqlite | null {
  let warned = false;
  const emit = process.emitWarning;
  process.emitWarning = () => {
    warned = true;
  };
  try {
    const sqlite = process.getBuiltinModule('node:sqlite');
    const statement = sqlite.StatementSync.prototype;
    const complete =
      typeof statement.setReturnArrays === 'function' &&
      typeof statement.iterate === 'function' &&
      typeof statement.setAllowUnknownNamedParameters === 'function' &&
      // An instance's accessor, not the prototype's; one that is never opened costs nothing to ask.
      'isTransaction' in new sqlite.DatabaseSync(':memory:', { open: false });
    return complete && !warned ? sqlite : null;
  } catch {
    return null;
  } finally {
    process.emitWarning = emit;
  }
}

/** better-sqlite3's names for the result codes the store tells apart (src/core/store/sqlite/sqlite.ts, mapSqliteError). */
const PRIMARY: Readonly<Record<number, string>> = {
  1: 'SQLITE_ERROR',
  2: 'SQLITE_INTERNAL',
  3: 'SQLITE_PERM',
  4: 'SQLITE_ABORT',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  9: 'SQLITE_INTERRUPT',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  12: 'SQLITE_NOTFOUND',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  16: 'SQLITE_EMPTY',
  17: 'SQLITE_SCHEMA',
  18: 'SQLITE_TOOBIG',
  19: 'SQLITE_CONSTRAINT',
  20: 'SQLITE_MISMATCH',
  21: 'SQLITE_MISUSE',
  22: 'SQLITE_NOLFS',
  23: 'SQLITE_AUTH',
  24: 'SQLITE_FORMAT',
  25: 'SQLITE_RANGE',
  26: 'SQLITE_NOTADB',
};
const EXTENDED: Readonly<Record<number, string>> = {
  [8 | (5 << 8)]: 'SQLITE_READONLY_CANTINIT',
  [8 | (6 << 8)]: 'SQLITE_READONLY_DIRECTORY',
};

/** An error carrying better-sqlite3's `code` (`SQLITE_BUSY`, …) for node:sqlite's numeric `errcode`. */
class BuiltinSqliteError extends Error {
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.name = 'SqliteError';
    this.code = code;
  }
}

function translated(err: unknown): unknown {
  const errcode = (err as { errcode?: unknown }).errcode;
  if (typeof errcode !== 'number') return err;
  const code = EXTENDED[errcode] ?? PRIMARY[errcode & 0xff] ?? 'SQLITE_ERROR';
  return new BuiltinSqliteError((err as Error).message, code);
}

type Mode = 'rows' | 'raw' | 'pluck';

/** A prepared statement with better-sqlite3's modes: rows as objects, `raw` arrays, or `pluck`ed first columns. */
class BuiltinStatement implements SqlStatement {
  private readonly statement: NodeSqlite.StatementSync;
  private mode: Mode = 'rows';
  private returnsData: boolean | undefined;

  constructor(statement: NodeSqlite.StatementSync) {
    this.statement = statement;
    // better-sqlite3 ignores named parameters the SQL does not use.
    statement.setAllowUnknownNamedParameters(true);
  }

  get reader(): boolean {
    this.returnsData ??= this.statement.columns().length > 0;
    return this.returnsData;
  }

  pluck(on = true): this {
    return this.setMode(on ? 'pluck' : this.mode === 'pluck' ? 'rows' : this.mode);
  }

  raw(on = true): this {
    return this.setMode(on ? 'raw' : this.mode === 'raw' ? 'rows' : this.mode);
  }

  get(...params: unknown[]): unknown {
    try {
      const row = this.statement.get(...inputs(params)) as unknown;
      return this.mode === 'pluck' && row !== undefined ? (row as unknown[])[0] : row;
    } catch (err) {
      throw translated(err);
    }
  }

  all(...params: unknown[]): unknown[] {
    try {
      const rows = this.statement.all(...inputs(params)) as unknown[];
      return this.mode === 'pluck' ? rows.map((row) => (row as unknown[])[0]) : rows;
    } catch (err) {
      throw translated(err);
    }
  }

  *iterate(...params: unknown[]): IterableIterator<unknown> {
    try {
      for (const row of this.statement.iterate(...inputs(params)) as Iterable<unknown>)
        yield this.mode === 'pluck' ? (row as unknown[])[0] : row;
    } catch (err) {
      throw translated(err);
    }
  }

  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint } {
    try {
      const { changes, lastInsertRowid } = this.statement.run(...inputs(params));
      return { changes: Number(changes), lastInsertRowid };
    } catch (err) {
      throw translated(err);
    }
  }

  private setMode(mode: Mode): this {
    if (mode !== this.mode) this.statement.setReturnArrays(mode !== 'rows');
    this.mode = mode;
    return this;
  }
}

/** The store's parameters, as node:sqlite takes them: values, and named ones in an object (better-sqlite3's `@name`). */
function inputs(params: unknown[]): NodeSqlite.SQLInputValue[] {
  return params as NodeSqlite.SQLInputValue[];
}

/** A connection over node:sqlite's DatabaseSync. */
class BuiltinDatabase implements SqlConnection {
  private readonly db: NodeSqlite.DatabaseSync;

  constructor(sqlite: typeof NodeSqlite, path: string, options: ConnectOptions) {
    const memory = path === ':memory:';
    if (options.fileMustExist && !memory && !path.startsWith('file:') && !existsSync(path))
      throw new BuiltinSqliteError(`unable to open database file: ${path}`, 'SQLITE_CANTOPEN');
    try {
      // A `file:` name is a URI (open.ts asks for `?immutable=1` where the -shm file cannot be made).
      this.db = new sqlite.DatabaseSync(path.startsWith('file:') ? new URL(path) : path, {
        readOnly: options.readonly ?? false,
      });
      if (options.timeout !== undefined)
        this.db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(options.timeout))}`);
    } catch (err) {
      throw translated(err);
    }
  }

  get open(): boolean {
    return this.db.isOpen;
  }

  get inTransaction(): boolean {
    return this.db.isOpen && this.db.isTransaction;
  }

  prepare(sql: string): BuiltinStatement {
    try {
      return new BuiltinStatement(this.db.prepare(sql));
    } catch (err) {
      throw translated(err);
    }
  }

  exec(sql: string): this {
    try {
      this.db.exec(sql);
    } catch (err) {
      throw translated(err);
    }
    return this;
  }

  pragma(source: string, options: { simple?: boolean } = {}): unknown {
    const statement = this.prepare(`PRAGMA ${source}`);
    return options.simple ? statement.pluck().get() : statement.all();
  }

  /** better-sqlite3's `transaction(fn)` as the store uses it: a deferred transaction, rolled back on a throw. */
  transaction<T>(fn: () => T): () => T {
    return (): T => {
      this.exec('BEGIN');
      try {
        const result = fn();
        this.exec('COMMIT');
        return result;
      } catch (err) {
        if (this.inTransaction) this.exec('ROLLBACK');
        throw err;
      }
    };
  }

  close(): this {
    if (this.db.isOpen) this.db.close();
    return this;
  }
}
