// The tools' refusals in the tools' own argument names, on PostgreSQL (test/helpers/toolRefusalSuite.ts).
import { postgresForFile } from '../helpers/postgres.ts';
import { toolRefusalSuite } from '../helpers/toolRefusalSuite.ts';

const pg = postgresForFile({ durability: 'fast' });

toolRefusalSuite('postgres', () => ({
  SPRINGFIELD_DATABASE_URL: pg.server.createDatabase('tool_refusals'),
  SPRINGFIELD_HOST: 'host-a',
}));
