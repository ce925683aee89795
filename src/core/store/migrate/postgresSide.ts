import { EnvironmentError, RefusedError, SpringfieldError } from '../../errors.ts';
import { openPool } from '../postgres/connection.ts';
import { openStepsSql, rebuildOpenCounts } from '../postgres/readiness.ts';
import { writeEvent } from '../postgres/rows.ts';
import { Session, type SessionOptions, type Tx } from '../postgres/session.ts';
import type { EventInput } from '../sqlite/rows.ts';
import type { Actor } from '../types.ts';
import { canonicalDump, firstDifference, type Dump } from './dump.ts';
import { renumber } from './renumber.ts';
import {
  describeCounts,
  emptySnapshot,
  TABLES,
  type Row,
  type Snapshot,
  type TableName,
  type TableSpec,
} from './tables.ts';
import { messageOf } from '../../../shared/errorMessage.ts';

/** The class (first key) of a repository's advisory lock, held by `migrate` (plans use 0x53460001). */
const REPO_LOCK_CLASS = 0x53460002;
const CHUNK = 500;

const quoted = (columns: readonly string[]) => columns.map((c) => `"${c}"`).join(', ');

export interface PostgresCopy {
  readonly dump: Dump;
  readonly eventIdsCleared: number;
}

/**
 * Copies `source` (one repository's rows from its SQLite file) into PostgreSQL as this repository, in
 * one transaction holding the repository's advisory lock (docs/postgres-design.md, "springfield migrate: to PostgreSQL and back"): refused when
 * the repository already has rows; new identity ids, references and ids in event data following
 * them; the copy read back and its dump compared with the source's before COMMIT, then the
 * `store`/`migrate` event. Anything wrong rolls everything back.
 */
export async function copyToPostgres(
  options: SessionOptions,
  source: Snapshot,
  actor: Actor | null,
  event: (dump: Dump) => EventInput,
  progress: (line: string) => void,
): Promise<PostgresCopy> {
  const session = new Session(openPool(options.url, 1), options);
  try {
    return await session.write('migrating into PostgreSQL', async (tx) => {
      await tx.q('SELECT pg_advisory_xact_lock($1, hashtext($2))', [REPO_LOCK_CLASS, tx.repo]);
      const present = await rowsPresent(tx);
      if (present !== null) {
        throw new RefusedError(
          'repository_not_empty',
          `PostgreSQL at ${session.place} already holds repository ${tx.repo} (${present}); migrate never merges: nothing was written`,
        );
      }
      const ids = new Map<TableName, number[]>();
      for (const t of TABLES) if (t.id) ids.set(t.name, await newIds(tx, t.name, source[t.name].length));
      const copy = renumber(source, (table) => ids.get(table) ?? []);
      if (copy.dangling.length > 0) throw danglingError(copy.dangling);
      for (const t of TABLES) {
        await insertRows(tx, t, copy.snapshot[t.name]);
        progress(`${t.name}: ${copy.snapshot[t.name].length} row${copy.snapshot[t.name].length === 1 ? '' : 's'}`);
      }
      // A plan's open-step count is its counters' sum here (migration 5), counted from the steps just
      // copied; the dump compare then holds it to SQLite's plans.open_steps.
      for (const plan of copy.snapshot.plans) await rebuildOpenCounts(tx, String(plan.plan_path));
      const expected = canonicalDump(source);
      const got = canonicalDump(await readRepository(tx));
      const diff = firstDifference(expected, got, 'SQLite', 'PostgreSQL');
      if (diff !== null)
        throw new EnvironmentError(
          'migrate_mismatch',
          `the copy in PostgreSQL differs from the SQLite state: ${diff}; rolled back, nothing was written`,
        );
      await writeEvent(tx, actor, event(got));
      return { dump: got, eventIdsCleared: copy.eventIdsCleared };
    });
  } finally {
    await session.close();
  }
}

/** One repository's rows on the server, read in one snapshot, and how many live claims and running runs are another host's. */
export async function readPostgresSnapshot(
  options: SessionOptions,
): Promise<{ snapshot: Snapshot; otherHosts: { claims: number; runs: number } }> {
  const session = new Session(openPool(options.url, 1), options);
  try {
    return await session.read('reading the repository to migrate', async (tx) => {
      const snapshot = await readRepository(tx);
      const [other] = await tx.q<{ claims: number; runs: number }>(
        `SELECT
        (SELECT count(*)::int FROM steps WHERE repo_id = $1 AND status IN ('claimed', 'in_progress') AND claimed_host IS DISTINCT FROM $2) AS claims,
        (SELECT count(*)::int FROM runs WHERE repo_id = $1 AND status = 'running' AND host IS DISTINCT FROM $2) AS runs`,
        [tx.repo, tx.host],
      );
      return { snapshot, otherHosts: other ?? { claims: 0, runs: 0 } };
    });
  } finally {
    await session.close();
  }
}

