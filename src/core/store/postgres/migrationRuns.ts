/**
 * The runs branch's migration (docs/postgres-design.md, "Migrations"): what SQLite's migration 5 added to runs and
 * epics — the usage an agent reported, the pull request a verified epic waits on — and the lookups the
 * run and signal queries make. Appended after the other migrations in ./migrations.ts; IF NOT EXISTS
 * everywhere, so a column another migration added first is not an error.
 */
export const PG_RUNS_MIGRATIONS: readonly string[] = [
  `
  ALTER TABLE runs ADD COLUMN IF NOT EXISTS cost_usd double precision;
  ALTER TABLE runs ADD COLUMN IF NOT EXISTS input_tokens bigint;
  ALTER TABLE runs ADD COLUMN IF NOT EXISTS output_tokens bigint;
  ALTER TABLE runs ADD COLUMN IF NOT EXISTS cache_read_tokens bigint;
  ALTER TABLE runs ADD COLUMN IF NOT EXISTS cache_write_tokens bigint;
  ALTER TABLE runs ADD COLUMN IF NOT EXISTS premium_requests double precision;
  ALTER TABLE epics ADD COLUMN IF NOT EXISTS pr_url text;
  ALTER TABLE epics ADD COLUMN IF NOT EXISTS pr_checked_at timestamptz;
  CREATE INDEX IF NOT EXISTS runs_host_running ON runs (repo_id, host, id) WHERE status = 'running';
  CREATE INDEX IF NOT EXISTS signals_epic ON signals (repo_id, epic_id, id);
  CREATE INDEX IF NOT EXISTS signal_locations_signal ON signal_locations (signal_id, id);
  `,
];
