import { lstatSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { EnvironmentError, ownError, RefusedError } from '../../errors.ts';
import { redactDatabaseUrl } from '../databaseUrl.ts';
import type { Actor } from '../types.ts';
import { canonicalDump, firstDifference, type Dump } from './dump.ts';
import { ranks, renumber } from './renumber.ts';
import { finishSqliteCopy, readSqliteSnapshot, removeCopy, writeSqliteCopy } from './sqliteSide.ts';
import { countRows, describeCounts, type Snapshot, type TableName } from './tables.ts';

/** What `springfield migrate` did (docs/postgres-design.md, "springfield migrate: to PostgreSQL and back"). */
export interface MigrateResult {
  readonly from: 'sqlite' | 'postgres';
  readonly to: 'postgres' | 'sqlite';
  /** The SQLite file, or the server as a person may be shown it (never a password). */
  readonly source: string;
  readonly target: string;
  readonly repository: string;
  readonly rows: Readonly<Record<TableName, number>>;
  /** SHA-256 of the logical dump, equal on both sides. */
  readonly dump_sha256: string;
  /** Ids in event data whose row no longer existed (now null): items of a re-initialised plan, a pruned plan's rows. */
  readonly event_ids_cleared: number;
  readonly warnings: readonly string[];
  /** The row counts in words ("3 epics, 1 plan, 40 events"). */
  readonly summary: string;
}

export interface MigrateInput {
  readonly url: string;
  readonly repository: { readonly id: string; readonly source: 'root_commit' | 'configured' };
  readonly host: string;
  readonly actor: Actor | null;
  /** One line per table copied. */
  readonly progress: (line: string) => void;
}

/** Copies this repository's SQLite state into PostgreSQL; the SQLite file is only read. */
export async function migrateToPostgres(input: MigrateInput & { readonly sqlitePath: string }): Promise<MigrateResult> {
  const source = readSqliteSnapshot(input.sqlitePath);
  const dangling = renumber(source, ranks).dangling;
  if (dangling.length > 0) {
    throw new RefusedError(
      'dangling_reference',
      `${input.sqlitePath} has ${dangling.length} reference${dangling.length === 1 ? '' : 's'} to rows that do not exist (${dangling[0]}); run 'springfield prune' first; nothing was written`,
    );
  }
  const place = redactDatabaseUrl(input.url);
  const { copyToPostgres } = await import('../postgres/entry.ts');
  const options = { url: input.url, repo: input.repository, host: input.host };
  const copied = await copyToPostgres(
    options,
    source,
    input.actor,
    (dump) => migrateEvent('sqlite', input.sqlitePath, dump, source),
    input.progress,
  ).catch((err: unknown) => {
    throw ownError(err);
  });
  return result('sqlite', 'postgres', input.sqlitePath, place, input, source, copied.dump, copied.eventIdsCleared, []);
}

/**
 * Copies this repository's rows from PostgreSQL into a new SQLite file at `target` (an existing one is
 * refused): written as `<target>.migrating`, compared, then moved into place; removed on any failure.
 */
export async function migrateToSqlite(input: MigrateInput & { readonly target: string }): Promise<MigrateResult> {
  const { target } = input;
  for (const path of [target, `${target}-wal`]) {
    if (lstatSync(path, { throwIfNoEntry: false }))
      throw new RefusedError(
        'target_exists',
        `${path} exists; migrate writes only a new SQLite file: move it away or name another with --to sqlite:PATH`,
      );
  }
  const place = redactDatabaseUrl(input.url);
  const { readPostgresSnapshot } = await import('../postgres/entry.ts');
  const read = await readPostgresSnapshot({ url: input.url, repo: input.repository, host: input.host }).catch(
    (err: unknown) => {
      throw ownError(err);
    },
  );
  const source = read.snapshot;
  if (Object.values(countRows(source)).every((n) => n === 0)) {
    throw new RefusedError(
      'nothing_to_migrate',
      `PostgreSQL at ${place} has no rows of repository ${input.repository.id}: there is nothing to migrate`,
    );
  }
  const dense = renumber(source, ranks);
  mkdirSync(dirname(target), { recursive: true });
  writeSqliteCopy(target, dense.snapshot, input.progress);
  let dump: Dump;
  try {
    const expected = canonicalDump(source);
    dump = canonicalDump(readSqliteSnapshot(`${target}.migrating`));
    const diff = firstDifference(expected, dump, 'PostgreSQL', 'SQLite');
    if (diff !== null)
      throw new EnvironmentError(
        'migrate_mismatch',
        `the SQLite copy differs from the state in PostgreSQL: ${diff}; the copy was removed`,
      );
  } catch (err) {
    removeCopy(target);
    throw err;
  }
  finishSqliteCopy(target, input.actor, migrateEvent('postgres', place, dump, source));
  const warnings = [
    ...(read.otherHosts.claims > 0
      ? [
          `${read.otherHosts.claims} live claim${read.otherHosts.claims === 1 ? ' was' : 's were'} held on other hosts; in the SQLite file they are held by the same worktree paths on this machine`,
        ]
      : []),
    ...(read.otherHosts.runs > 0
      ? [
          `${read.otherHosts.runs} run${read.otherHosts.runs === 1 ? ' was' : 's were'} running on other hosts; this machine cannot see their processes`,
        ]
      : []),
  ];
  return result('postgres', 'sqlite', place, target, input, source, dump, dense.eventIdsCleared, warnings);
}

function migrateEvent(from: 'sqlite' | 'postgres', source: string, dump: Dump, rows: Snapshot) {
  return {
    entity: 'store',
    action: 'migrate',
    reason: `copied from ${from === 'sqlite' ? 'SQLite' : 'PostgreSQL'} at ${source}`,
    data: { from, source, dump_sha256: dump.sha256, rows: countRows(rows) },
  };
}

function result(
  from: 'sqlite' | 'postgres',
  to: 'postgres' | 'sqlite',
  source: string,
  target: string,
  input: MigrateInput,
  rows: Snapshot,
  dump: Dump,
  cleared: number,
  warnings: string[],
): MigrateResult {
  const counts = countRows(rows);
  return {
    from,
    to,
    source,
    target,
    repository: input.repository.id,
    rows: counts,
    summary: describeCounts(counts),
    dump_sha256: dump.sha256,
    event_ids_cleared: cleared,
    warnings,
  };
}
