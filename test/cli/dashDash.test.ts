// `--` ends the options of every command (test/helpers/dashDashSuite.ts), on SQLite; and the parser
// itself: only a command that takes a trailing command (`run`) keeps what follows `--` apart.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { parseArgs } from '../../src/cli/args.ts';
import { ensureCli } from '../helpers/gitRepo.ts';
import { dashDashSuite } from '../helpers/dashDashSuite.ts';

before(() => ensureCli());

test('after --, words are positionals, or the trailing command of a command that takes one', () => {
  const specs = [
    { name: 'force', type: 'string' as const, description: '' },
    { name: 'json', type: 'boolean' as const, description: '' },
  ];
  const positionals = [
    { name: 'a', required: true, description: '' },
    { name: 'b', required: false, description: '' },
  ];
  const plain = parseArgs('x', ['--json', '--', '-odd', '--force'], specs, positionals);
  assert.deepEqual(
    [plain.positionals, plain.rest, plain.options.get('json'), plain.options.has('force')],
    [['-odd', '--force'], [], true, false],
  );
  const run = parseArgs('run', ['--force', 'r', '--', 'node', '-e', '0', '--', '--json'], specs, [], true);
  assert.deepEqual(
    [run.positionals, run.rest, run.options.get('force'), run.options.has('json')],
    [[], ['node', '-e', '0', '--', '--json'], 'r', false],
  );
});

dashDashSuite('sqlite', () => ({}));
