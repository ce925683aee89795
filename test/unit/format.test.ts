// The words the editor shows: people and worktrees by name, steps as "Step 2.1", statuses as
// words, countdowns and "5m ago" with the moment they next change (what the live timer sleeps for).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { holderName, takenOverText } from '../../src/core/names.ts';
import { duration, until } from '../../src/cli/output.ts';
import { isEpicId } from '../../src/shared/epicId.ts';
import { agoText, countdown, humanSpan, percent, percentBar } from '../../src/shared/format.ts';
import { ROLE_NAMES } from '../../src/shared/roles.ts';
import {
  ago,
  leaseLeft,
  progressBar,
  shortDuration,
  since,
  statusWord,
  stepName,
} from '../../src/extension/views/viewText.ts';

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
  assert.equal(
    takenOverText({ worktree: '/r/shop.b', agent: 'ralph-b', leaseExpiresAt: at(-6 * 60_000 - 20_000) }, NOW),
    'taken over from ralph-b, lease expired 6 min ago',
  );
  assert.equal(
    takenOverText({ worktree: '/r/shop.b', agent: null, leaseExpiresAt: at(-3000) }, NOW),
    'taken over from shop.b, lease expired 3 s ago',
  );
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

test("one formatting module for every surface: the CLI's bars and one-off spans, the dashboard's ticking countdown", () => {
  assert.equal(percentBar(1, 3), '████░░░░░░░░  33%');
  assert.equal(percentBar(3, 3), '████████████ 100%');
  assert.equal(percentBar(0, 0), '████████████ 100%', 'nothing to do counts as done in show');
  assert.equal(percent(0, 0), 0, 'an empty bar in a view');
  assert.equal(percent(2, 3), 67);
  // A one-off message rounds to the second: a 2 h lease taken a moment ago reads "2h", not "1h59m".
  assert.equal(until(at(2 * 3600_000 - 30), NOW), 'expires in 2h');
  assert.equal(until(at(-(3 * 60_000 + 10_000)), NOW), 'expired 3m ago');
  assert.equal(duration(105 * 60_000 + 400), '1h45m');
  assert.equal(agoText(4999), 'just now');
  assert.equal(agoText(2 * 3600_000 + 5 * 60_000), '2h05m ago');
  assert.equal(countdown(12 * 60_000 + 5_000), '12m 05s');
  assert.equal(countdown(3600_000 + 5 * 60_000), '1h 05m');
  assert.equal(countdown(-45_000), 'expired 45s ago');
  assert.deepEqual(Object.values(ROLE_NAMES), ['Marge', 'Lisa', 'Ralph', 'Bart', 'Lovejoy']);
  assert.ok(
    isEpicId('sf-a3f8') && isEpicId('sf-a3f8c1') && !isEpicId('sf-a3') && !isEpicId('sf-A3F8') && !isEpicId('xsf-a3f8'),
  );
});
