// The words the editor shows: people and worktrees by name, steps as "Step 2.1", statuses as
// words, countdowns and "5m ago" with the moment they next change (what the live timer sleeps for).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { holderName, humanSpan, takenOverText } from '../../src/core/names.ts';
import { ago, leaseLeft, progressBar, shortDuration, since, statusWord, stepName } from '../../src/extension/views/format.ts';

const NOW = new Date(Date.UTC(2026, 0, 10, 12, 0, 0));
const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();

test('people and worktrees by name: the agent id, "you" for this worktree, else the folder name', () => {
  assert.equal(holderName('/repos/shop.ralph-b', 'ralph-b', '/repos/shop'), 'ralph-b');
  assert.equal(holderName('/repos/shop', null, '/repos/shop'), 'you');
  assert.equal(holderName('/repos/shop.wt-a', null, '/repos/shop'), 'shop.wt-a');
  assert.equal(holderName('C:\\work\\shop', null), 'shop');
  assert.equal(holderName(null, null), 'nobody');
});

test('a takeover says from whom and how long ago the lease ran out', () => {
  assert.equal(takenOverText({ worktree: '/r/shop.b', agent: 'ralph-b', leaseExpiresAt: at(-6 * 60_000 - 20_000) }, NOW), 'taken over from ralph-b, lease expired 6 min ago');
  assert.equal(takenOverText({ worktree: '/r/shop.b', agent: null, leaseExpiresAt: at(-3000) }, NOW), 'taken over from shop.b, lease expired 3 s ago');
  assert.equal(humanSpan(2 * 3600_000 + 5 * 60_000), '2 h 5 min');
  assert.equal(humanSpan(3 * 86400_000), '3 days');
});

test('steps read as "Step 2.1" and statuses as words', () => {
  assert.equal(stepName('2.1'), 'Step 2.1');
  assert.equal(statusWord('in_progress'), 'in progress');
  assert.equal(statusWord('changes_requested'), 'changes requested');
  assert.equal(statusWord('awaiting_person'), 'waiting for you');
  assert.equal(statusWord('some_new_status'), 'some new status');
});

test('durations and progress bars', () => {
  assert.equal(shortDuration(40_999), '40s');
  assert.equal(shortDuration(12 * 60_000 + 59_000), '12m');
  assert.equal(shortDuration(105 * 60_000), '1h45m');
  assert.equal(shortDuration(3 * 86400_000), '3d');
  assert.equal(progressBar(3, 5), '▰▰▰▱▱ 3/5');
  assert.equal(progressBar(0, 0), '▱▱▱▱▱ 0/0');
});

test('a countdown says when it next changes: at the next shown unit, and at expiry at the latest', () => {
  assert.deepEqual(leaseLeft(at(6 * 60_000 + 30_000), NOW), { text: '6m left', nextMs: 30_001 });
  assert.deepEqual(leaseLeft(at(45_500), NOW), { text: '45s left', nextMs: 501 });
  assert.deepEqual(leaseLeft(at(-6 * 60_000), NOW), { text: 'lease expired 6m ago', nextMs: 60_000 });
  // the text really changes when it says: one millisecond before it is the same, at it it is not
  const lease = at(6 * 60_000 + 30_000);
  const { nextMs } = leaseLeft(lease, NOW);
  assert.equal(leaseLeft(lease, new Date(NOW.getTime() + nextMs - 2)).text, '6m left');
  assert.equal(leaseLeft(lease, new Date(NOW.getTime() + nextMs)).text, '5m left');
});

test('"5m ago" and "running 3m" grow with the clock', () => {
  assert.deepEqual(since(at(-(3 * 60_000 + 10_000)), NOW), { text: '3m', nextMs: 50_000 });
  assert.deepEqual(ago(at(-2000), NOW), { text: 'just now', nextMs: 3000 });
  assert.deepEqual(ago(at(-(5 * 60_000)), NOW), { text: '5m ago', nextMs: 60_000 });
  const started = at(-(59_000 + 400));
  const { nextMs } = ago(started, NOW);
  assert.equal(ago(started, new Date(NOW.getTime() + nextMs)).text, '1m ago');
  assert.equal(ago(started, new Date(NOW.getTime() + nextMs - 1)).text, '59s ago');
});
