// The plain completion — a top-level step, not forced, by its holder — is the one PostgreSQL sends as
// a single round trip (src/core/store/postgres/completeOne.ts); every refusal it does not make itself
// must still come out as on SQLite, and leave the claim untouched. Run on both backends.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { postgresBackend, sqliteBackend, type Backend } from '../helpers/storeBackends.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const P = 'plans/p.md';
const source = (text: string): PlanSource => planSourceOf(P, parsePlan(text, P));
const PLAN = source('# Plan: Two\n## Step 1: One\n- [ ] a\n## Step 2: Two\n**Depends on:** #step-1\n- [ ] b\n');
const DRIFTED = source(
  '# Plan: Two\n## Step 1: One\n- [ ] a\n- [ ] new\n## Step 2: Two\n**Depends on:** #step-1\n- [ ] b\n',
);
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
      assert.deepEqual(
        [held.status, held.claimed_by, held.claim_token, held.completed_at],
        ['claimed', '/wt/a', token, null],
        'no refusal changed the claim',
      );
      assert.equal(
        (await store.events({ planPath: P })).filter((e) => e.action === 'complete').length,
        0,
        'no refusal logged a completion',
      );

      // A reset and a new claim make the old token stale.
      await store.reset(P, 'step-1', ADMIN, 'test');
      const again = await store.claimNext(PLAN, A);
      assert.ok(again.claimed);
      await assert.rejects(store.complete(PLAN, 'step-1', { ...A, token }), code('stale_token'));
      await store.updateItems(PLAN, 'step-1', [{ selector: { all: true }, status: 'completed' }], A);
      const done = await store.complete(PLAN, 'step-1', { ...A, token: again.claim_token }, { commitHash: 'abc1234' });
      assert.deepEqual(done, {
        completed: true,
        step_anchor: 'step-1',
        commit_hash: 'abc1234',
        forced: false,
        force_reason: null,
        incomplete_items_auto_completed: 0,
        already_completed: false,
        plan_completed: false,
        remaining_steps: 1,
      });
      const repeat = await store.complete(PLAN, 'step-1', A, { commitHash: 'abc1234' });
      assert.equal(repeat.already_completed, true);
      const completions = (await store.events({ planPath: P })).filter((e) => e.action === 'complete');
      assert.deepEqual(
        completions.map((e) => [e.entity, e.step_anchor, e.worktree, e.agent, e.from_status, e.to_status, e.data]),
        [
          [
            'step',
            'step-1',
            '/wt/a',
            'agent-a',
            'claimed',
            'completed',
            {
              claim_token: again.claim_token,
              commit_hash: 'abc1234',
              forced: false,
              items_auto_completed: 0,
              substeps_completed: [],
            },
          ],
        ],
      );
      const last = await store.claimNext(PLAN, A);
      assert.ok(last.claimed && last.step_anchor === 'step-2', 'completing step-1 unblocked step-2');
      await store.updateItems(PLAN, 'step-2', [{ selector: { all: true }, status: 'completed' }], A);
      const final = await store.complete(PLAN, 'step-2', A);
      assert.deepEqual([final.plan_completed, final.remaining_steps], [true, 0]);
      assert.equal((await store.plan(P)).status, 'done');
    });
  });
}

const WIDE = 8;
const WIDE_PLAN = (round: number): PlanSource => {
  const path = `plans/wide-${round}.md`;
  return planSourceOf(
    path,
    parsePlan(
      `# Plan: Wide ${round}\n${Array.from({ length: WIDE }, (_, i) => `## Step ${i + 1}: S${i + 1}\n- [ ] t${i + 1}\n`).join('')}`,
      path,
    ),
  );
};

