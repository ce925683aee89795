import { closeSync, constants, existsSync, linkSync, openSync, renameSync, rmSync } from 'node:fs';
import { EnvironmentError, RefusedError, SpringfieldError } from '../../errors.ts';
import { openDatabase } from '../sqlite/open.ts';
import { SCHEMA_VERSION } from '../sqlite/migrations.ts';
import { writeEvent, type EventInput } from '../sqlite/rows.ts';
import { connect, mapSqliteError, type SqlConnection } from '../sqlite/sqlite.ts';
import type { Actor } from '../types.ts';
import { emptySnapshot, TABLES, type Row, type Snapshot, type TableSpec } from './tables.ts';
import { messageOf } from '../../../shared/errorMessage.ts';

const quoted = (columns: readonly string[]) => columns.map((c) => `"${c}"`).join(', ');

/**
 * Every table of a SQLite state file, read in one read transaction on a read-only connection (the
 * source is never modified). Its schema must be this Springfield's: an older one would need a write.
 */
export function readSqliteSnapshot(path: string): Snapshot {
  if (!existsSync(path))
    throw new RefusedError('nothing_to_migrate', `${path} does not exist: there is no SQLite state to migrate`);
  let db: SqlConnection | undefined;
  try {
    db = connect(path, { readonly: true, fileMustExist: true });
    const version = Number(db.pragma('user_version', { simple: true }));
    if (version !== SCHEMA_VERSION) {
      throw new RefusedError(
        'schema_mismatch',
        `${path}: schema version ${version}, not this Springfield's ${SCHEMA_VERSION}: ${version < SCHEMA_VERSION ? "run any springfield command (e.g. 'springfield show') once to bring it up to date" : 'upgrade Springfield'}; nothing was migrated`,
      );
    }
    const conn = db;
    conn.exec('BEGIN');
    try {
      const out = emptySnapshot();
      for (const t of TABLES)
        out[t.name] = conn
          .prepare(selectSql(t))
          .all()
          .map((r) => parseJson(t, r as Row, path));
      return out;
    } finally {
      conn.exec('COMMIT');
    }
  } catch (err) {
    throw mapSqliteError(err, path);
  } finally {
    db?.close();
  }
}

function selectSql(t: TableSpec): string {
  if (t.name === 'plans')
    return `SELECT ${t.columns.map((c) => (c === 'structure' ? 'f.structure' : `p."${c}"`)).join(', ')} FROM plans p LEFT JOIN plan_files f ON f.plan_path = p.plan_path ORDER BY p.plan_path`;
  return `SELECT ${quoted(t.columns)} FROM ${t.name} ORDER BY ${t.id ? 'id' : quoted(t.key)}`;
}

function parseJson(t: TableSpec, row: Row, path: string): Row {
  for (const c of t.json) {
    const v = row[c];
    if (typeof v !== 'string') continue;
    try {
      row[c] = JSON.parse(v);
    } catch {
      throw new EnvironmentError(
        'database_corrupt',
        `${path}: ${t.name} row ${String(row.id)}: ${c} is not JSON; nothing was migrated`,
      );
    }
  }
  return row;
}

/**
 * Writes `rows` (ids already 1…n) into a new SQLite file `<target>.migrating`, created exclusively
 * (never through a link, never over a file), with this Springfield's schema. Returns the path written.
 */
export function writeSqliteCopy(target: string, rows: Snapshot, progress: (line: string) => void): string {
  const temp = `${target}.migrating`;
  try {
    closeSync(openSync(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o644));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ELOOP')
      throw new RefusedError(
        'target_exists',
        `${temp} exists (another migration, or one that was interrupted): remove it and run migrate again`,
      );
    throw new EnvironmentError('unwritable', `${temp}: cannot create (${messageOf(err)})`);
  }
  let db: SqlConnection | undefined;
  try {
    db = openDatabase(temp, { ifMissing: 'create' });
    const conn = db;
    conn.exec('BEGIN IMMEDIATE; PRAGMA defer_foreign_keys = ON');
    for (const t of TABLES) {
      insertRows(conn, t, rows[t.name]);
      progress(`${t.name}: ${rows[t.name].length} row${rows[t.name].length === 1 ? '' : 's'}`);
    }
    conn.exec('COMMIT');
  } catch (err) {
    db?.close();
    removeCopy(target);
    throw copyFailed(err, temp);
  }
  db.close();
  return temp;
}

function insertRows(db: SqlConnection, t: TableSpec, rows: readonly Row[]): void {
  const columns = t.name === 'plans' ? t.columns.filter((c) => c !== 'structure') : t.columns;
  const insert = db.prepare(`INSERT INTO ${t.name} (${quoted(columns)}) VALUES (${columns.map(() => '?').join(', ')})`);
  const file =
    t.name === 'plans'
      ? db.prepare('INSERT INTO plan_files (plan_path, source, structure) VALUES (?, NULL, ?)')
      : undefined;
  for (const r of rows) {
    insert.run(columns.map((c) => sqliteValue(t.json.includes(c), r[c])));
    file?.run(r.plan_path, r.structure);
  }
}

function sqliteValue(json: boolean, v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (json) return JSON.stringify(v);
  return typeof v === 'boolean' ? Number(v) : v;
}

/**
 * Records the migration on the new file and takes it out of WAL mode (one self-contained file; the
 * store switches it back on its next open), then puts it at `target`: linked, so a file that
 * appeared there meanwhile is never replaced, and the temporary name removed.
 */
export function finishSqliteCopy(target: string, actor: Actor | null, event: EventInput): void {
  const temp = `${target}.migrating`;
  try {
    const db = openDatabase(temp);
    try {
      db.exec('BEGIN IMMEDIATE');
      writeEvent(db, new Date().toISOString(), actor, event);
      db.exec('COMMIT');
      db.pragma('journal_mode = DELETE');
    } finally {
      db.close();
    }
    try {
      linkSync(temp, target);
      rmSync(temp);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST')
        throw new RefusedError(
          'target_exists',
          `${target} appeared while migrating; it was left as it is and the copy removed`,
        );
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
      // A file system without hard links: checked just before, so only a racing creator could lose.
      if (existsSync(target))
        throw new RefusedError(
          'target_exists',
          `${target} appeared while migrating; it was left as it is and the copy removed`,
        );
      renameSync(temp, target);
    }
  } catch (err) {
    removeCopy(target);
    throw copyFailed(err, temp);
  }
}

/** A failure while writing the copy, as one line (SQLite's own errors mapped as the store maps them). */
function copyFailed(err: unknown, temp: string): unknown {
  const mapped = mapSqliteError(err, temp);
  if (mapped instanceof SpringfieldError) return mapped;
  return new EnvironmentError('migrate_failed', `${temp}: writing the copy failed (${messageOf(err)}); it was removed`);
}

/** Removes the temporary copy and its journal files. */
export function removeCopy(target: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${target}.migrating${suffix}`, { force: true });
}
