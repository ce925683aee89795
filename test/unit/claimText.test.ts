// What a claim says, the same in the CLI, the editor and the agents' tool (core/names.ts), from the
// results of a real SQLite store; and where a claim belongs (claimPlace), the rule the store refuses by.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/core/clock.ts';
import { claimedText, nothingClaimedText } from '../../src/core/names.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import { claimElsewhere, claimPlace, openStore, type Actor, type Store } from '../../src/core/store/index.ts';

const P = 'plans/p.md';
const A: Actor = { worktree: '/wt/a', agent: 'agent-a' };
const B: Actor = { worktree: '/wt/b', agent: 'agent-b' };
const PLAN: PlanSource = planSourceOf(
  P,
  parsePlan('# Plan: Two\n## Step 1: First\n- [ ] a\n## Step 2: Second\n**Depends on:** #step-1\n- [ ] b\n', P),
);

function open(t: TestContext, clock: ManualClock): Store {
  const dir = mkdtempSync(join(tmpdir(), 'springfield-claim-text-'));
  const store = openStore({ location: join(dir, 'state.db'), ifMissing: 'create', clock });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

test('a claim and each reason for none read the same everywhere', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const store = open(t, clock);
  await store.initPlan(PLAN, A);
  const first = await store.claimNext(PLAN, A, { leaseSeconds: 60 });
  assert.ok(first.claimed);
  assert.equal(claimedText(first, first.step_anchor, clock.now(), A.worktree), 'Claimed step-1: First');

  const none = await store.claimNext(PLAN, B);
  assert.ok(!none.claimed);
  assert.equal(
    nothingClaimedText(none),
    `Nothing to claim in ${P}: every open step is claimed or waits for another (claimed: step-1; waiting on dependencies: step-2).`,
  );

  clock.advance(120_000);
  const takeover = await store.claimNext(PLAN, B);
  assert.ok(takeover.claimed);
  assert.equal(
    claimedText(takeover, 'Step 1', clock.now(), B.worktree),
    'Claimed Step 1: First (taken over from agent-a, lease expired 1 min ago)',
  );

  await store.complete(PLAN, 'step-1', B, { forceReason: 'test' });
  const second = await store.claimNext(PLAN, B);
  assert.ok(second.claimed);
  await store.complete(PLAN, 'step-2', B, { forceReason: 'test' });
  const done = await store.claimNext(PLAN, B);
  assert.ok(!done.claimed);
  assert.equal(nothingClaimedText(done), `Nothing to claim in ${P}: every step is completed.`);
});

test("a claim belongs in the epic's worktree unless the claimer is there or on its branch", () => {
  const epic = { id: 'sf-1', worktree_path: '/wt/epic', branch: 'refs/heads/springfield/sf-1' };
  assert.deepEqual(claimPlace(epic, { worktree: '/wt/epic' }), { worktree: '/wt/epic', elsewhere: false });
  assert.deepEqual(claimPlace(epic, { worktree: '/wt/main', branch: 'springfield/sf-1' }), {
    worktree: '/wt/main',
    elsewhere: false,
  });
  assert.deepEqual(claimPlace(epic, { worktree: '/wt/main', branch: 'main' }), {
    worktree: '/wt/epic',
    elsewhere: true,
  });
  assert.deepEqual(claimPlace(null, { worktree: '/wt/main' }), { worktree: '/wt/main', elsewhere: false });
  // The store refuses exactly where the editor would claim for the epic's worktree instead.
  assert.equal(claimElsewhere(P, epic, { worktree: '/wt/main', branch: 'springfield/sf-1' }), null);
  assert.match(claimElsewhere(P, epic, { worktree: '/wt/main', branch: 'main' }) ?? '', /\/wt\/epic/);
});
