import { mapEventData, TABLES, type Row, type Snapshot, type TableName } from './tables.ts';

export interface Renumbered {
  readonly snapshot: Snapshot;
  /** References in id columns to rows that do not exist (SQLite let them through while foreign keys were off). */
  readonly dangling: readonly string[];
  /** Ids in event data whose row is gone (items of a re-initialised plan, a pruned plan's artifacts): now null. */
  readonly eventIdsCleared: number;
}

/**
 * The same rows with new ids: each table's rows, in ascending id order, take `ids(table, n)`'s ids in
 * order (so ranks are kept), and every reference and every id in event data follows its row
 * (docs/postgres-design.md, "springfield migrate: to PostgreSQL and back"). With ids 1…n this gives the ranks the dump compares.
 */
export function renumber(s: Snapshot, ids: (table: TableName, count: number) => readonly number[]): Renumbered {
  const maps = new Map<TableName, Map<number, number>>();
  const out = {} as Snapshot;
  const dangling: string[] = [];
  let eventIdsCleared = 0;
  const lookUp = (table: TableName, id: number): number | null => maps.get(table)?.get(id) ?? null;
  for (const t of TABLES) {
    let rows = s[t.name];
    if (t.id) {
      rows = [...rows].sort((a, b) => Number(a.id) - Number(b.id));
      const fresh = ids(t.name, rows.length);
      const map = new Map<number, number>();
      rows.forEach((r, i) => map.set(Number(r.id), fresh[i] as number));
      maps.set(t.name, map);
    }
    out[t.name] = rows.map((r) => {
      const row: Row = { ...r };
      if (t.id) row.id = lookUp(t.name, Number(r.id));
      for (const [column, target] of Object.entries(t.refs)) {
        const v = r[column];
        if (v === null || v === undefined) continue;
        row[column] = lookUp(target, Number(v));
        if (row[column] === null)
          dangling.push(`${t.name} ${String(r.id)}: ${column} ${String(v)} names no row of ${target}`);
      }
      if (t.name === 'events' && r.data !== null && r.data !== undefined) {
        row.data = mapEventData(r, r.data, (table, id) => {
          const mapped = lookUp(table, id);
          if (mapped === null) eventIdsCleared++;
          return mapped;
        });
      }
      return row;
    });
  }
  return { snapshot: out, dangling, eventIdsCleared };
}

/** 1…n: the ranks. */
export function ranks(_table: TableName, count: number): number[] {
  return Array.from({ length: count }, (_, i) => i + 1);
}
