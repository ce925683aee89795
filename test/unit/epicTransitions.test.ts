import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EPIC_EVENTS,
  EPIC_STATUSES,
  ROLE_NAMES,
  SIGNAL_TYPES,
  TRANSITIONS,
  allowedEvents,
  signalEvent,
  transition,
} from '../../src/core/epics/index.ts';
import type { EpicEvent, EpicStatus, Role } from '../../src/core/epics/index.ts';
import { RefusedError } from '../../src/core/errors.ts';

/** docs/state-machine.md's table written out independently of the implementation: [from, event, to, next role]; `previous`: where the epic was blocked from. */
const EXPECTED: readonly [EpicStatus, EpicEvent, EpicStatus | 'previous', Role | null][] = [
  ['planned', 'plan_approved', 'ready', null],
  ['ready', 'start', 'in_progress', 'ralph'],
  ['in_progress', 'steps_completed', 'implemented', 'bart'],
  ['implemented', 'signal_pass', 'verified', 'lovejoy'],
  ['implemented', 'signal_implementation_failure', 'in_progress', 'ralph'],
  ['implemented', 'signal_option_viability_failure', 'blocked', 'lisa'],
  ['implemented', 'signal_adr_invalidated', 'blocked', 'lisa'],
  // A person's review may send a verified epic back to Ralph before it merges.
  ['verified', 'signal_implementation_failure', 'in_progress', 'ralph'],
  ['verified', 'merged', 'done', null],
  ['blocked', 'new_plan_approved', 'ready', 'ralph'],
  ['planned', 'defer', 'deferred', null],
  ['ready', 'defer', 'deferred', null],
  ['in_progress', 'defer', 'deferred', null],
  ['implemented', 'defer', 'deferred', null],
  ['verified', 'defer', 'deferred', null],
  ['blocked', 'defer', 'deferred', null],
  ['deferred', 'resume', 'planned', null],
  // docs/state-machine.md: a discarded plan sets the epic aside until a person resumes it (a re-plan's too).
  ['planned', 'plan_discarded', 'deferred', null],
  ['blocked', 'plan_discarded', 'deferred', null],
  ['in_progress', 'iteration_budget_exhausted', 'blocked', 'lisa'],
  ['implemented', 'iteration_budget_exhausted', 'blocked', 'lisa'],
  // Agent faults (docs/scheduler-faults.md): a person retries; blocked → blocked keeps the newest reason.
  ['planned', 'agent_failed', 'blocked', null],
  ['ready', 'agent_failed', 'blocked', null],
  ['in_progress', 'agent_failed', 'blocked', null],
  ['implemented', 'agent_failed', 'blocked', null],
  ['blocked', 'agent_failed', 'blocked', null],
  // An agent that cannot run at all (not installed, not logged in): blocked at once, a person fixes it and retries.
  ['planned', 'agent_unavailable', 'blocked', null],
  ['ready', 'agent_unavailable', 'blocked', null],
  ['in_progress', 'agent_unavailable', 'blocked', null],
  ['implemented', 'agent_unavailable', 'blocked', null],
  ['blocked', 'agent_unavailable', 'blocked', null],
  ['in_progress', 'plan_drift', 'blocked', null],
  // PR mode: no gh, no remote, a refused push or a pull request closed unmerged (a person retries).
  ['verified', 'merge_failed', 'blocked', null],
  // A spent cost budget pauses the epic before a role's next run (docs/budgets.md): a person raises it and retries.
  ['planned', 'budget_exhausted', 'blocked', null],
  ['ready', 'budget_exhausted', 'blocked', null],
  ['in_progress', 'budget_exhausted', 'blocked', null],
  ['implemented', 'budget_exhausted', 'blocked', null],
  ['blocked', 'budget_exhausted', 'blocked', null],
  ['blocked', 'retry', 'previous', null],
];

