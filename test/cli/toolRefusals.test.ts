// The tools' refusals in the tools' own argument names, on SQLite (test/helpers/toolRefusalSuite.ts).
import { toolRefusalSuite } from '../helpers/toolRefusalSuite.ts';

toolRefusalSuite('sqlite', () => ({}));
