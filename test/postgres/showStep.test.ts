// `show PLAN --step` of test/cli/planBytes.test.ts on PostgreSQL: the same assertions, on a fresh
// database of this file's throwaway server.
import { before } from 'node:test';
import { ensureCli } from '../helpers/gitRepo.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { showStepSuite } from '../helpers/showStepSuite.ts';

const pg = postgresForFile({ durability: 'fast' });

before(() => ensureCli());

showStepSuite('postgres', () => ({
  SPRINGFIELD_DATABASE_URL: pg.server.createDatabase('show_step'),
  SPRINGFIELD_HOST: 'host-a',
}));
