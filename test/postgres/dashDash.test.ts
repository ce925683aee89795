// `--` ends the options of every command (test/helpers/dashDashSuite.ts), on PostgreSQL.
import { before } from 'node:test';
import { ensureCli } from '../helpers/gitRepo.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { dashDashSuite } from '../helpers/dashDashSuite.ts';

const pg = postgresForFile({ durability: 'fast' });

before(() => ensureCli());

dashDashSuite('postgres', () => ({
  SPRINGFIELD_DATABASE_URL: pg.server.createDatabase('dash_dash'),
  SPRINGFIELD_HOST: 'host-a',
}));