const ALL_STATUSES: readonly EpicStatus[] = [
  'planned',
  'ready',
  'in_progress',
  'implemented',
  'verified',
  'done',
  'deferred',
  'blocked',
];
const ALL_EVENTS: readonly EpicEvent[] = [
  'plan_approved',
  'start',
  'steps_completed',
  'signal_pass',
  'signal_implementation_failure',
  'signal_option_viability_failure',
  'signal_adr_invalidated',
  'merged',
  'new_plan_approved',
  'defer',
  'resume',
  'iteration_budget_exhausted',
  'agent_failed',
  'agent_unavailable',
  'plan_drift',
  'retry',
  'plan_discarded',
  'merge_failed',
  'budget_exhausted',
];

function expectedRow(from: EpicStatus, event: EpicEvent) {
  return EXPECTED.find(([f, e]) => f === from && e === event);
}

test('statuses and events are exactly the spec lists', () => {
  assert.deepEqual([...EPIC_STATUSES].sort(), [...ALL_STATUSES].sort());
  assert.deepEqual([...EPIC_EVENTS].sort(), [...ALL_EVENTS].sort());
  assert.equal(TRANSITIONS.length, EXPECTED.length);
});

for (const [from, event, to, role] of EXPECTED) {
  test(`${from} --${event}--> ${to} (${role ?? 'nobody'})`, () => {
    if (to !== 'previous') return assert.deepEqual(transition(from, event), { to, nextRole: role });
    for (const back of ['planned', 'ready', 'in_progress', 'implemented', 'blocked'] as const)
      assert.deepEqual(transition(from, event, back), { to: back, nextRole: role });
    assert.throws(
      () => transition(from, event),
      /cannot retry: the epic was not blocked by agent_failed or agent_unavailable or plan_drift or merge_failed or budget_exhausted/,
    );
  });
}

test('every (status, event) pair outside the table is refused with the allowed events', () => {
  let refused = 0;
  for (const from of ALL_STATUSES) {
    const allowed = ALL_EVENTS.filter((e) => expectedRow(from, e) !== undefined);
    assert.deepEqual(allowedEvents(from), allowed, `allowed events from ${from}`);
    for (const event of ALL_EVENTS) {
      if (expectedRow(from, event)) continue;
      refused++;
      assert.throws(
        () => transition(from, event),
        (err: unknown) => {
          assert.ok(err instanceof RefusedError);
          assert.equal(err.code, 'invalid_transition');
          assert.equal(err.category, 'refused');
          const list = allowed.length > 0 ? allowed.join(', ') : 'none';
          assert.equal(err.message, `cannot ${event} an epic that is ${from.replace(/_/g, ' ')}; allowed: ${list}`);
          return true;
        },
      );
    }
  }
  assert.equal(refused, ALL_STATUSES.length * ALL_EVENTS.length - EXPECTED.length);
});

test('done allows nothing; deferred only resumes; defer is refused from deferred', () => {
  assert.deepEqual(allowedEvents('done'), []);
  assert.deepEqual(allowedEvents('deferred'), ['resume']);
  assert.throws(() => transition('done', 'defer'), /cannot defer an epic that is done; allowed: none/);
  assert.throws(() => transition('deferred', 'defer'), /allowed: resume$/);
  assert.throws(
    () => transition('planned', 'start'),
    /cannot start an epic that is planned; allowed: plan_approved, defer, agent_failed, agent_unavailable, plan_discarded, budget_exhausted$/,
  );
});

test('signals map to their events', () => {
  assert.deepEqual(SIGNAL_TYPES.map(signalEvent), [
    'signal_pass',
    'signal_implementation_failure',
    'signal_option_viability_failure',
    'signal_adr_invalidated',
  ]);
});

test('role display names', () => {
  assert.deepEqual(ROLE_NAMES, { marge: 'Marge', lisa: 'Lisa', ralph: 'Ralph', bart: 'Bart', lovejoy: 'Lovejoy' });
});
