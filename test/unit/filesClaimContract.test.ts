// The files rule of claims (docs/files.md, "Claims by agents themselves"), written once against the
// Store interface and run on every backend (test/helpers/storeBackends.ts): a ready step whose declared
// files overlap those of a step another holder claimed is passed over, and when every ready step is,
// the claim says why; ready lists them as waiting. The same holder is never held back by its own
// claims, a released or completed step holds nothing, and steps without files are claimed as before.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import type { Store } from '../../src/core/store/index.ts';
import type { Actor, ClaimResult } from '../../src/core/store/types.ts';
import { contractBackends } from '../helpers/storeBackends.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const A: Actor = { worktree: '/wt/a', agent: 'agent-a' };
const B: Actor = { worktree: '/wt/b', agent: 'agent-b' };
const ADMIN: Actor = { worktree: '/wt/admin', agent: null };
const T0 = Date.UTC(2026, 0, 1);
const source = (planPath: string, text: string): PlanSource => planSourceOf(planPath, parsePlan(text, planPath));

/** Plan one: step-1 edits the user model, step-2 the docs (its substep the README), step-3 declares nothing. */
const ONE = source(
  'plans/one.md',
  `# Plan: One
## Step 1: User model
**Files:** src/db/user.ts
- [ ] a
## Step 2: Docs
**Files:** docs/**
- [ ] b
### Step 2.1: Readme
**Files:** README.md
- [ ] c
## Step 3: Free
- [ ] d
`,
);
/** Plan two: step-1 also edits the user model (through a glob), step-2 the README, step-3 the CLI. */
const TWO = source(
  'plans/two.md',
  `# Plan: Two
## Step 1: Users again
**Files:** src/db/*.ts
- [ ] a
## Step 2: Readme
**Files:** README.md
- [ ] b
## Step 3: Cli
**Files:** src/cli/**
- [ ] c
`,
);
/** The same plans without any Files: line. */
const PLAIN_ONE = source('plans/one.md', '# Plan: One\n## Step 1: A\n- [ ] a\n## Step 2: B\n- [ ] b\n');
const PLAIN_TWO = source('plans/two.md', '# Plan: Two\n## Step 1: A\n- [ ] a\n## Step 2: B\n- [ ] b\n');

type Claimed = Extract<ClaimResult, { claimed: true }>;
type Unclaimed = Extract<ClaimResult, { claimed: false }>;