/** Which tables already hold rows of this repository ("3 epics, 120 events"); null when none do. */
async function rowsPresent(tx: Tx): Promise<string | null> {
  const [row] = await tx.q<Record<TableName, number>>(
    `SELECT ${TABLES.map((t) => `(SELECT count(*)::int FROM ${from(t)}) AS ${t.name}`).join(', ')}`,
    [tx.repo],
  );
  return row && TABLES.some((t) => row[t.name] > 0) ? describeCounts(row) : null;
}

/** The table's rows of repository $1 (signal locations have no repo_id: through their signal). */
function from(t: TableSpec): string {
  return t.name === 'signal_locations'
    ? 'signal_locations l JOIN signals s ON s.id = l.signal_id WHERE s.repo_id = $1'
    : `${t.name} WHERE repo_id = $1`;
}

/** `n` ids from the table's identity sequence, ascending, so the rows keep their order. */
async function newIds(tx: Tx, table: TableName, n: number): Promise<number[]> {
  if (n === 0) return [];
  const rows = await tx.q<{ id: number }>(
    `SELECT nextval(pg_get_serial_sequence($1, 'id')) AS id FROM generate_series(1, $2)`,
    [`springfield.${table}`, n],
  );
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/** The host columns: this host for the claims, completions, worktrees, runs and events written here. */
function hosted(t: TableSpec, r: Row, host: string): Row {
  switch (t.name) {
    case 'epics':
      return { ...r, worktree_host: r.worktree_path == null ? null : host };
    case 'steps':
      return {
        ...r,
        claimed_host: r.claimed_by == null ? null : host,
        completed_host: r.completed_by == null ? null : host,
      };
    case 'runs':
      return { ...r, host };
    case 'events':
      return { ...r, host: r.worktree == null ? null : host };
    default:
      return r;
  }
}

const HOST_COLUMNS: Partial<Record<TableName, readonly string[]>> = {
  epics: ['worktree_host'],
  steps: ['claimed_host', 'completed_host'],
  runs: ['host'],
  events: ['host'],
};

/** Columns that PostgreSQL computes rather than stores, and how it reads them. */
const COMPUTED: Partial<Record<TableName, Readonly<Record<string, string>>>> = {
  plans: {
    open_steps: `${openStepsSql('plan_open.repo_id = plans.repo_id AND plan_open.plan_path = plans.plan_path')} AS open_steps`,
  },
};

async function insertRows(tx: Tx, t: TableSpec, rows: readonly Row[]): Promise<void> {
  const computed = COMPUTED[t.name] ?? {};
  const columns = [
    ...t.columns.filter((c) => !(c in computed)),
    ...(HOST_COLUMNS[t.name] ?? []),
    ...(t.name === 'signal_locations' ? [] : ['repo_id']),
  ];
  const sql = `INSERT INTO ${t.name} (${quoted(columns)})${t.id ? ' OVERRIDING SYSTEM VALUE' : ''}
    SELECT ${quoted(columns)} FROM json_populate_recordset(NULL::${t.name}, $1::json)`;
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK).map((r) => ({ ...hosted(t, r, tx.host), repo_id: tx.repo }));
    try {
      await tx.q(sql, [JSON.stringify(chunk)]);
    } catch (err) {
      if (err instanceof SpringfieldError || isConnectionError(err)) throw err;
      throw new EnvironmentError(
        'migrate_failed',
        `copying ${t.name} into PostgreSQL failed (${messageOf(err).split('\n')[0]}); rolled back, nothing was written`,
      );
    }
  }
}

function isConnectionError(err: unknown): boolean {
  return (
    typeof (err as { code?: unknown }).code === 'string' &&
    /^(E[A-Z]+|08|57|40|55P03)/.test(String((err as { code: string }).code))
  );
}

/** Every table's rows of this repository, ids ascending; times come back as ISO-8601 (connection.ts), jsonb parsed. */
async function readRepository(tx: Tx): Promise<Snapshot> {
  const out = emptySnapshot();
  for (const t of TABLES) {
    const computed = COMPUTED[t.name] ?? {};
    const columns =
      t.name === 'signal_locations'
        ? t.columns.map((c) => `l."${c}"`).join(', ')
        : t.columns.map((c) => computed[c] ?? `"${c}"`).join(', ');
    out[t.name] = await tx.q<Row>(
      `SELECT ${columns} FROM ${from(t)} ORDER BY ${t.id ? (t.name === 'signal_locations' ? 'l.id' : 'id') : quoted(t.key)}`,
      [tx.repo],
    );
  }
  return out;
}

function danglingError(dangling: readonly string[]): RefusedError {
  return new RefusedError(
    'dangling_reference',
    `the SQLite state has ${dangling.length} reference${dangling.length === 1 ? '' : 's'} to rows that do not exist (${dangling[0]}); nothing was written`,
  );
}
