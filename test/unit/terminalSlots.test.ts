// Agent terminals in the editor (docs/editor-scheduler.md): one per epic and role, named so a tab
// says whose it is, and at most a few kept, never closing one whose run is under way.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { terminalKey, terminalName, toClose } from '../../src/extension/model/terminalSlots.ts';

test('a terminal is named by role and epic title, cut to stay readable in a tab', () => {
  assert.equal(terminalName('Ralph', 'Add caching'), 'Ralph · Add caching');
  assert.equal(
    terminalName('Lisa', 'Migrate the billing exports to the new ledger'),
    'Lisa · Migrate the billing exp…',
  );
  assert.equal(terminalName('Ralph', undefined), 'Ralph');
});

test('runs of one role on one epic share a terminal; a run for no epic has its own', () => {
  assert.equal(
    terminalKey('sf-a3f8', 'ralph', 'Ralph · sf-a3f8 · step-1'),
    terminalKey('sf-a3f8', 'ralph', 'Ralph · sf-a3f8 · step-2'),
  );
  assert.notEqual(terminalKey('sf-a3f8', 'ralph', 'x'), terminalKey('sf-a3f8', 'bart', 'x'));
  assert.notEqual(terminalKey(undefined, 'setup', 'a'), terminalKey(undefined, 'setup', 'b'));
});

test('past the limit the least recently used terminals close, never one whose run is under way', () => {
  const slots = Array.from({ length: 10 }, (_, i) => ({ id: i, lastUsed: i, running: i === 0 }));
  assert.deepEqual(
    toClose(slots, 8).map((s) => s.id),
    [1, 2],
    'the oldest ended ones; the oldest of all still runs',
  );
  assert.deepEqual(toClose(slots.slice(0, 8), 8), []);
  assert.deepEqual(
    toClose(
      slots.map((s) => ({ ...s, running: true })),
      8,
    ),
    [],
    'all running: none closes',
  );
});
