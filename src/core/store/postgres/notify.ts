import { createHash } from 'node:crypto';

/** The repository's notification channel: `sf_` and 40 hex digits of sha256(repo_id) (docs/postgres-design.md, "Live updates"). */
export function channelOf(repoId: string): string {
  return `sf_${createHash('sha256').update(repoId, 'utf8').digest('hex').slice(0, 40)}`;
}

/**
 * What ends a write sent as one simple query: its COMMIT; `afterCommit`, statements that must see
 * what every writer committed before them (a plan marked done: docs/postgres-design.md, "Concurrency"), in a
 * transaction of their own; then the repository's notification in a
 * transaction of its own that does not wait for the disk. A NOTIFY inside the write would hold the
 * server-wide notification lock through the write's commit and serialise every writer's fsync; here it
 * is held for no flush (docs/postgres-design.md, "Live updates"). An error earlier in the query skips all of it.
 */
export function commitAndNotify(
  repoId: string,
  host: string,
  lit: (value: unknown) => string,
  afterCommit: readonly string[] = [],
): string[] {
  return [
    'COMMIT',
    ...(afterCommit.length > 0 ? ['BEGIN', ...afterCommit, 'COMMIT'] : []),
    'BEGIN',
    'SET LOCAL synchronous_commit TO off',
    `SELECT pg_notify('${channelOf(repoId)}', ${lit(JSON.stringify({ v: 2, host }))})`,
    'COMMIT',
  ];
}

/**
 * The rows of a query sent as `statements`, then `commitAndNotify(…, afterCommit)`: each statement's,
 * then each of `afterCommit`'s (the COMMIT, BEGIN and notification between and after them left out).
 */
export function rowsOf(
  results: readonly Record<string, unknown>[][],
  statements: number,
  afterCommit: number,
): Record<string, unknown>[][] {
  return afterCommit > 0
    ? [...results.slice(0, statements), ...results.slice(statements + 2, statements + 2 + afterCommit)]
    : results.slice(0, statements);
}
