import { createHash } from 'node:crypto';

/** The repository's notification channel: `sf_` and 40 hex digits of sha256(repo_id) (docs/postgres.md, section 8). */
export function channelOf(repoId: string): string {
  return `sf_${createHash('sha256').update(repoId, 'utf8').digest('hex').slice(0, 40)}`;
}

/**
 * What ends a write sent as one simple query: its COMMIT, then the repository's notification in a
 * transaction of its own that does not wait for the disk. A NOTIFY inside the write would hold the
 * server-wide notification lock through the write's commit and serialise every writer's fsync; here it
 * is held for no flush (docs/postgres.md, section 8). An error earlier in the query skips all of it.
 */
export function commitAndNotify(repoId: string, host: string, lit: (value: unknown) => string): string[] {
  return ['COMMIT', 'BEGIN', 'SET LOCAL synchronous_commit TO off',
    `SELECT pg_notify('${channelOf(repoId)}', ${lit(JSON.stringify({ v: 2, host }))})`, 'COMMIT'];
}
