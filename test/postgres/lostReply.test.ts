// A claim or completion whose reply is lost — the connection cut after the server committed, or
// before it received the operation — is settled by the client that sent it: it ends the old backend,
// looks its operation id up in the events, and returns what committed (or runs it again when nothing
// did). Nothing is held until a lease expires, nothing is doubled (docs/postgres-design.md, "Failures, retries, idempotence").
// The cut is real: a Unix-socket proxy closes both sides of the connection (test/helpers/pgProxy.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { startPgProxy } from '../helpers/pgProxy.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const P = 'plans/p.md';
const PLAN = planSourceOf(P, parsePlan('# Plan: Three\n## Step 1: One\n## Step 2: Two\n## Step 3: Three\n', P));
const A: Actor = { worktree: '/wt/a', agent: 'agent-a' };
const pg = postgresForFile();
let n = 0;

function open(url: string): Store {
  return openStore({ location: url, repository: { id: 'lost-reply', source: 'configured' }, host: 'host-a' });
}

async function setup(t: { after(fn: () => unknown): void }) {
  const url = pg.server.createDatabase(`lost_${++n}`);
  const proxy = await startPgProxy(url);
  const direct = open(url);
  const store = open(proxy.url);
  t.after(async () => {
    await store.close();
    await direct.close();
    proxy.close();
  });
  await direct.initPlan(PLAN, A);
  // Warm the store's connection so the statements are prepared and the cut hits the operation itself.
  await store.ready(P);
  return { proxy, direct, store };
}

const claimEvents = async (store: Store) => (await store.events({ planPath: P })).filter((e) => e.action === 'claim');

test('a claim whose reply is lost after COMMIT returns the step it claimed; no second step is claimed', async (t) => {
  const { proxy, direct, store } = await setup(t);
  const cut = proxy.arm('EXECUTE sf_claim', 'after-reply');
  const claim = await store.claimNext(PLAN, A);
  await cut;
  assert.ok(claim.claimed);
  assert.deepEqual(
    [claim.step_anchor, claim.claim_token, claim.claimed_by, claim.agent, claim.remaining_ready, claim.total_remaining],
    ['step-1', 1, '/wt/a', 'agent-a', 2, 3],
  );
  assert.deepEqual(
    (await claimEvents(direct)).map((e) => e.step_anchor),
    ['step-1'],
    'one claim was made',
  );
  const ready = await direct.ready(P);
  assert.deepEqual([ready.claimed_steps, ready.ready_steps], [['step-1'], ['step-2', 'step-3']]);
  // The claim is the holder's at once, not after its lease: it completes with the recovered token.
  const done = await store.complete(PLAN, 'step-1', { ...A, token: claim.claim_token });
  assert.equal(done.completed, true);
});

test('a claim cut before the server received it is made once, by running it again', async (t) => {
  const { proxy, direct, store } = await setup(t);
  const cut = proxy.arm('EXECUTE sf_claim', 'before-send');
  const claim = await store.claimNext(PLAN, A);
  await cut;
  assert.ok(claim.claimed);
  assert.deepEqual([claim.step_anchor, claim.claim_token], ['step-1', 1]);
  assert.deepEqual(
    (await claimEvents(direct)).map((e) => e.step_anchor),
    ['step-1'],
  );
});

test('a completion whose reply is lost after COMMIT returns its result, plan completion included', async (t) => {
  const { proxy, direct, store } = await setup(t);
  for (let i = 0; i < 2; i++) {
    const c = await store.claimNext(PLAN, A);
    assert.ok(c.claimed);
    await store.complete(PLAN, c.step_anchor, A);
  }
  const last = await store.claimNext(PLAN, A);
  assert.ok(last.claimed && last.step_anchor === 'step-3');
  const cut = proxy.arm('EXECUTE sf_complete', 'after-reply');
  const done = await store.complete(PLAN, 'step-3', { ...A, token: last.claim_token }, { commitHash: 'abc1234' });
  await cut;
  assert.deepEqual(done, {
    completed: true,
    step_anchor: 'step-3',
    commit_hash: 'abc1234',
    forced: false,
    force_reason: null,
    incomplete_items_auto_completed: 0,
    already_completed: false,
    plan_completed: true,
    remaining_steps: 0,
  });
  const events = await direct.events({ planPath: P });
  assert.equal(events.filter((e) => e.action === 'complete' && e.entity === 'step').length, 3);
  assert.equal(events.filter((e) => e.action === 'complete' && e.entity === 'plan').length, 1);
});
