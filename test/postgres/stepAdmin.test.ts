// The step-admin CLI tests of test/cli/stepAdmin.test.ts, on PostgreSQL: the same assertions, each
// suite on a fresh database of this file's throwaway server (reopen and its fencing; plan propose and
// approve, ready while the epic waits, epic start).
import { before } from 'node:test';
import { ensureCli } from '../helpers/gitRepo.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { epicReadySuite, reopenSuite } from '../helpers/stepAdminSuite.ts';

const pg = postgresForFile({ durability: 'fast' });
let databases = 0;
const onPostgres = () => ({
  SPRINGFIELD_DATABASE_URL: pg.server.createDatabase(`admin_${++databases}`),
  SPRINGFIELD_HOST: 'host-a',
});

before(() => ensureCli());

reopenSuite('postgres', onPostgres);
epicReadySuite('postgres', onPostgres);
