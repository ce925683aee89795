// The dashboard's timeline reads as sentences: who (by name), what, to which epic; reasons without
// absolute paths, ISO timestamps or hashes; a role and a kind for its filters.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EventView } from '../../src/core/store/types.ts';
import {
  humanise,
  roleOf,
  timelineEntry,
  type TimelineNames,
  withoutReviewEchoes,
} from '../../src/extension/webviews/timeline.ts';

const NAMES: TimelineNames = {
  self: '/home/me/shop',
  epicOfPlan: new Map([['plans/cache.md', 'sf-a3f8']]),
  planTitle: new Map([['plans/cache.md', 'Add a caching layer']]),
  stepName: new Map([['plans/cache.md#step-2', 'Step 2 (Add cache store)']]),
};

function event(e: Partial<EventView>): EventView {
  return {
    id: 1,
    at: '2026-01-10T12:00:00.000Z',
    worktree: '/home/me/shop',
    agent: null,
    entity: 'step',
    action: 'claim',
    plan_path: 'plans/cache.md',
    step_anchor: 'step-2',
    epic_id: null,
    from_status: null,
    to_status: null,
    reason: null,
    data: null,
    ...e,
  };
}

test('roles come from agent ids; no agent id is a person', () => {
  assert.deepEqual(['ralph-b', 'lisa', 'bart', 'Ralph2', 'codex', null].map(roleOf), [
    'ralph',
    'lisa',
    'bart',
    'ralph',
    'agent',
    'person',
  ]);
});

test('reasons lose absolute paths, ISO timestamps and hashes', () => {
  const text = humanise(
    'lease of /tmp/springfield-demo-x1/shop.ralph-b expired at 2026-01-10T11:54:00.000Z; commit 3f9a2c1d4e5b6a7980 kept',
  );
  assert.doesNotMatch(text, /\/tmp|\d{4}-\d{2}-\d{2}T|3f9a2c1/);
  assert.match(text, /^lease of shop\.ralph-b expired at \d{1,2}:\d{2}.*; commit kept$/);
  assert.equal(humanise('plain words stay'), 'plain words stay');
});

test('events read as sentences with the step by name and the epic found through its plan', () => {
  const claim = timelineEntry(event({ agent: 'ralph-a', worktree: '/tmp/x/shop.ralph-a' }), NAMES);
  assert.deepEqual(claim, {
    id: 1,
    at: '2026-01-10T12:00:00.000Z',
    who: 'ralph-a',
    role: 'ralph',
    kind: 'step',
    epicId: 'sf-a3f8',
    text: 'claimed Step 2 (Add cache store)',
    reason: null,
  });
  const takeover = timelineEntry(
    event({
      action: 'reclaim',
      reason: 'lease of /tmp/x/shop.b expired at 2026-01-10T11:00:00Z',
      data: { previous_holder: '/tmp/x/shop.b', previous_agent: 'ralph-b' },
    }),
    NAMES,
  );
  assert.equal(takeover.who, 'you');
  assert.equal(takeover.text, 'took over Step 2 (Add cache store) from ralph-b, whose lease had expired');
  const tick = timelineEntry(
    event({ entity: 'item', action: 'update', to_status: 'completed', data: { text: 'In-memory store' } }),
    NAMES,
  );
  assert.equal(tick.text, 'ticked “In-memory store” in Step 2 (Add cache store)');
  const approve = timelineEntry(
    event({
      entity: 'plan_version',
      action: 'approve',
      epic_id: 'sf-a3f8',
      step_anchor: null,
      data: { version: 2, plan_hash: 'ab'.repeat(32) },
    }),
    NAMES,
  );
  assert.deepEqual([approve.kind, approve.text], ['plan', 'approved version 2 of the plan']);
  const epic = timelineEntry(
    event({
      entity: 'epic',
      action: 'signal_implementation_failure',
      epic_id: 'sf-a3f8',
      to_status: 'in_progress',
      reason: 'implementation_failure: races',
      agent: 'bart',
    }),
    NAMES,
  );
  assert.deepEqual([epic.kind, epic.role, epic.text], ['epic', 'bart', 'sent it back to Ralph: in progress']);
  const run = timelineEntry(
    event({ entity: 'run', action: 'start', agent: 'ralph', data: { role: 'ralph', run_id: 3 } }),
    NAMES,
  );
  assert.equal(run.text, 'began a run on Step 2 (Add cache store)');
  assert.equal(
    timelineEntry(event({ entity: 'run', action: 'start', agent: null, data: { role: 'bart' } }), NAMES).text,
    'began a Bart run on Step 2 (Add cache store)',
  );
  assert.equal(
    timelineEntry(event({ entity: 'run', action: 'finish', agent: 'ralph', data: { exit_code: 1 } }), NAMES).text,
    'finished a run (exit 1)',
  );
  for (const e of [claim, takeover, tick, approve, epic, run])
    assert.doesNotMatch(`${e.who} ${e.text} ${e.reason ?? ''}`, /\/tmp|\/home|[0-9a-f]{40}/);
});

test('a merge reads without its commit hash, and a retrospective as a list of its figures', () => {
  const merged = timelineEntry(
    event({
      entity: 'epic',
      action: 'merged',
      epic_id: 'sf-a3f8',
      to_status: 'done',
      reason: 'squash-merged as 3f9a2c1d4e5b with 4 trailers',
      agent: 'scheduler',
      plan_path: null,
      step_anchor: null,
    }),
    NAMES,
  );
  assert.deepEqual([merged.text, merged.reason], ['merged it into the main branch: done', 'one squash commit']);
  const retro = timelineEntry(
    event({
      entity: 'epic',
      action: 'retrospective',
      epic_id: 'sf-a3f8',
      agent: 'scheduler',
      plan_path: null,
      step_anchor: null,
      reason: '- Sessions by role: ralph 3, bart 1 (total 4); - Plan versions: 2 · build iterations: 3',
      data: {
        sessions: { ralph: 3, bart: 1 },
        plan_versions: 2,
        build_iterations: 3,
        failed_runs: [{ id: 1 }],
        verification_failures: [],
        approval_to_merge_minutes: 75,
      },
    }),
    NAMES,
  );
  assert.deepEqual([retro.text, retro.reason], ['wrote the retrospective', null], 'no flattened markdown');
  assert.deepEqual(retro.lines, [
    'Agent sessions: Ralph 3, Bart 1 (4 in all)',
    'Plan versions: 2 · build iterations: 3',
    'Failed runs: 1 · failed verifications: none',
    'From approval to merge: 1 h 15 min',
  ]);
});

test("a review is one entry: the signal's own event beside the epic's move it caused is left out", () => {
  const at = '2026-01-10T12:00:00.000Z';
  const review = [
    event({ id: 60, at, agent: 'bart', entity: 'epic', action: 'signal_pass', epic_id: 'sf-a3f8' }),
    event({ id: 61, at, agent: 'bart', entity: 'signal', action: 'record', epic_id: 'sf-a3f8', to_status: 'pass' }),
  ];
  // A signal waiting for a person moves no epic: its event stays; so does one recorded at another moment.
  const alone = event({ id: 29, agent: 'bart', entity: 'signal', action: 'record', epic_id: 'sf-77e1' });
  const later = event({
    id: 70,
    at: '2026-01-10T12:05:00.000Z',
    agent: 'bart',
    entity: 'signal',
    action: 'record',
    epic_id: 'sf-a3f8',
  });
  assert.deepEqual(
    withoutReviewEchoes([alone, ...review, later]).map((e) => e.id),
    [29, 60, 70],
  );
});
