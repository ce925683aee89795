// The Store's contract, written once against the interface and run on every backend
// (test/helpers/storeBackends.ts: a temp SQLite file; a fresh database on a throwaway PostgreSQL where
// one can run): claims, leases, fencing tokens, strict completion, readiness, events, init and its
// re-initialisation. Time is a ManualClock on both, so leases are tested without sleeping.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.ts';
import { planHash } from '../../src/core/plan/hash.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import type { Store } from '../../src/core/store/index.ts';
import type { Actor, ClaimResult } from '../../src/core/store/types.ts';
import { contractBackends, type Backend } from '../helpers/storeBackends.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const P = 'plans/p.md';
const A: Actor = { worktree: '/wt/a', agent: 'agent-a' };
const B: Actor = { worktree: '/wt/b', agent: 'agent-b' };
const ADMIN: Actor = { worktree: '/wt/admin', agent: null };
const T0 = Date.UTC(2026, 0, 1);
const source = (text: string): PlanSource => planSourceOf(P, parsePlan(text, P));
const iso = (ms: number): string => new Date(ms).toISOString();
const refused = (code: string) => ({ name: 'RefusedError', category: 'refused', code });

/** step-1 has two substeps (1.2 after 1.1); step-2 needs step-1; step-3 is free. */
const PLAN = source(`# Plan: Demo
## Step 1: First
**Tasks:**
- [ ] t1
- [ ] t2
**Tests:**
- [ ] u1
### Step 1.1: Sub one
- [ ] s1
### Step 1.2: Sub two
**Depends on:** #step-1-1
- [ ] s2
## Step 2: Second
**Depends on:** #step-1
- [ ] w
## Step 3: Third
- [ ] z
`);
const ONE = source('# Plan: One\n## Step 1: Only\n- [ ] a\n');
const NESTED = `# Plan: Nested

## Step 1: First {#first}
**Tasks:**
- [ ] a
- [x] b
**Tests:**
- [ ] c

### Step 1.1: Sub one
- [ ] d

### Step 1.2: Sub two
**Depends on:** #step-1-1
**Checkpoints:**
- [ ] e

## Step 2: Second
**Depends on:** #first
`;
const V1 =
  '# P\n## Step 1: One {#one}\n- [ ] a\n- [ ] b\n## Step 2: Two {#two}\n- [ ] x\n- [ ] y\n## Step 3: Three {#three}\n- [ ] t\n## Step 4: Four {#four}\n- [ ] f\n';
const V2 =
  '# P\n## Step 1: One {#one}\n- [ ] a\n- [ ] b\n## Step 2: Two renamed {#two}\n- [ ] x\n- [ ] z\n## Step 3: Three {#three}\n- [ ] t\n## Step 5: Five {#five}\n**Depends on:** #one\n- [ ] n\n';

const BACKENDS: Backend[] = contractBackends();

type Claimed = Extract<ClaimResult, { claimed: true }>;

