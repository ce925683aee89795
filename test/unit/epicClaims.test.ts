import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { SqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';

const PLAN = '# Plan: P\n## Step 1: One\n- [ ] a\n';
const person = { worktree: '/wt/main', agent: null };
const ralph = { worktree: '/wt/ralph', agent: 'ralph' };

test("an epic's steps are claimable only while the epic is in progress", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-epic-claims-'));
  const store = new SqliteStore(join(dir, 'state.db'), { ifMissing: 'create' });
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const source = { planPath: 'plans/p.md', plan: parsePlan(PLAN, 'plans/p.md') };
  const epic = await store.createEpic({ title: 'Thing', brief: '', priority: 'P2' }, person);
  await store.proposePlan(epic.id, { ...source, body: PLAN }, { worktree: '/wt/lisa', agent: 'lisa' });
  await store.approvePlan(epic.id, source, person);

  const refusal = await store.claimNext(source, ralph).then(() => assert.fail('claimed a step of an epic that is not started'), (err: Error) => err);
  const waiting = await store.ready('plans/p.md');
  assert.match(refusal.message, /which is ready; .*springfield epic start/);
  assert.equal((refusal as { code?: string }).code, 'epic_not_in_progress');
  assert.deepEqual([waiting.ready_steps, waiting.waiting_steps, waiting.waiting_reason, waiting.epic_id, waiting.epic_status], [[], ['step-1'], refusal.message, epic.id, 'ready'],
    'ready agrees with claim: nothing ready, step-1 waiting for the epic to start, with the words claim refuses with');

  await store.startEpic(epic.id, source, person);
  const started = await store.ready('plans/p.md');
  assert.deepEqual([started.ready_steps, started.waiting_steps, started.waiting_reason, started.epic_status], [['step-1'], [], null, 'in_progress']);
  const claim = await store.claimNext(source, ralph);
  assert.equal(claim.claimed, true);
  await store.reset('plans/p.md', 'step-1', person);
  await store.applyEpicEvent(epic.id, 'defer', person, 'parked');
  await assert.rejects(store.claimNext(source, ralph), { code: 'epic_not_in_progress', message: /which is deferred/ });
  assert.deepEqual((await store.ready('plans/p.md')).waiting_steps, ['step-1']);
});
