import type { SqlConnection } from './sqlite.ts';
import { messageOf } from '../../../shared/errorMessage.ts';

/** The append-only event log: it grows with every change, the rest of the state does not. */
const LOG = 'events';
/** Rows read at each end of the log and of each of its indexes, and the newest rows looked up in each index. */
const ENDS = 100;

export interface Integrity {
  /** What SQLite found wrong (empty: nothing). */
  readonly problems: string[];
  /** What was checked, for doctor's line. */
  readonly scope: string;
}

/**
 * The database's integrity in time proportional to the state doctor reports, not to its history:
 * `integrity_check` of every table and its indexes but the event log's; of the log, its first and last
 * rows and those of each of its indexes (the pages a write touches last), and its newest rows looked up
 * in each index. `full`: `integrity_check` of every page, the whole file (seconds on a store of a
 * million events).
 */
export function checkIntegrity(db: SqlConnection, full: boolean): Integrity {
  if (full) return { problems: problemsOf(db.pragma('integrity_check')), scope: 'every page' };
  const tables = db
    .prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name <> ? ORDER BY name`)
    .pluck()
    .all(LOG) as string[];
  const problems = tables.flatMap((t) => problemsOf(db.pragma(`integrity_check(${quote(t)})`)));
  const events = Number(db.prepare(`SELECT max(rowid) FROM ${LOG}`).pluck().get() ?? 0);
  problems.push(...logEnds(db));
  return {
    problems,
    scope: `tables and indexes; the log's ${events.toLocaleString('en')} events at its ends only, --full for every page`,
  };
}

function problemsOf(rows: unknown): string[] {
  const lines = (rows as { integrity_check: string }[]).map((r) => r.integrity_check);
  return lines.length === 1 && lines[0] === 'ok' ? [] : lines;
}

/** The log's ends, in the table and in each index, and its newest rows found in each index; corruption there is a problem, not a crash. */
function logEnds(db: SqlConnection): string[] {
  try {
    const indexes = (
      db
        .prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? ORDER BY name`)
        .pluck()
        .all(LOG) as string[]
    )
      .map((name) => ({
        name,
        columns: (db.pragma(`index_info(${quote(name)})`) as { name: string | null }[]).map((c) => c.name),
      }))
      .filter((i): i is { name: string; columns: string[] } => i.columns.every((c) => c !== null));
    for (const order of ['ASC', 'DESC']) {
      db.prepare(`SELECT * FROM ${LOG} ORDER BY rowid ${order} LIMIT ${ENDS}`).all();
      for (const i of indexes) {
        db.prepare(
          `SELECT ${i.columns.map(quote).join(', ')} FROM ${LOG} INDEXED BY ${quote(i.name)} ORDER BY ${i.columns.map((c) => `${quote(c)} ${order}`).join(', ')} LIMIT ${ENDS}`,
        ).all();
      }
    }
    const newest = db
      .prepare(`SELECT rowid AS sf_rowid, * FROM ${LOG} ORDER BY rowid DESC LIMIT ${ENDS}`)
      .all() as Record<string, unknown>[];
    const problems: string[] = [];
    for (const i of indexes) {
      const find = db
        .prepare(
          `SELECT count(*) FROM ${LOG} INDEXED BY ${quote(i.name)} WHERE ${i.columns.map((c) => `${quote(c)} IS ?`).join(' AND ')} AND rowid = ?`,
        )
        .pluck();
      const missing = newest.filter((row) => Number(find.get(...i.columns.map((c) => row[c]), row.sf_rowid)) !== 1);
      if (missing.length > 0) problems.push(`${missing.length} of the newest ${LOG} missing from index ${i.name}`);
    }
    return problems;
  } catch (err) {
    if (!/^SQLITE_(CORRUPT|NOTADB|IOERR)/.test(String((err as { code?: unknown }).code ?? ''))) throw err;
    return [`the event log: ${messageOf(err)}`];
  }
}

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
