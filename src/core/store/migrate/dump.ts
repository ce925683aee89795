import { createHash } from 'node:crypto';
import { ranks, renumber } from './renumber.ts';
import { TABLES, type Row, type Snapshot, type TableName } from './tables.ts';

/** One repository's state as canonical text (docs/postgres-design.md, "springfield migrate: to PostgreSQL and back"), per table and whole. */
export interface Dump {
  /** Each table's rows, sorted, each one JSON text. */
  readonly tables: Readonly<Record<TableName, readonly string[]>>;
  readonly text: string;
  readonly sha256: string;
}

/**
 * The logical dump both sides are compared by: tables in a fixed order; rows sorted by their natural
 * key; ids replaced by their rank, references and ids in event data by the referenced row's rank;
 * times as ISO-8601 UTC with milliseconds; JSON with sorted keys; repo_id and host columns absent.
 */
export function canonicalDump(s: Snapshot): Dump {
  const ranked = renumber(s, ranks).snapshot;
  const tables = {} as Record<TableName, string[]>;
  for (const t of TABLES) {
    const rows = ranked[t.name].map((r) => {
      const row: Row = {};
      for (const c of t.columns) row[c] = t.times.includes(c) ? isoTime(r[c]) : (r[c] ?? null);
      return row;
    });
    rows.sort((a, b) =>
      compareKeys(
        t.key.map((k) => a[k]),
        t.key.map((k) => b[k]),
      ),
    );
    tables[t.name] = rows.map(stableJson);
  }
  const text = `{${TABLES.map((t) => `${JSON.stringify(t.name)}:[${tables[t.name].join(',')}]`).join(',')}}`;
  return { tables, text, sha256: createHash('sha256').update(text).digest('hex') };
}

/** Where two dumps first differ, as one line naming the table and the row; null when they are equal. */
export function firstDifference(source: Dump, target: Dump, sourceName: string, targetName: string): string | null {
  if (source.text === target.text) return null;
  for (const t of TABLES) {
    const a = source.tables[t.name];
    const b = target.tables[t.name];
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (a[i] === b[i]) continue;
      const ra = a[i] === undefined ? undefined : (JSON.parse(a[i] as string) as Row);
      const rb = b[i] === undefined ? undefined : (JSON.parse(b[i] as string) as Row);
      const where = `table ${t.name}, row ${i + 1}`;
      if (!ra || !rb)
        return `${where} (${keyOf(t.key, (ra ?? rb) as Row)}) is missing in ${ra ? targetName : sourceName}`;
      const keyA = keyOf(t.key, ra);
      const keyB = keyOf(t.key, rb);
      if (keyA !== keyB) return `${where}: ${sourceName} has (${keyA}), ${targetName} has (${keyB})`;
      const column = t.columns.find((c) => stableJson(ra[c]) !== stableJson(rb[c])) ?? '?';
      return `${where} (${keyA}): ${column} is ${clip(stableJson(ra[column]))} in ${sourceName} and ${clip(stableJson(rb[column]))} in ${targetName}`;
    }
  }
  return 'the dumps differ';
}

function keyOf(key: readonly string[], row: Row): string {
  return key.map((k) => `${k === 'id' ? 'rank' : k} ${String(row[k])}`).join(', ');
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
}

function isoTime(v: unknown): unknown {
  if (typeof v !== 'string') return v ?? null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? v : new Date(t).toISOString();
}

/** JSON with object keys sorted at every level. */
export function stableJson(v: unknown): string {
  if (v === undefined) return 'null';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${stableJson(x)}`).join(',')}}`;
}

function compareKeys(a: readonly unknown[], b: readonly unknown[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c;
  }
  return 0;
}

/** null first, then numbers, then strings (by code unit, as the C collation orders ASCII). */
function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown) => (v === null || v === undefined ? 0 : typeof v === 'number' ? 1 : 2);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = String(a ?? '');
  const sb = String(b ?? '');
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}
