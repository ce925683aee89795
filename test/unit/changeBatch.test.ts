// A tree's changes as VS Code is told them (issue 36): VS Code redraws a tree only after 200 ms
// without a change event, one redraw at a time, so a tree told of every store write fell tens of
// seconds behind the store while agents wrote. Nothing is said when nothing changed; changes are said
// at most once per gap, all rows since the last time at once, and once VS Code took up the last.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChangeBatch } from '../../src/extension/views/changeBatch.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('no event when no row changed; the first change is said at once', (t) => {
  const said: (string[] | undefined)[] = [];
  const batch = new ChangeBatch<string>(
    (rows) => said.push(rows),
    250,
    () => 1000,
  );
  t.after(() => batch.dispose());
  batch.add([]);
  batch.add([]);
  assert.deepEqual(said, [], 'an empty change says nothing');
  batch.add(['epic:a']);
  assert.deepEqual(said, [['epic:a']]);
});

test('changes in quick succession are said together once the gap has passed; the whole tree wins', async (t) => {
  const said: (string[] | undefined)[] = [];
  let now = 1000;
  const batch = new ChangeBatch<string>(
    (rows) => said.push(rows),
    40,
    () => now,
  );
  t.after(() => batch.dispose());
  batch.add(['epic:a']);
  batch.asked();
  // Store writes every few milliseconds, as the agents make them: each would have put VS Code's redraw off.
  for (let i = 0; i < 5; i++) {
    now += 5;
    batch.add(['epic:b', i % 2 ? 'needs' : 'epic:a']);
    batch.add([]);
  }
  assert.deepEqual(said, [['epic:a']], 'nothing more until the gap has passed');
  now += 40;
  await tick(80);
  assert.deepEqual(said, [['epic:a'], ['epic:b', 'epic:a', 'needs']], 'then every row that changed, once');
  batch.asked();
  now += 100;
  batch.add(['epic:c']);
  assert.deepEqual(said.at(-1), ['epic:c']);
  batch.asked();
  now += 5;
  batch.add(['epic:d']);
  batch.add(undefined);
  batch.flush();
  assert.deepEqual(said.at(-1), undefined, 'a whole-tree change covers the rows pending with it');
  assert.equal(said.length, 4);
});

test('the next change waits until VS Code took up the last one (it asked for a row), or its patience ran out', async (t) => {
  const said: (string[] | undefined)[] = [];
  let now = 1000;
  const batch = new ChangeBatch<string>(
    (rows) => said.push(rows),
    10,
    () => now,
    60,
  );
  t.after(() => batch.dispose());
  batch.add(['epic:a']);
  now += 20;
  batch.add(['epic:b']);
  await tick(30);
  assert.deepEqual(said, [['epic:a']], 'a loaded window is not sent a second redraw before it took up the first');
  batch.asked();
  assert.deepEqual(said, [['epic:a'], ['epic:b']], 'asked: the pending change is said at once');
  now += 20;
  batch.add(['epic:c']);
  now += 60;
  await tick(120);
  assert.deepEqual(said.at(-1), ['epic:c'], 'never asked: said once its patience ran out');
});
