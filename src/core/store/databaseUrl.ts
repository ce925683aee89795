/** Whether a database setting names a PostgreSQL server (a URL) rather than a SQLite file. */
export function isDatabaseUrl(value: string | undefined | null): value is string {
  return typeof value === 'string' && /^postgres(?:ql)?:\/\//i.test(value);
}

const SHOWN_PARAMS = new Set(['host', 'port', 'sslmode']);

/**
 * The URL as a person may be shown it: user, host, port, database, and the query's host, port and
 * sslmode; the password and every other parameter removed (docs/postgres.md, "Credentials").
 */
export function redactDatabaseUrl(url: string): string {
  const m = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?/i.exec(url);
  if (!m) return 'postgres://(unparseable URL)';
  const user = m[2] === undefined ? '' : `${(m[2].split(':')[0] ?? '')}@`;
  const params = (m[5] ?? '').split('&').filter((p) => SHOWN_PARAMS.has(decodeSafe(p.split('=')[0] ?? '').toLowerCase()));
  return `${m[1]}${user}${m[3]}${m[4] ?? ''}${params.length > 0 ? `?${params.join('&')}` : ''}`;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
