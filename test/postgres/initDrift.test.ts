// `init` on a plan whose structure drifted since it was recorded refuses with plan_drift and writes
// nothing unless --force, on both backends (main's SQLite behaviour, ported to PostgreSQL).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { postgresBackend, sqliteBackend, type Backend } from './storeFactory.ts';

const P = 'plans/p.md';
const V1 = { planPath: P, plan: parsePlan('# Plan: P\n## Step 1: One\n- [ ] a\n', P) };
const V2 = { planPath: P, plan: parsePlan('# Plan: P\n## Step 1: One\n- [ ] a\n## Step 2: Two\n- [ ] b\n', P) };
const ADMIN = { worktree: '/wt/admin', agent: null };
const pg = postgresForFile({ durability: 'fast' });
const BACKENDS: Backend[] = [sqliteBackend(), postgresBackend(() => pg.server)];

for (const backend of BACKENDS) {
  describe(`init of a drifted plan on ${backend.name}`, () => {
    test('refused with what changed and nothing written; --force re-initialises', async (t) => {
      const store = backend.open(t, new ManualClock(Date.UTC(2026, 0, 1)));
      const first = await store.initPlan(V1, ADMIN);
      assert.equal((await store.initPlan(V1, ADMIN)).already_initialized, true);
      const events = (await store.events({ planPath: P })).length;
      await assert.rejects(store.initPlan(V2, ADMIN), {
        code: 'plan_drift', message: /^plans\/p\.md: plan changed since init \(.+\); re-initialise with 'springfield init --force plans\/p\.md'$/,
      });
      assert.equal((await store.plan(P)).plan_hash, first.plan_hash, 'the stored plan is unchanged');
      assert.equal((await store.events({ planPath: P })).length, events, 'no event was written');
      const forced = await store.initPlan(V2, ADMIN, { force: true });
      assert.equal(forced.reinitialized, true);
    });
  });
}
