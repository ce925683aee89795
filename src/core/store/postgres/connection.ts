import pg from 'pg';
import { EnvironmentError, OutcomeUnknownError, SpringfieldError } from '../../errors.ts';
import { claimChangedAs } from '../shared/refusals.ts';
import { redactDatabaseUrl, takeUrlOptions } from '../databaseUrl.ts';

/** Timestamps as ISO-8601 UTC with milliseconds (what SQLite stores and JSON shows); bigints as numbers. */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === 1184 || oid === 1114) return (s: string) => new Date(oid === 1114 ? `${s}Z` : s).toISOString();
    if (oid === 20) return (s: string) => Number(s);
    return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid, 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * Session settings every connection starts with (docs/postgres-design.md, "Concurrency"), sent in the startup
 * packet's `options`. The URL's own `options` (a Neon endpoint, `-c application_name=…`) are merged
 * between them: after the defaults, so they override a timeout or the application name, and before the
 * settings the store's queries depend on (its schema, UTC), which always win.
 */
const DEFAULTS =
  '-c application_name=springfield -c lock_timeout=10s -c idle_in_transaction_session_timeout=60s -c statement_timeout=60s';
const REQUIRED = '-c search_path=springfield -c TimeZone=UTC';

/** What every client of the store connects with: the URL without its `options`, and the merged options. */
export function connectionConfig(url: string): { readonly connectionString: string; readonly options: string } {
  const own = takeUrlOptions(url);
  return { connectionString: own.url, options: [DEFAULTS, own.options, REQUIRED].filter((o) => o !== null).join(' ') };
}

/** A pool of connections to the server; one client per transaction (node-postgres must not queue on a busy client). */
export function openPool(url: string, max = 4): pg.Pool {
  const pool = new pg.Pool({
    ...connectionConfig(url),
    max,
    types: TYPES,
    idleTimeoutMillis: 10_000,
    allowExitOnIdle: true,
  });
  // An idle client whose server went away must not crash the process: the next checkout fails instead.
  pool.on('error', () => undefined);
  return pool;
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P03',
  '53300',
]);
const LOST = new Set(['ECONNRESET', 'EPIPE', '57P01', '57P02', '57P04', '08006', '08003', '08000']);

/** Whether connecting failed before anything was sent (so trying again cannot double anything). */
export function isUnreachable(err: unknown): boolean {
  return UNREACHABLE.has(String((err as { code?: unknown }).code ?? ''));
}

/** Whether the connection dropped after a statement was sent (the outcome of the operation is unknown). */
export function isConnectionLost(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return (
    LOST.has(String(e.code ?? '')) ||
    /Connection terminated|connection to the server was lost|Client has encountered a connection error/i.test(
      String(e.message ?? ''),
    )
  );
}

/** Deadlocks and serialization failures: the whole operation runs again (nothing of it was committed). */
export function isRetryable(err: unknown): boolean {
  const code = String((err as { code?: unknown }).code ?? '');
  return code === '40P01' || code === '40001';
}

/**
 * A failure to reach the server, or a connection lost before anything of the operation was sent
 * (while connecting or opening the store): nothing was changed, and running the command again is safe.
 */
export function unreachableError(err: unknown, url: string): EnvironmentError {
  const place = redactDatabaseUrl(url);
  const e = err as { code?: unknown; message?: unknown };
  const reason = (String(e.message ?? e.code ?? '') || 'no reason given').split('\n')[0]?.replace(url, place);
  return new EnvironmentError(
    'database_unreachable',
    `PostgreSQL at ${place} is unreachable (${reason}); nothing was changed: check the URL, the network and that the server runs`,
  );
}

/**
 * Maps a driver or server failure into Springfield's categories and codes, as mapSqliteError does.
 * Messages name the server by its redacted URL, never the URL given (which may hold a password).
 * `op`: the id of a write whose reply a lost connection may have taken; the error then carries it.
 */
export function mapPgError(err: unknown, url: string, doing: string, op?: string): unknown {
  if (err instanceof SpringfieldError) return err;
  const place = redactDatabaseUrl(url);
  const e = err as { code?: unknown; message?: unknown };
  const code = String(e.code ?? '');
  const reason = (String(e.message ?? code) || 'no reason given').split('\n')[0]?.replace(url, place);
  if (isUnreachable(err)) return unreachableError(err, url);
  if (isConnectionLost(err)) {
    const message = `PostgreSQL at ${place} went away while ${doing}; the outcome is unknown: run the same command again (it picks up where this one stopped)`;
    return op ? new OutcomeUnknownError(op, message) : new EnvironmentError('database_unreachable', message);
  }
  // A guarded write sent with its COMMIT found the row changed (sf_expect in the schema).
  if (code === 'SF001') return claimChangedAs(String(e.message ?? 'the claim changed'));
  if (code === '55P03')
    return new EnvironmentError(
      'database_locked',
      `PostgreSQL at ${place}: a row is locked by another process (gave up after 10 s)`,
    );
  if (isRetryable(err))
    return new EnvironmentError(
      'database_busy',
      `PostgreSQL at ${place}: database busy: gave up after 5 attempts (${reason})`,
    );
  if (code === '28P01' || code === '28000')
    return new EnvironmentError('database_auth_failed', `PostgreSQL at ${place}: authentication failed (${reason})`);
  if (code === '3D000') return new EnvironmentError('database_missing', `PostgreSQL at ${place}: ${reason}`);
  if (code === '42501')
    return new EnvironmentError('database_permission', `PostgreSQL at ${place}: permission denied (${reason})`);
  return err;
}