for (const backend of BACKENDS) {
  describe(`store contract on ${backend.name}`, () => {
    async function setup(t: TestContext, plan: PlanSource = PLAN): Promise<{ store: Store; clock: ManualClock }> {
      const clock = new ManualClock(T0);
      const store = backend.open(t, clock);
      await store.initPlan(plan, ADMIN);
      return { store, clock };
    }
    async function claim(store: Store, actor: Actor, leaseSeconds?: number, plan: PlanSource = PLAN): Promise<Claimed> {
      const r = await store.claimNext(plan, actor, leaseSeconds === undefined ? {} : { leaseSeconds });
      assert.ok(r.claimed, `expected a claim, got ${JSON.stringify(r)}`);
      return r;
    }
    const step = (store: Store, anchor: string) => store.stepRecord(P, anchor);
    async function items(store: Store, anchor: string): Promise<string[]> {
      const [view] = await store.showPlans(P);
      const all = view?.steps.flatMap((s) => [s, ...s.substeps]) ?? [];
      return all.find((s) => s.anchor === anchor)?.items.map((i) => i.status) ?? [];
    }

    test('claims go by step_index and respect dependencies; nothing ready is claimed:false with the blockers', async (t) => {
      const { store } = await setup(t);
      const first = await claim(store, A);
      const second = await claim(store, B);
      const none = await store.claimNext(PLAN, ADMIN);
      assert.deepEqual(first, {
        claimed: true,
        plan_path: P,
        step_anchor: 'step-1',
        step_title: 'First',
        step_index: 0,
        substeps: ['step-1-1', 'step-1-2'],
        claim_token: 1,
        claimed_by: '/wt/a',
        agent: 'agent-a',
        remaining_ready: 1,
        total_remaining: 3,
        lease_expires_at: iso(T0 + 7200_000),
        reclaimed_from_expired: false,
        previous_holder: null,
        previous_agent: null,
        previous_lease_expires_at: null,
      });
      assert.deepEqual([second.step_anchor, second.step_index], ['step-3', 4]);
      assert.deepEqual(none, {
        claimed: false,
        plan_path: P,
        reason: 'no_ready_steps',
        all_completed: false,
        blocked_steps: ['step-2'],
        claimed_steps: ['step-1', 'step-3'],
      });
    });

    test('substeps are claimed with their parent and carry its token', async (t) => {
      const { store } = await setup(t);
      await claim(store, A);
      await store.reset(P, 'step-1', ADMIN);
      const c = await claim(store, A, 60);
      assert.equal(c.claim_token, 3);
      for (const anchor of ['step-1', 'step-1-1', 'step-1-2']) {
        const row = await step(store, anchor);
        assert.deepEqual(
          [row.status, row.claimed_by, row.claimed_agent, row.claim_token, row.lease_expires_at],
          ['claimed', '/wt/a', 'agent-a', 3, iso(T0 + 60_000)],
        );
      }
      assert.equal((await store.start(P, 'step-1-1', { ...A, token: 3 })).status, 'in_progress');
      await assert.rejects(store.start(P, 'step-1-2', B), refused('not_holder'));
    });

    test('an expired lease is reclaimed: new token, previous holder, in-progress items reopened, completed work kept', async (t) => {
      const { store, clock } = await setup(t);
      await claim(store, A, 60);
      await store.start(P, 'step-1', A);
      await store.updateItems(
        PLAN,
        'step-1',
        [
          { selector: { kind: 'task', ordinal: 0 }, status: 'in_progress' },
          { selector: { kind: 'task', ordinal: 1 }, status: 'completed' },
        ],
        A,
      );
      await store.updateItems(PLAN, 'step-1-1', [{ selector: { all: true }, status: 'completed' }], A);
      await store.complete(PLAN, 'step-1-1', A);
      await store.updateItems(PLAN, 'step-1-2', [{ selector: { all: true }, status: 'in_progress' }], A);
      clock.advance(60_001);
      const c = await claim(store, B, 60);
      assert.deepEqual(
        [c.step_anchor, c.claim_token, c.reclaimed_from_expired, c.previous_holder, c.substeps],
        ['step-1', 2, true, '/wt/a', ['step-1-2']],
      );
      assert.deepEqual([c.previous_agent, c.previous_lease_expires_at], ['agent-a', iso(T0 + 60_000)]);
      assert.deepEqual(await items(store, 'step-1'), ['open', 'completed', 'open']);
      assert.deepEqual(await items(store, 'step-1-1'), ['completed']);
      assert.deepEqual(await items(store, 'step-1-2'), ['open']);
      assert.deepEqual(
        [(await step(store, 'step-1')).status, (await step(store, 'step-1')).started_at],
        ['claimed', null],
      );
      assert.equal((await step(store, 'step-1-1')).status, 'completed');
      const event = (await store.events({ planPath: P })).at(-1);
      assert.deepEqual(
        [event?.action, event?.from_status, event?.to_status, event?.worktree],
        ['reclaim', 'in_progress', 'claimed', '/wt/b'],
      );
    });

    test('a live lease is never reclaimed, not even at the exact expiry instant', async (t) => {
      const { store, clock } = await setup(t, ONE);
      await claim(store, A, 60, ONE);
      clock.set(T0 + 59_999);
      const early = await store.claimNext(ONE, B);
      clock.set(T0 + 60_000);
      const atExpiry = await store.claimNext(ONE, B);
      const readyAtExpiry = await store.ready(P);
      clock.set(T0 + 60_001);
      const after = await store.claimNext(ONE, B);
      assert.deepEqual([early.claimed, atExpiry.claimed], [false, false]);
      assert.deepEqual(
        [readyAtExpiry.ready_steps, readyAtExpiry.claimed_steps, readyAtExpiry.expired_claims],
        [[], ['step-1'], []],
      );
      assert.equal(after.claimed && after.previous_holder, '/wt/a');
    });

    test('heartbeat extends the lease of the step and its substeps; refused for a non-holder, a stale or unknown token', async (t) => {
      const { store, clock } = await setup(t);
      await claim(store, A, 60);
      clock.advance(50_000);
      const hb = await store.heartbeat(P, 'step-1-1', { ...A, token: 1 }, { leaseSeconds: 60 });
      clock.set(T0 + 100_000);
      const stillHeld = await store.claimNext(PLAN, B);
      assert.deepEqual(hb, {
        renewed: true,
        step_anchor: 'step-1',
        claim_token: 1,
        lease_expires_at: iso(T0 + 110_000),
      });
      for (const anchor of ['step-1', 'step-1-1', 'step-1-2'])
        assert.equal((await step(store, anchor)).lease_expires_at, iso(T0 + 110_000));
      assert.equal((await step(store, 'step-1')).heartbeat_at, iso(T0 + 50_000));
      assert.equal(stillHeld.claimed && stillHeld.step_anchor, 'step-3');
      assert.equal(
        (await store.heartbeat(P, 'step-1', { worktree: '/wt/a', agent: null })).renewed,
        true,
        'a holder that names no agent is its worktree',
      );
      await assert.rejects(store.heartbeat(P, 'step-1', B), refused('not_holder'));
      await assert.rejects(
        store.heartbeat(P, 'step-1', { worktree: '/wt/a', agent: 'agent-other', token: 1 }),
        refused('not_holder'),
      );
      await assert.rejects(store.heartbeat(P, 'step-1', { ...A, token: 2 }), {
        code: 'unknown_token',
        category: 'usage',
        message: 'cannot heartbeat step-1: claim token 2 is unknown (no claim has been given it; current 1)',
      });
      await assert.rejects(store.heartbeat(P, 'step-1', { ...A, token: 0 }), {
        ...refused('stale_token'),
        message: /token 0 is stale \(current 1\); the claim was reset or reclaimed since$/,
      });
      await assert.rejects(store.heartbeat(P, 'step-2', A), refused('not_claimed'));
      clock.set(T0 + 100_000 + 7_200_001);
      assert.equal((await claim(store, B)).step_anchor, 'step-1', 'past the renewed lease, it is claimable again');
    });

    test('after a reclaim the old holder is fenced out of start, heartbeat, update and complete', async (t) => {
      const cases: [string, Actor, Actor, string][] = [
        ['another worktree', A, B, 'not_holder'],
        ['same worktree, another agent', A, { worktree: '/wt/a', agent: 'agent-a2' }, 'not_holder'],
        [
          'same worktree, no agent ids',
          { worktree: '/wt/a', agent: null },
          { worktree: '/wt/a', agent: null },
          'stale_token',
        ],
      ];
      for (const [name, oldHolder, newHolder, code] of cases) {
        await t.test(name, async (t) => {
          const { store, clock } = await setup(t, ONE);
          await claim(store, oldHolder, 60, ONE);
          clock.advance(60_001);
          const fresh = await claim(store, newHolder, 60, ONE);
          const stale = { ...oldHolder, token: 1 };
          await assert.rejects(store.start(P, 'step-1', stale), refused(code));
          await assert.rejects(store.heartbeat(P, 'step-1', stale), refused(code));
          await assert.rejects(
            store.updateItems(ONE, 'step-1', [{ selector: { all: true }, status: 'completed' }], stale),
            refused(code),
          );
          await assert.rejects(store.complete(ONE, 'step-1', stale, { forceReason: 'done anyway' }), refused(code));
          assert.deepEqual([(await step(store, 'step-1')).status, await items(store, 'step-1')], ['claimed', ['open']]);
          assert.equal(
            (
              await store.complete(
                ONE,
                'step-1',
                { ...newHolder, token: fresh.claim_token },
                { forceReason: 'new holder' },
              )
            ).completed,
            true,
          );
        });
      }
    });

    test('complete is strict unless forced; force records the reason and completes items and substeps', async (t) => {
      const { store } = await setup(t);
      await claim(store, A);
      await store.start(P, 'step-1', A);
      await store.updateItems(PLAN, 'step-1', [{ selector: { all: true }, status: 'completed' }], A);
      await assert.rejects(store.complete(PLAN, 'step-1', A), {
        ...refused('incomplete'),
        message: /2 open items \(step-1-1 task 0 "s1", step-1-2 task 0 "s2"\)/,
      });
      await assert.rejects(store.previewComplete(PLAN, 'step-1', A), refused('incomplete'));
      assert.equal((await step(store, 'step-1')).status, 'in_progress');
      const preview = await store.previewComplete(
        PLAN,
        'step-1',
        { ...A, token: 1 },
        { forceReason: 'reviewed by hand', commitHash: 'abc123' },
      );
      assert.equal((await step(store, 'step-1')).status, 'in_progress', 'a preview writes nothing');
      const forced = await store.complete(
        PLAN,
        'step-1',
        { ...A, token: 1 },
        { forceReason: 'reviewed by hand', commitHash: 'abc123' },
      );
      assert.deepEqual(forced, {
        completed: true,
        step_anchor: 'step-1',
        commit_hash: 'abc123',
        forced: true,
        force_reason: 'reviewed by hand',
        incomplete_items_auto_completed: 2,
        already_completed: false,
        plan_completed: false,
        remaining_steps: 2,
      });
      assert.deepEqual(preview, forced);
      for (const anchor of ['step-1', 'step-1-1', 'step-1-2']) {
        const row = await step(store, anchor);
        assert.deepEqual([row.status, row.complete_reason], ['completed', 'reviewed by hand']);
      }
      const strict = await claim(store, A);
      await assert.rejects(store.complete(PLAN, strict.step_anchor, A), refused('incomplete'));
      await store.updateItems(
        PLAN,
        strict.step_anchor,
        [{ selector: { kind: 'task', ordinal: 0 }, status: 'completed' }],
        A,
      );
      const ok = await store.complete(PLAN, strict.step_anchor, A, { commitHash: 'def456' });
      const row = await step(store, strict.step_anchor);
      assert.deepEqual(
        [ok.forced, ok.force_reason, row.complete_reason, row.commit_hash],
        [false, null, null, 'def456'],
      );
    });

    test('re-completing is a no-op for the completing holder and refused with another token, worktree or agent', async (t) => {
      const { store } = await setup(t, ONE);
      const c = await claim(store, A, undefined, ONE);
      const first = await store.complete(
        ONE,
        'step-1',
        { ...A, token: c.claim_token },
        { forceReason: 'r', commitHash: 'abc' },
      );
      const again = await store.complete(ONE, 'step-1', { ...A, token: c.claim_token });
      const noAgentId = await store.complete(ONE, 'step-1', { worktree: A.worktree, agent: null });
      assert.deepEqual(again, { ...first, already_completed: true, incomplete_items_auto_completed: 0 });
      assert.equal(noAgentId.already_completed, true);
      await assert.rejects(
        store.complete(ONE, 'step-1', { ...A, token: c.claim_token + 1 }),
        refused('already_completed'),
      );
      await assert.rejects(store.complete(ONE, 'step-1', { ...B, token: c.claim_token }), refused('already_completed'));
      await assert.rejects(
        store.complete(ONE, 'step-1', { worktree: A.worktree, agent: 'agent-other', token: c.claim_token }),
        {
          ...refused('already_completed'),
          message: 'step-1 is already completed by /wt/a (agent agent-a) with token 1',
        },
      );
      const completions = (await store.events({ planPath: P })).filter(
        (e) => e.entity === 'step' && e.action === 'complete',
      );
      assert.equal(completions.length, 1);
    });

    test('completing the last step completes the plan; then nothing is left to claim', async (t) => {
      const { store } = await setup(t);
      const everything = [{ selector: { all: true } as const, status: 'completed' as const }];
      const results = [];
      for (let i = 0; i < 3; i++) {
        const c = await claim(store, A);
        for (const anchor of [c.step_anchor, ...c.substeps]) await store.updateItems(PLAN, anchor, everything, A);
        results.push(await store.complete(PLAN, c.step_anchor, A));
      }
      assert.deepEqual(
        results.map((r) => [r.step_anchor, r.plan_completed, r.remaining_steps]),
        [
          ['step-1', false, 2],
          ['step-2', false, 1],
          ['step-3', true, 0],
        ],
      );
      assert.equal((await store.plan(P)).status, 'done');
      const none = await store.claimNext(PLAN, A);
      assert.deepEqual(
        [none.claimed, !none.claimed && none.reason, !none.claimed && none.all_completed],
        [false, 'all_completed', true],
      );
    });

    test('reset returns a claim to pending and fences the old holder; a completed step cannot be reset', async (t) => {
      const { store } = await setup(t);
      await claim(store, A);
      await store.updateItems(PLAN, 'step-1', [{ selector: { kind: 'task', ordinal: 0 }, status: 'in_progress' }], A);
      const r = await store.reset(P, 'step-1', ADMIN, 'worktree removed');
      assert.deepEqual(r, { reset: true, step_anchor: 'step-1', from_status: 'claimed', previous_holder: '/wt/a' });
      assert.deepEqual(await items(store, 'step-1'), ['open', 'open', 'open']);
      for (const a of ['step-1', 'step-1-1', 'step-1-2']) {
        const row = await step(store, a);
        assert.deepEqual([row.status, row.claim_token, row.claimed_by], ['pending', 2, null]);
      }
      await assert.rejects(store.start(P, 'step-1', { ...A, token: 1 }), refused('not_claimed'));
      assert.equal((await claim(store, A)).claim_token, 3);
      await assert.rejects(store.heartbeat(P, 'step-1', { ...A, token: 1 }), refused('stale_token'));
      await assert.rejects(
        store.complete(PLAN, 'step-1', { ...A, token: 1 }, { forceReason: 'x' }),
        refused('stale_token'),
      );
      await store.complete(PLAN, 'step-1', A, { forceReason: 'x' });
      await assert.rejects(store.reset(P, 'step-1', ADMIN), refused('already_completed'));
    });

    test("claim → start → update → complete writes exactly these events, at the store clock's times", async (t) => {
      const { store, clock } = await setup(t, ONE);
      const before = (await store.events({ planPath: P })).length;
      clock.set(T0 + 1000);
      await claim(store, A, 60, ONE);
      clock.set(T0 + 2000);
      await store.start(P, 'step-1', A);
      clock.set(T0 + 3000);
      const itemId = (await store.showPlans(P))[0]?.steps[0]?.items[0]?.id ?? -1;
      await store.updateItems(ONE, 'step-1', [{ selector: { id: itemId }, status: 'completed' }], A);
      clock.set(T0 + 4000);
      await store.complete(ONE, 'step-1', { ...A, token: 1 }, { commitHash: 'c0ffee' });
      const events = (await store.events({ planPath: P })).slice(before);
      const row = (
        at: number,
        entity: string,
        action: string,
        stepAnchor: string | null,
        from: string | null,
        to: string | null,
        reason: string | null,
        data: unknown,
      ) => ({
        at: iso(T0 + at),
        worktree: '/wt/a',
        agent: 'agent-a',
        entity,
        action,
        plan_path: P,
        step_anchor: stepAnchor,
        epic_id: null,
        from_status: from,
        to_status: to,
        reason,
        data,
      });
      assert.deepEqual(
        events.map(({ id: _id, ...e }) => e),
        [
          row(1000, 'step', 'claim', 'step-1', 'pending', 'claimed', null, {
            claim_token: 1,
            lease_expires_at: iso(T0 + 61_000),
            previous_holder: null,
            substeps: [],
          }),
          row(2000, 'step', 'start', 'step-1', 'claimed', 'in_progress', null, { claim_token: 1 }),
          row(3000, 'item', 'update', 'step-1', 'open', 'completed', null, {
            item_id: itemId,
            kind: 'task',
            ordinal: 0,
            text: 'a',
          }),
          row(4000, 'step', 'complete', 'step-1', 'in_progress', 'completed', null, {
            claim_token: 1,
            commit_hash: 'c0ffee',
            forced: false,
            items_auto_completed: 0,
            substeps_completed: [],
          }),
          row(4000, 'plan', 'complete', null, 'active', 'done', 'last step step-1 completed', null),
        ],
      );
    });

    test('a structurally drifted plan refuses claim, update and complete but not start, heartbeat or reset', async (t) => {
      const { store } = await setup(t);
      const drifted = source('# Plan: Demo\n## Step 1: First\n- [ ] t1\n');
      await claim(store, A);
      await assert.rejects(store.claimNext(drifted, B), { ...refused('plan_drift'), message: /step-1-1 removed/ });
      await assert.rejects(
        store.updateItems(drifted, 'step-1', [{ selector: { all: true }, status: 'completed' }], A),
        refused('plan_drift'),
      );
      await assert.rejects(store.complete(drifted, 'step-1', A, { forceReason: 'x' }), refused('plan_drift'));
      assert.deepEqual(
        [(await step(store, 'step-3')).status, (await step(store, 'step-1')).status, await items(store, 'step-1')],
        ['pending', 'claimed', ['open', 'open', 'open']],
      );
      assert.equal((await store.start(P, 'step-1', A)).status, 'in_progress');
      assert.equal((await store.heartbeat(P, 'step-1', A)).renewed, true);
      assert.equal((await store.reset(P, 'step-1', ADMIN)).reset, true);
      const ticked = source('# Plan: One\n## Step 1: Only\n- [x] a\n');
      const one = await setup(t, ONE);
      assert.equal((await one.store.claimNext(ticked, A)).claimed, true, 'ticking a box is not drift');
    });

    test('ready() partitions top-level steps; unknown plans and steps are usage errors', async (t) => {
      const plan = source(
        '# P\n## Step 1: S1\n## Step 2: S2\n## Step 3: S3\n## Step 4: S4\n**Depends on:** #step-2\n## Step 5: S5\n',
      );
      const { store, clock } = await setup(t, plan);
      await claim(store, A, undefined, plan);
      await store.complete(plan, 'step-1', A);
      await claim(store, B, 600, plan);
      await claim(store, ADMIN, 60, plan);
      clock.advance(61_000);
      assert.deepEqual(await store.ready(P), {
        plan_path: P,
        ready_steps: ['step-3', 'step-5'],
        waiting_steps: [],
        waiting_reason: null,
        files_waiting: [],
        epic_id: null,
        epic_status: null,
        all_steps: ['step-1', 'step-2', 'step-3', 'step-4', 'step-5'],
        completed_steps: ['step-1'],
        claimed_steps: ['step-2'],
        blocked_steps: ['step-4'],
        expired_claims: ['step-3'],
      });
      await assert.rejects(store.ready('plans/missing.md'), { code: 'unknown_plan', category: 'usage' });
      await assert.rejects(store.stepRecord(P, 'step-9'), { code: 'unknown_step', category: 'usage' });
    });

    test('init --force keeps completed unchanged steps and releases the rest; re-init without changes is a no-op', async (t) => {
      const { store } = await setup(t);
      await claim(store, A);
      await store.complete(PLAN, 'step-1', A, { forceReason: 'x' });
      await claim(store, B);
      const same = await store.initPlan(PLAN, ADMIN, { force: true });
      const changed = source(
        PLAN.plan().title === 'Demo'
          ? `# Plan: Demo
## Step 1: First
**Tasks:**
- [ ] t1
- [ ] t2
**Tests:**
- [ ] u1
### Step 1.1: Sub one
- [ ] s1
### Step 1.2: Sub two
**Depends on:** #step-1-1
- [ ] s2
## Step 2: Second
**Depends on:** #step-1
- [ ] w
## Step 3: Third, renamed
- [ ] z
## Step 4: Fourth
**Depends on:** #step-3
`
          : '',
      );
      const re = await store.initPlan(changed, ADMIN, { force: true });
      assert.deepEqual(
        [same.already_initialized, re.reinitialized, re.steps_kept_completed, re.steps_created],
        [true, true, 3, 6],
      );
      assert.deepEqual(await store.ready(P).then((r) => [r.ready_steps, r.completed_steps, r.blocked_steps]), [
        ['step-2', 'step-3'],
        ['step-1'],
        ['step-4'],
      ]);
      assert.deepEqual(
        [(await step(store, 'step-2')).claim_token, (await step(store, 'step-2')).claimed_by],
        [2, null],
        'the released claim is fenced',
      );
    });
    test('a substep depending on another top-level step blocks its parent', async (t) => {
      const plan = source(
        '# P\n## Step 1: A {#a}\n## Step 2: B {#b}\n### Step 2.1: B1 {#b1}\n**Depends on:** #c\n## Step 3: C {#c}\n',
      );
      const { store } = await setup(t, plan);
      const order = [
        (await claim(store, A, undefined, plan)).step_anchor,
        (await claim(store, A, undefined, plan)).step_anchor,
      ];
      const blocked = await store.claimNext(plan, A);
      await store.complete(plan, 'c', A);
      const unblocked = await claim(store, A, undefined, plan);
      assert.deepEqual(order, ['a', 'c']);
      assert.deepEqual(!blocked.claimed && blocked.blocked_steps, ['b']);
      assert.deepEqual([unblocked.step_anchor, unblocked.substeps], ['b', ['b1']]);
    });

    test('update sets items and never a status, for substeps as for steps; complete completes a substep, or the step with its finished substeps', async (t) => {
      const { store } = await setup(t);
      await claim(store, A);
      const r = await store.updateItems(
        PLAN,
        'step-1-1',
        [{ selector: { kind: 'task', ordinal: 'all' }, status: 'completed' }],
        { ...A, token: 1 },
      );
      assert.deepEqual(r, {
        updated: 1,
        step_anchor: 'step-1-1',
        step_status: 'claimed',
        tasks: { open: 0, in_progress: 0, completed: 1 },
        tests: { open: 0, in_progress: 0, completed: 0 },
        checkpoints: { open: 0, in_progress: 0, completed: 0 },
      });
      assert.deepEqual(
        [(await step(store, 'step-1-1')).status, (await step(store, 'step-1')).status],
        ['claimed', 'claimed'],
        'ticking the last box completes nothing',
      );
      const undo = await store.updateItems(PLAN, 'step-1-1', [{ selector: { all: true }, status: 'open' }], A);
      assert.equal(undo.tasks.open, 1, 'so the box can be unticked again');
      await store.updateItems(PLAN, 'step-1-1', [{ selector: { all: true }, status: 'completed' }], A);
      const sub = await store.complete(PLAN, 'step-1-1', { ...A, token: 1 });
      const completedSub = await step(store, 'step-1-1');
      assert.deepEqual(
        [
          sub.step_anchor,
          sub.already_completed,
          completedSub.status,
          completedSub.completed_by,
          (await step(store, 'step-1')).status,
        ],
        ['step-1-1', false, 'completed', '/wt/a', 'claimed'],
      );
      await assert.rejects(
        store.updateItems(PLAN, 'step-1-1', [{ selector: { all: true }, status: 'open' }], A),
        refused('already_completed'),
      );
      await assert.rejects(
        store.updateItems(PLAN, 'step-1', [{ selector: { kind: 'task', ordinal: 7 }, status: 'completed' }], A),
        { code: 'unknown_item', message: 'step-1 has no task 7 (it has 2 tasks, numbered from 0)' },
      );
      await store.updateItems(PLAN, 'step-1', [{ selector: { all: true }, status: 'completed' }], A);
      await store.updateItems(PLAN, 'step-1-2', [{ selector: { all: true }, status: 'completed' }], A);
      const parent = await store.complete(PLAN, 'step-1', A);
      assert.equal(parent.completed, true, 'strict complete passes: every item of the step and its substeps is done');
      for (const a of ['step-1', 'step-1-1', 'step-1-2'])
        assert.deepEqual(
          [(await step(store, a)).status, (await step(store, a)).complete_reason],
          ['completed', null],
          a,
        );
      const event = (await store.events({ planPath: P })).filter((e) => e.action === 'complete').at(-1);
      assert.deepEqual(
        (event?.data as { substeps_completed: string[] }).substeps_completed,
        ['step-1-2'],
        'the finished substep went with its parent, recorded',
      );
    });

    test('showPlans() nests substeps under their parent with blockers, items and progress counts', async (t) => {
      const { store, clock } = await setup(t);
      await claim(store, A, 60);
      await store.updateItems(PLAN, 'step-1', [{ selector: { kind: 'test', ordinal: 0 }, status: 'completed' }], A);
      await store.updateItems(PLAN, 'step-1-1', [{ selector: { all: true }, status: 'completed' }], A);
      await store.complete(PLAN, 'step-1-1', A);
      clock.advance(61_000);
      const [view, ...others] = await store.showPlans();
      assert.equal(others.length, 0);
      assert.ok(view);
      assert.deepEqual([view.plan_path, view.title, view.status], [P, 'Demo', 'active']);
      assert.deepEqual(view.progress, { steps_completed: 0, steps_total: 3, items_completed: 2, items_total: 7 });
      assert.deepEqual(
        view.steps.map((s) => [s.anchor, s.status, s.blocked_by, s.progress]),
        [
          ['step-1', 'claimed', [], { done: 1, total: 3 }],
          ['step-2', 'pending', ['step-1'], { done: 0, total: 1 }],
          ['step-3', 'pending', [], { done: 0, total: 1 }],
        ],
      );
      const first = view.steps[0];
      assert.ok(first);
      assert.deepEqual(
        [first.claimed_by, first.agent, first.claim_token, first.lease_expired],
        ['/wt/a', 'agent-a', 1, true],
      );
      assert.deepEqual(
        first.items.map((i) => [i.kind, i.ordinal, i.text, i.status]),
        [
          ['task', 0, 't1', 'open'],
          ['task', 1, 't2', 'open'],
          ['test', 0, 'u1', 'completed'],
        ],
      );
      assert.deepEqual(
        first.substeps.map((s) => [
          s.anchor,
          s.parent_anchor,
          s.status,
          s.depends_on,
          s.blocked_by,
          s.progress,
          s.substeps.length,
        ]),
        [
          ['step-1-1', 'step-1', 'completed', [], [], { done: 1, total: 1 }, 0],
          ['step-1-2', 'step-1', 'claimed', ['step-1-1'], [], { done: 0, total: 1 }, 0],
        ],
      );
      assert.deepEqual(
        (await store.showPlans(P)).map((p) => p.plan_path),
        [P],
      );
    });

    test('init writes steps (substeps interleaved, with their parents), dependencies and items; a second init changes nothing', async (t) => {
      const clock = new ManualClock(T0);
      const store = backend.open(t, clock);
      const nested = source(NESTED);
      const result = await store.initPlan(nested, A);
      assert.deepEqual(result, {
        plan_path: P,
        plan_hash: planHash(nested.plan()),
        steps_created: 4,
        checklist_items_created: 5,
        already_initialized: false,
        reinitialized: false,
        steps_kept_completed: 0,
      });
      const [view] = await store.showPlans(P);
      assert.deepEqual(
        [view?.title, view?.status, view?.epic_id, (await store.plan(P)).plan_hash],
        ['Nested', 'active', null, planHash(nested.plan())],
      );
      const all = view?.steps.flatMap((s) => [s, ...s.substeps]) ?? [];
      assert.deepEqual(
        all.map((s) => [
          s.anchor,
          s.parent_anchor,
          s.step_index,
          s.number,
          s.title,
          s.status,
          s.claim_token,
          s.claimed_by,
          s.depends_on,
        ]),
        [
          ['first', null, 0, '1', 'First', 'pending', 0, null, []],
          ['step-1-1', 'first', 1, '1.1', 'Sub one', 'pending', 0, null, []],
          ['step-1-2', 'first', 2, '1.2', 'Sub two', 'pending', 0, null, ['step-1-1']],
          ['step-2', null, 3, '2', 'Second', 'pending', 0, null, ['first']],
        ],
      );
      assert.deepEqual(
        all.flatMap((s) => s.items.map((i) => [s.anchor, i.kind, i.ordinal, i.text, i.status])),
        [
          ['first', 'task', 0, 'a', 'open'],
          ['first', 'task', 1, 'b', 'open'], // a ticked box is informational only
          ['first', 'test', 0, 'c', 'open'],
          ['step-1-1', 'task', 0, 'd', 'open'],
          ['step-1-2', 'checkpoint', 0, 'e', 'open'],
        ],
      );
      const events = await store.events({ planPath: P });
      assert.deepEqual(
        events.map((e) => [e.worktree, e.agent, e.entity, e.action, e.plan_path, e.to_status]),
        [['/wt/a', 'agent-a', 'plan', 'init', P, planHash(nested.plan())]],
      );
      const before = JSON.stringify([await store.showPlans(), await store.events()]);
      const again = await store.initPlan(nested, A);
      assert.deepEqual(
        [again.already_initialized, again.reinitialized, again.steps_created, again.checklist_items_created],
        [true, false, 0, 0],
      );
      assert.equal(JSON.stringify([await store.showPlans(), await store.events()]), before);
    });

    test('init --force keeps unchanged completed steps and their items, resets changed and claimed ones, removes and adds steps', async (t) => {
      const store = backend.open(t, new ManualClock(T0));
      const [v1, v2] = [source(V1), source(V2)];
      await store.initPlan(v1, A);
      for (const anchor of ['one', 'two']) {
        const c = await claim(store, A, undefined, v1);
        assert.equal(c.step_anchor, anchor);
        await store.updateItems(v1, anchor, [{ selector: { all: true }, status: 'completed' }], A);
        await store.complete(v1, anchor, A, { commitHash: `c-${anchor}` });
      }
      assert.equal((await claim(store, A, undefined, v1)).step_anchor, 'three');
      const result = await store.initPlan(v2, ADMIN, { force: true });
      assert.deepEqual(
        [result.reinitialized, result.already_initialized, result.steps_kept_completed, result.plan_hash],
        [true, false, 1, planHash(v2.plan())],
      );
      const [view] = await store.showPlans(P);
      assert.deepEqual(
        view?.steps.map((s) => [
          s.anchor,
          s.step_index,
          s.title,
          s.status,
          s.claimed_by,
          s.claim_token,
          s.commit_hash,
          s.depends_on,
        ]),
        [
          ['one', 0, 'One', 'completed', '/wt/a', 1, 'c-one', []],
          ['two', 1, 'Two renamed', 'pending', null, 2, null, []],
          ['three', 2, 'Three', 'pending', null, 2, null, []],
          ['five', 3, 'Five', 'pending', null, 0, null, ['one']],
        ],
      );
      assert.deepEqual(
        view?.steps.map((s) => [s.anchor, s.items.map((i) => [i.text, i.status])]),
        [
          [
            'one',
            [
              ['a', 'completed'],
              ['b', 'completed'],
            ],
          ],
          [
            'two',
            [
              ['x', 'completed'],
              ['z', 'open'],
            ],
          ],
          ['three', [['t', 'open']]],
          ['five', [['n', 'open']]],
        ],
      );
      await assert.rejects(store.heartbeat(P, 'three', { ...A, token: 1 }), { code: 'not_claimed' });
      await assert.rejects(store.claimNext(v1, A), { code: 'plan_drift' });
      assert.equal((await claim(store, A, undefined, v2)).step_anchor, 'two');
    });

    test('init --force moves a substep under a new parent; a changed substep of a completed step stays reachable', async (t) => {
      const store = backend.open(t, new ManualClock(T0));
      await store.initPlan(source('# P\n## Step 1: A {#a}\n### Step 1.1: X {#x}\n- [ ] xt\n'), A);
      assert.equal(
        (await store.initPlan(source('# P\n## Step 1: B {#b}\n### Step 1.1: X {#x}\n- [ ] xt\n'), A, { force: true }))
          .reinitialized,
        true,
      );
      assert.deepEqual(
        (await store.showPlans(P))[0]?.steps.map((s) => [s.anchor, s.substeps.map((c) => [c.anchor, c.parent_anchor])]),
        [['b', [['x', 'b']]]],
      );

      const other = backend.open(t, new ManualClock(T0));
      const [w1, w2] = [
        source('# P\n## Step 1: A\n- [ ] t\n### Step 1.1: X\n- [ ] xt\n'),
        source('# P\n## Step 1: A\n- [ ] t\n### Step 1.1: X renamed\n- [ ] xt\n'),
      ];
      await other.initPlan(w1, A);
      await other.claimNext(w1, A);
      await other.complete(w1, 'step-1', A, { forceReason: 'done' });
      await other.initPlan(w2, ADMIN, { force: true });
      const c = await other.claimNext(w2, A);
      assert.deepEqual(c.claimed && [c.step_anchor, c.substeps], ['step-1', ['step-1-1']]);
    });
  });
}