for (const backend of BACKENDS) {
  test(`the last steps completed at once by ${WIDE} connections mark the plan done exactly once (${backend.name})`, async (t: TestContext) => {
    // On PostgreSQL no lock orders completions of one plan any more (docs/postgres-design.md, "Concurrency"): the
    // plan is marked done after each completion's COMMIT, where the last to commit sees every other.
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const first = backend.open(t, clock);
    const stores = [first, ...Array.from({ length: WIDE - 1 }, () => backend.open(t, clock, { shareWith: first }))];
    for (let round = 0; round < 6; round++) {
      const plan = WIDE_PLAN(round);
      await first.initPlan(plan, ADMIN);
      const actors = stores.map((_, i): Actor => ({ worktree: `/wt/${i}`, agent: `agent-${i}` }));
      const claims: { step_anchor: string; claim_token: number }[] = [];
      for (const [i, store] of stores.entries()) {
        const c = await store.claimNext(plan, actors[i] as Actor);
        assert.ok(c.claimed);
        await store.updateItems(
          plan,
          c.step_anchor,
          [{ selector: { all: true }, status: 'completed' }],
          actors[i] as Actor,
        );
        claims.push({ step_anchor: c.step_anchor, claim_token: c.claim_token });
      }
      const results = await Promise.all(
        stores.map((store, i) =>
          store.complete(plan, claims[i]?.step_anchor ?? '', {
            ...(actors[i] as Actor),
            token: claims[i]?.claim_token,
          }),
        ),
      );
      const marked = (await first.events({ planPath: plan.planPath })).filter(
        (e) => e.entity === 'plan' && e.action === 'complete',
      );
      assert.equal(marked.length, 1, `round ${round}: one plan completion event`);
      assert.equal(
        results.filter((r) => r.plan_completed).length,
        1,
        `round ${round}: one completion reports the plan completed`,
      );
      assert.equal((await first.showPlans(plan.planPath))[0]?.status, 'done', `round ${round}: the plan is done`);
      assert.equal(Math.min(...results.map((r) => r.remaining_steps)), 0);
    }
  });
}

/** A one-step plan on a database of its own, its step claimed by A with every item done: one completion from done. */
async function lastStepHeld(
  t: TestContext,
  db: string,
): Promise<{ db: string; store: Store; one: PlanSource; token: number }> {
  const store = openStore({
    location: pg.server.createDatabase(db),
    repository: { id: 'unmarked-repo', source: 'configured' },
    host: 'host-a',
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
  });
  t.after(() => store.close());
  const one = source('# Plan: One\n## Step 1: One\n- [ ] a\n');
  await store.initPlan(one, ADMIN);
  const c = await store.claimNext(one, A);
  assert.ok(c.claimed);
  await store.updateItems(one, 'step-1', [{ selector: { all: true }, status: 'completed' }], A);
  return { db, store, one, token: c.claim_token };
}

test('a plan whose last completion committed but was not marked done after it (a server crash between) is marked by the holder repeating the completion (postgres)', async (t: TestContext) => {
  const { db, store, one, token } = await lastStepHeld(t, `unmarked_${process.pid}`);
  assert.equal((await store.complete(one, 'step-1', { ...A, token })).plan_completed, true);
  // What a crash between the completion's COMMIT and the mark after it leaves.
  pg.server.psql(`UPDATE springfield.plans SET status = 'active'`, db);
  assert.equal((await store.showPlans(P))[0]?.status, 'active');
  const again = await store.complete(one, 'step-1', { ...A, token });
  assert.deepEqual([again.already_completed, again.plan_completed, again.remaining_steps], [true, true, 0]);
  assert.equal((await store.showPlans(P))[0]?.status, 'done');
});

test('a last completion whose mark after the COMMIT did not happen (a reply lost in between) marks the plan before it answers (postgres)', async (t: TestContext) => {
  const { db, store, one, token } = await lastStepHeld(t, `unmarked_direct_${process.pid}`);
  // The first status change of the plan row is skipped, as if the mark after the COMMIT never ran.
  pg.server.psql(
    `CREATE TABLE springfield.skip_once (n int); INSERT INTO springfield.skip_once VALUES (1); GRANT ALL ON springfield.skip_once TO PUBLIC;
    CREATE FUNCTION springfield.skip_once() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF EXISTS (SELECT 1 FROM springfield.skip_once) THEN DELETE FROM springfield.skip_once; RETURN NULL; END IF; RETURN NEW; END $$;
    CREATE TRIGGER skip_once BEFORE UPDATE OF status ON springfield.plans FOR EACH ROW EXECUTE FUNCTION springfield.skip_once()`,
    db,
  );
  const done = await store.complete(one, 'step-1', { ...A, token });
  assert.equal(
    pg.server.psql('SELECT count(*) FROM springfield.skip_once', db),
    '0',
    'the mark after the COMMIT was skipped',
  );
  assert.deepEqual([done.already_completed, done.plan_completed, done.remaining_steps], [false, true, 0]);
  assert.equal((await store.showPlans(P))[0]?.status, 'done');
  assert.equal(
    (await store.events({ planPath: P })).filter((e) => e.entity === 'plan' && e.action === 'complete').length,
    1,
  );
});
