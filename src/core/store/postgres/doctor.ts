import pg from 'pg';
import type { Checklist } from '../shared/checklist.ts';
import { redactDatabaseUrl } from '../databaseUrl.ts';
import { connectionConfig, mapPgError } from './connection.ts';
import { PG_SCHEMA_VERSION } from './migrations.ts';

export interface RemoteDoctorInput {
  readonly url: string;
  readonly repository: { readonly id: string; readonly source: 'root_commit' | 'configured' };
  readonly host: string;
  readonly env: NodeJS.ProcessEnv;
}

/** Where the password comes from, as libpq looks for it (never the password itself). */
function passwordSource(url: string, env: NodeJS.ProcessEnv): string {
  if (/^postgres(?:ql)?:\/\/[^@/?#]*:[^@/?#]*@/i.test(url)) return 'password from the URL';
  if (env.PGPASSWORD) return 'password from PGPASSWORD';
  return 'no password given (or ~/.pgpass)';
}

/** Doctor on PostgreSQL, read-only: which server, the repository's id, the schema version, durability. */
export async function diagnosePostgres(input: RemoteDoctorInput, list: Checklist): Promise<void> {
  const place = redactDatabaseUrl(input.url);
  const client = new pg.Client(connectionConfig(input.url));
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    const mapped = mapPgError(err, input.url, 'connecting');
    const message = mapped instanceof Error ? mapped.message : `PostgreSQL at ${place} is unreachable`;
    list.check(
      'backend',
      [
        {
          severity: 'error',
          code: 'database_unreachable',
          message,
          fix: 'check the URL, the network and that the server runs',
          command: null,
        },
      ],
      '',
      'unreachable',
    );
    for (const name of ['repository', 'schema', 'durability']) list.skip(name, 'the server could not be reached');
    return;
  }
  try {
    const info = (
      await client.query<{
        version: string;
        usr: string;
        fsync: string;
        sync: string;
        ssl: boolean | null;
      }>(`SELECT current_setting('server_version') AS version,
        current_user AS usr, current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync,
        (SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()) AS ssl`)
    ).rows[0];
    list.check(
      'backend',
      [],
      `PostgreSQL ${info?.version ?? '?'} at ${place} as ${info?.usr ?? '?'}${info?.ssl ? ', TLS' : ''} (${passwordSource(input.url, input.env)}); this host is ${input.host}`,
    );
    list.check(
      'repository',
      [],
      `${input.repository.id}${input.repository.source === 'root_commit' ? ' (root commit)' : ' (configured name)'}`,
    );
    const exists = (
      await client.query<{ t: string | null }>(`SELECT to_regclass('springfield.schema_version')::text AS t`)
    ).rows[0]?.t;
    const version = exists
      ? ((await client.query<{ v: number | null }>('SELECT max(version) AS v FROM springfield.schema_version')).rows[0]
          ?.v ?? 0)
      : 0;
    if (version > PG_SCHEMA_VERSION) {
      list.check(
        'schema',
        [
          {
            severity: 'error',
            code: 'schema_too_new',
            message: `schema version ${version} is newer than this Springfield supports (${PG_SCHEMA_VERSION})`,
            fix: `use the newer Springfield that wrote it (one that knows schema version ${version})`,
            command: null,
          },
        ],
        '',
        `version ${version}`,
      );
    } else
      list.check(
        'schema',
        [],
        version === 0 ? `none yet (created by the first write, version ${PG_SCHEMA_VERSION})` : `version ${version}`,
      );
    const off = [info?.fsync === 'off' ? 'fsync off' : '', info?.sync === 'off' ? 'synchronous_commit off' : ''].filter(
      Boolean,
    );
    list.check(
      'durability',
      off.length === 0
        ? []
        : [
            {
              severity: 'warning',
              code: 'not_durable',
              message: `the server runs with ${off.join(' and ')}: a crash can lose committed claims`,
              fix: 'turn them on in postgresql.conf',
              command: null,
            },
          ],
      'fsync on, synchronous_commit on',
      off.join(', '),
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
