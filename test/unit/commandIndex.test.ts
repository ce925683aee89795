import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMAND_MODULES } from '../../src/cli/commands/index.ts';
import { STEP_MODULES } from '../../src/cli/commands/modules.ts';
import { STEP_COMMANDS } from '../../src/cli/fastPath/stepNames.ts';
import { commandsFor as commandsIn, loadAll } from '../../src/cli/dispatch.ts';

const allCommands = () => loadAll(COMMAND_MODULES);
const commandsFor = (word: string | undefined) => commandsIn(COMMAND_MODULES, word);

test('each command module defines exactly the names the index lists, in order, and no name twice', async () => {
  for (const m of COMMAND_MODULES) {
    assert.deepEqual(
      (await m.load()).map((c) => c.name),
      m.names,
    );
  }
  const names = (await allCommands()).map((c) => c.name);
  assert.deepEqual(
    names,
    COMMAND_MODULES.flatMap((m) => m.names),
  );
  assert.equal(new Set(names).size, names.length);
});

test('a word loads its command, or every member of the group it names, and nothing from other modules', async () => {
  assert.deepEqual(
    (await commandsFor('claim')).map((c) => c.name),
    ['claim'],
  );
  assert.deepEqual(
    (await commandsFor('signal')).map((c) => c.name),
    ['signal', 'signal decide', 'signals'],
    'the module of signal, whole',
  );
  assert.deepEqual(
    (await commandsFor('plan')).map((c) => c.name),
    ['plan propose', 'plan approve', 'plan request-changes', 'plan discard', 'plan note', 'plan show'],
  );
  assert.deepEqual(await commandsFor('nonsense'), []);
  assert.deepEqual(await commandsFor(undefined), []);
});

test('the step commands the entry bundle runs by itself are the first modules of the whole CLI', () => {
  assert.deepEqual(COMMAND_MODULES.slice(0, STEP_MODULES.length), STEP_MODULES);
  assert.deepEqual(
    STEP_COMMANDS,
    STEP_MODULES.flatMap((m) => m.names),
    'the launcher routes exactly the step commands to the entry bundle',
  );
});
