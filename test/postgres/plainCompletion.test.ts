// The plain completion — a top-level step, not forced, by its holder — is the one PostgreSQL sends as
// a single round trip (src/core/store/postgres/completeOne.ts); every refusal it does not make itself
// must still come out as on SQLite, and leave the claim untouched. Run on both backends.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { postgresBackend, sqliteBackend, type Backend } from './storeFactory.ts';

const P = 'plans/p.md';
const source = (text: string): PlanSource => ({ planPath: P, plan: parsePlan(text, P) });
const PLAN = source('# Plan: Two\n## Step 1: One\n- [ ] a\n## Step 2: Two\n**Depends on:** #step-1\n- [ ] b\n');
const DRIFTED = source('# Plan: Two\n## Step 1: One\n- [ ] a\n- [ ] new\n## Step 2: Two\n**Depends on:** #step-1\n- [ ] b\n');
const A: Actor = { worktree: '/wt/a', agent: 'agent-a' };
const ADMIN: Actor = { worktree: '/wt/admin', agent: null };
const code = (c: string) => ({ code: c });

const pg = postgresForFile({ durability: 'fast' });
const BACKENDS: Backend[] = [sqliteBackend(), postgresBackend(() => pg.server)];

for (const backend of BACKENDS) {
  describe(`plain completion on ${backend.name}`, () => {
    test('refused for another worktree, agent, host, a stale or unknown token, open items and drift; the holder then completes', async (t: TestContext) => {
      const store = backend.open(t, new ManualClock(Date.UTC(2026, 0, 1)));
      await store.initPlan(PLAN, ADMIN);
      const claim = await store.claimNext(PLAN, A);
      assert.ok(claim.claimed);
      const token = claim.claim_token;
      await assert.rejects(store.complete(PLAN, 'step-1', A), code('incomplete'));
      // Every item done from here on: only the holder checks stand between these callers and a completion.
      await store.updateItems(PLAN, 'step-1', [{ selector: { all: true }, status: 'completed' }], A);
      await assert.rejects(store.complete(PLAN, 'step-1', { worktree: '/wt/b', agent: 'agent-a' }), code('not_holder'));
      await assert.rejects(store.complete(PLAN, 'step-1', { worktree: '/wt/a', agent: 'agent-b' }), code('not_holder'));
      await assert.rejects(store.complete(PLAN, 'step-1', { ...A, token: token + 1 }), code('unknown_token'));
      await assert.rejects(store.complete(DRIFTED, 'step-1', A), code('plan_drift'));
      await assert.rejects(store.complete(PLAN, 'step-2', A), code('not_claimed'));
      await assert.rejects(store.complete(PLAN, 'step-9', A), code('unknown_step'));
      if (backend.name === 'postgres') {
        const otherHost = backend.open(t, new ManualClock(Date.UTC(2026, 0, 1)), { host: 'host-b', shareWith: store });
        await assert.rejects(otherHost.complete(PLAN, 'step-1', A), code('not_holder'));
      }
      const held = await store.stepRecord(P, 'step-1');
      assert.deepEqual([held.status, held.claimed_by, held.claim_token, held.completed_at], ['claimed', '/wt/a', token, null], 'no refusal changed the claim');
      assert.equal((await store.events({ planPath: P })).filter((e) => e.action === 'complete').length, 0, 'no refusal logged a completion');

      // A reset and a new claim make the old token stale.
      await store.reset(P, 'step-1', ADMIN, 'test');
      const again = await store.claimNext(PLAN, A);
      assert.ok(again.claimed);
      await assert.rejects(store.complete(PLAN, 'step-1', { ...A, token }), code('stale_token'));
      await store.updateItems(PLAN, 'step-1', [{ selector: { all: true }, status: 'completed' }], A);
      const done = await store.complete(PLAN, 'step-1', { ...A, token: again.claim_token }, { commitHash: 'abc1234' });
      assert.deepEqual(done, {
        completed: true, step_anchor: 'step-1', commit_hash: 'abc1234', forced: false, force_reason: null,
        incomplete_items_auto_completed: 0, already_completed: false, plan_completed: false, remaining_steps: 1,
      });
      const repeat = await store.complete(PLAN, 'step-1', A, { commitHash: 'abc1234' });
      assert.equal(repeat.already_completed, true);
      const completions = (await store.events({ planPath: P })).filter((e) => e.action === 'complete');
      assert.deepEqual(completions.map((e) => [e.entity, e.step_anchor, e.worktree, e.agent, e.from_status, e.to_status, e.data]), [
        ['step', 'step-1', '/wt/a', 'agent-a', 'claimed', 'completed', { claim_token: again.claim_token, commit_hash: 'abc1234', forced: false, items_auto_completed: 0, substeps_completed: [] }],
      ]);
      const last = await store.claimNext(PLAN, A);
      assert.ok(last.claimed && last.step_anchor === 'step-2', 'completing step-1 unblocked step-2');
      await store.updateItems(PLAN, 'step-2', [{ selector: { all: true }, status: 'completed' }], A);
      const final = await store.complete(PLAN, 'step-2', A);
      assert.deepEqual([final.plan_completed, final.remaining_steps], [true, 0]);
      assert.equal((await store.plan(P)).status, 'done');
    });
  });
}
