import { resolve } from 'node:path';
import {
  ensureGitignored,
  hostId,
  isDatabaseUrl,
  migrateToPostgres,
  migrateToSqlite,
  type MigrateResult,
  redactDatabaseUrl,
  repositoryId,
  UsageError,
} from '../../core/index.ts';
import { flag, str } from '../args.ts';
import type { Command } from '../command.ts';
import { output } from '../output.ts';
import { maintenanceActor } from './prune.ts';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: "copy this repository's state between its SQLite file and a PostgreSQL server, checked by a dump compare",
  positionals: [],
  options: [
    {
      name: 'to',
      type: 'string',
      placeholder: 'TARGET',
      description:
        'postgres://… (copy the SQLite file there), or sqlite[:PATH] (copy the PostgreSQL rows into a new file)',
    },
  ],
  details: [
    '--to postgres://…  copies the SQLite file (--db PATH, SPRINGFIELD_DB, else .springfield/state.db) into the server as this',
    '                   repository, in one transaction; refused when the server already has rows of this repository.',
    "--to sqlite[:PATH] copies this repository's rows from the PostgreSQL it uses (--db or SPRINGFIELD_DATABASE_URL) into a new",
    '                   file (default .springfield/state.db); an existing file is refused.',
    'Both sides are dumped to one canonical text and compared before the copy is committed (or moved into place): equal → done,',
    'its SHA-256 printed; different → nothing written, exit 3, naming the first differing table and row. The source is never',
    'modified. Stop the agents first: what they write meanwhile is not copied. Progress: a line per table on stdout (on',
    'stderr with --json). Exit 1: the server already has rows of this repository, the file exists, or there is no SQLite state.',
    'Design: docs/postgres-design.md, "springfield migrate: to PostgreSQL and back".',
  ].join('\n'),
  async run(ctx) {
    const to = str(ctx.args, 'to');
    if (to === undefined)
      throw new UsageError(
        'missing_argument',
        "migrate: --to is required (postgres://… or sqlite[:PATH]; see 'springfield migrate --help')",
      );
    const json = flag(ctx.args, 'json');
    const progress = (line: string) => (json ? process.stderr : process.stdout).write(`  ${line}\n`);
    const location = ctx.location;
    const common = {
      repository: repositoryId(location.commonDir, location.worktreeRoot ?? ctx.cwd, ctx.env),
      host: hostId(ctx.env),
      actor: maintenanceActor(ctx),
      progress,
    };
    if (isDatabaseUrl(to)) {
      if (isDatabaseUrl(str(ctx.args, 'db')))
        throw new UsageError(
          'bad_option',
          'migrate --to postgres://… copies from a SQLite file: --db must name a file, not a URL',
        );
      const sqlitePath = isDatabaseUrl(ctx.dbPath) ? ctx.stateFile : ctx.dbPath;
      const r = await migrateToPostgres({ ...common, url: to, sqlitePath });
      const set = `On every clone, set SPRINGFIELD_DATABASE_URL to the URL given to --to (${redactDatabaseUrl(to)}; the password in PGPASSWORD or ~/.pgpass), or pass --db; ${sqlitePath} was left as it was.`;
      return done(r, set);
    }
    const m = /^sqlite(?::(.+))?$/.exec(to);
    if (!m)
      throw new UsageError(
        'bad_target',
        'migrate: --to must be postgres://… (or postgresql://…), sqlite, or sqlite:PATH',
      );
    if (!isDatabaseUrl(ctx.dbPath)) {
      throw new UsageError(
        'no_postgres',
        'migrate --to sqlite copies from PostgreSQL: set SPRINGFIELD_DATABASE_URL or pass --db postgres://…',
      );
    }
    const target = m[1] ? resolve(ctx.cwd, m[1]) : ctx.stateFile;
    const r = await migrateToSqlite({ ...common, url: ctx.dbPath, target });
    if (target === ctx.stateFile) ensureGitignored(location);
    const set =
      target === ctx.stateFile
        ? `On every clone, unset SPRINGFIELD_DATABASE_URL (and springfield.databaseUrl in the editor's settings); the state is in ${target}.`
        : `On every clone, unset SPRINGFIELD_DATABASE_URL (and springfield.databaseUrl in the editor's settings) and export SPRINGFIELD_DB=${target}.`;
    return done(r, set);
  },
};

function done(r: MigrateResult, set: string) {
  const name = (b: 'sqlite' | 'postgres') => (b === 'sqlite' ? 'SQLite' : 'PostgreSQL');
  const text = [
    `Migrated repository ${r.repository} from ${name(r.from)} at ${r.source} to ${name(r.to)} at ${r.target}: ${r.summary}.`,
    `Both sides dump to sha256 ${r.dump_sha256}.`,
    ...(r.event_ids_cleared > 0
      ? [
          `${r.event_ids_cleared} id${r.event_ids_cleared === 1 ? '' : 's'} in event data named rows that no longer exist; they are null in the copy.`,
        ]
      : []),
    set,
  ].join('\n');
  return output({ ...r, set_on_every_clone: set }, text, 0, r.warnings);
}