for (const backend of contractBackends()) {
  describe(`claims and files on ${backend.name}`, () => {
    async function setup(
      t: TestContext,
      plans: PlanSource[] = [ONE, TWO],
    ): Promise<{ store: Store; clock: ManualClock }> {
      const clock = new ManualClock(T0);
      const store = backend.open(t, clock);
      for (const plan of plans) await store.initPlan(plan, ADMIN);
      return { store, clock };
    }
    async function claim(store: Store, plan: PlanSource, actor: Actor, leaseSeconds?: number): Promise<Claimed> {
      const r = await store.claimNext(plan, actor, leaseSeconds === undefined ? {} : { leaseSeconds });
      assert.ok(r.claimed, `expected a claim, got ${JSON.stringify(r)}`);
      return r;
    }

    test("a ready step sharing a file with another holder's claim is passed over for the next; ready says why", async (t) => {
      const { store } = await setup(t);
      assert.equal((await claim(store, ONE, A)).step_anchor, 'step-1');
      // Two's step-1 (src/db/*.ts) meets One's step-1 (src/db/user.ts): B gets step-2.
      assert.equal((await claim(store, TWO, B)).step_anchor, 'step-2');
      const ready = await store.ready('plans/two.md', B);
      assert.deepEqual(ready.ready_steps, ['step-3']);
      assert.deepEqual(ready.files_waiting, [
        {
          anchor: 'step-1',
          shares: ['src/db/*.ts'],
          with_plan: 'plans/one.md',
          with_step: 'step-1',
          with_epic: null,
          with_holder: '/wt/a',
          message: 'step-1 shares src/db/*.ts with plans/one.md step-1 (held by /wt/a)',
        },
      ]);
      // Substeps' files count for their step: One's step-2 (docs/**, README.md) meets Two's step-2 (README.md), which B holds.
      const one = await store.ready('plans/one.md', A);
      assert.deepEqual(
        [one.ready_steps, one.files_waiting.map((w) => [w.anchor, w.shares, w.with_step])],
        [['step-3'], [['step-2', ['README.md'], 'step-2']]],
      );
      assert.equal((await claim(store, ONE, A)).step_anchor, 'step-3');
    });

    test('every ready step held back: claimed:false, reason files_busy, with each step and what it shares', async (t) => {
      const { store } = await setup(t, [
        ONE,
        source(
          'plans/two.md',
          '# Plan: Two\n## Step 1: Users\n**Files:** src/db/user.ts\n- [ ] a\n## Step 2: More users\n**Files:** src/db/**\n- [ ] b\n',
        ),
      ]);
      await claim(store, ONE, A);
      const r = await store.claimNext(
        source(
          'plans/two.md',
          '# Plan: Two\n## Step 1: Users\n**Files:** src/db/user.ts\n- [ ] a\n## Step 2: More users\n**Files:** src/db/**\n- [ ] b\n',
        ),
        B,
      );
      assert.equal(r.claimed, false);
      const none = r as Unclaimed;
      assert.equal(none.reason, 'files_busy');
      assert.equal(none.all_completed, false);
      assert.deepEqual(
        none.files_waiting?.map((w) => w.message),
        [
          'step-1 shares src/db/user.ts with plans/one.md step-1 (held by /wt/a)',
          'step-2 shares src/db/** with plans/one.md step-1 (held by /wt/a)',
        ],
      );
      const ready = await store.ready('plans/two.md', B);
      assert.deepEqual([ready.ready_steps, ready.files_waiting.map((w) => w.anchor)], [[], ['step-1', 'step-2']]);
    });

    test('the same holder is not held back by its own claims', async (t) => {
      const { store } = await setup(t);
      await claim(store, ONE, A);
      assert.equal((await claim(store, TWO, A)).step_anchor, 'step-1');
      assert.deepEqual((await store.ready('plans/two.md', A)).files_waiting, []);
    });

    test('a released, completed or expired claim holds nothing back', async (t) => {
      const { store, clock } = await setup(t);
      const held = await claim(store, ONE, A, 60);
      // Expired: its lease ran out.
      clock.advance(61_000);
      assert.deepEqual((await store.ready('plans/two.md', B)).files_waiting, []);
      const reclaimed = await claim(store, ONE, A);
      assert.equal(reclaimed.step_anchor, 'step-1');
      // Released by an admin.
      await store.reset('plans/one.md', 'step-1', ADMIN, 'test');
      assert.equal((await claim(store, TWO, B)).step_anchor, 'step-1');
      await store.reset('plans/two.md', 'step-1', ADMIN, 'test');
      // Completed.
      const again = await claim(store, ONE, A);
      assert.equal(again.step_anchor, 'step-1');
      assert.notEqual(again.claim_token, held.claim_token);
      assert.equal((await claim(store, TWO, B)).step_anchor, 'step-2');
      await store.complete(ONE, 'step-1', { ...A, token: again.claim_token }, { forceReason: 'test' });
      assert.deepEqual((await store.ready('plans/two.md', B)).ready_steps, ['step-1', 'step-3']);
      assert.equal((await claim(store, TWO, B)).step_anchor, 'step-1');
    });

    test("a claim of a chosen step (the scheduler's) takes that step, or nothing when it is not claimable", async (t) => {
      const { store } = await setup(t, [PLAIN_ONE]);
      const chosen = await store.claimNext(PLAIN_ONE, A, { anchor: 'step-2', files: false });
      assert.ok(chosen.claimed, JSON.stringify(chosen));
      assert.equal(chosen.step_anchor, 'step-2');
      const again = await store.claimNext(PLAIN_ONE, A, { anchor: 'step-2', files: false });
      assert.equal(again.claimed, false, JSON.stringify(again));
      assert.equal((again as Unclaimed).reason, 'no_ready_steps');
      assert.deepEqual((await store.ready('plans/one.md', A)).ready_steps, ['step-1']);
      assert.equal((await claim(store, PLAIN_ONE, A)).step_anchor, 'step-1');
    });

    test('steps without files are claimed as before, beside claims that declare files', async (t) => {
      const { store } = await setup(t, [PLAIN_ONE, PLAIN_TWO]);
      assert.equal((await claim(store, PLAIN_ONE, A)).step_anchor, 'step-1');
      assert.equal((await claim(store, PLAIN_TWO, B)).step_anchor, 'step-1');
      assert.deepEqual((await store.ready('plans/two.md', B)).files_waiting, []);
      // A step without files is never held back by one with files, nor holds one back.
      const mixed = await setup(t, [ONE, TWO]);
      await claim(mixed.store, ONE, A);
      await claim(mixed.store, ONE, A);
      assert.equal((await claim(mixed.store, ONE, B)).step_anchor, 'step-3');
      const stepRecord = await mixed.store.stepRecord('plans/one.md', 'step-3');
      assert.equal('files' in stepRecord, false, 'the step record keeps its shape');
    });
  });
}
