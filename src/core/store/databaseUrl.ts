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
  const user = m[2] === undefined ? '' : `${m[2].split(':')[0] ?? ''}@`;
  const params = (m[5] ?? '')
    .split('&')
    .filter((p) => SHOWN_PARAMS.has(decodeSafe(p.split('=')[0] ?? '').toLowerCase()));
  return `${m[1]}${user}${m[3]}${m[4] ?? ''}${params.length > 0 ? `?${params.join('&')}` : ''}`;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * Splits the `options` query parameters (the session options libpq sends in the startup packet) out
 * of a URL: the URL without them, and their values joined by spaces (null when there is none).
 * Decoded as node-postgres decodes a query (URLSearchParams: `+` and `%20` are spaces).
 */
export function takeUrlOptions(url: string): { readonly url: string; readonly options: string | null } {
  const m = /^([^?#]*)\?([^#]*)(#.*)?$/s.exec(url);
  if (!m) return { url, options: null };
  const kept: string[] = [];
  const options: string[] = [];
  for (const part of (m[2] ?? '').split('&')) {
    const [key, value] = [...new URLSearchParams(part).entries()][0] ?? ['', ''];
    if (key === 'options') {
      if (value.trim() !== '') options.push(value.trim());
    } else if (part !== '') kept.push(part);
  }
  return {
    url: `${m[1] ?? ''}${kept.length > 0 ? `?${kept.join('&')}` : ''}${m[3] ?? ''}`,
    options: options.length > 0 ? options.join(' ') : null,
  };
}
