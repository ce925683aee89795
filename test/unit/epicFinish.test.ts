// `epic finish` applies the scheduler's completion rule (completionHold): with verification
// configured or in use, the latest verification must have passed after the latest build.
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/core/clock.ts';
import { RefusedError } from '../../src/core/errors.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import { SqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { sqliteOf } from '../helpers/sqlite.ts';

const MARGE: Actor = { worktree: '/repo', agent: 'marge' };
const PLAN = '# Plan: Finish\n\n## Step 1: Only {#step-1}\n- [ ] do it\n';

async function builtEpic(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'sf-finish-'));
  const clock = new ManualClock();
  const store = new SqliteStore(join(dir, 'state.db'), { clock, ifMissing: 'create' });
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const epic = await store.createEpic({ title: 'Finish me', brief: '', priority: 'P2' }, MARGE);
  const source: PlanSource = { planPath: 'plans/finish.md', plan: parsePlan(PLAN, 'plans/finish.md') };
  await store.initPlan(source, MARGE, { epicId: epic.id });
  await store.applyEpicEvent(epic.id, 'plan_approved', MARGE, 'ok');
  await store.applyEpicEvent(epic.id, 'start', MARGE, 'go');
  const ralph: Actor = { worktree: `/repo.springfield/${epic.id}`, agent: 'ralph' };
  /** One successful builder run that completes step-1 (the first time) and ends a second later. */
  const build = async () => {
    clock.advance(1000);
    const claim = await store.claimNext(source, ralph);
    const holder = claim.claimed ? { ...ralph, token: claim.claim_token } : ralph;
    const run = await store.startRun({ epicId: epic.id, planPath: source.planPath, stepAnchor: 'step-1', role: 'ralph', iteration: 1, worktree: ralph.worktree, agentId: 'ralph', command: ['ralph'], pid: process.pid }, holder);
    if (claim.claimed) {
      await store.updateItems(source, 'step-1', [{ selector: { all: true }, status: 'completed' }], holder);
      await store.complete(source, 'step-1', holder);
    }
    clock.advance(1000);
    await store.finishRun(run.id, { exitCode: 0, signal: null, headAfter: `commit-${clock.now().getTime()}` }, holder);
  };
  const verify = async (verdict: 'pass' | 'fail') => {
    clock.advance(1000);
    await store.recordVerifications([{ runId: null, epicId: epic.id, planPath: source.planPath, stepAnchor: null, command: 'npm test', exitCode: verdict === 'pass' ? 0 : 1, verdict, durationMs: 5, outputTail: '' }]);
  };
  const dump = () => ['epics', 'events', 'debt'].map((table) => sqliteOf(store).prepare(`SELECT * FROM ${table}`).all());
  return { store, id: epic.id, build, verify, dump };
}

async function refused(p: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof RefusedError, String(e));
    assert.equal(e.code, code);
    assert.match(e.message, message);
    return true;
  });
}

test('finish is refused while verification is configured and has not run for the latest build; nothing is written', async (t) => {
  const { store, id, build, dump } = await builtEpic(t);
  await build();
  const before = dump();
  await refused(store.finishEpic(id, MARGE, 'by hand', { verificationConfigured: true }), 'unverified', new RegExp(`^cannot finish ${id}: verification is configured and has not passed since its latest build; `));
  assert.deepEqual(dump(), before);
  assert.equal((await store.getEpic(id)).status, 'in_progress');
});

test('finish is refused when the latest verification failed, naming the command, even with no config saying so', async (t) => {
  const { store, id, build, verify, dump } = await builtEpic(t);
  await build();
  await verify('fail');
  const before = dump();
  await refused(store.finishEpic(id, MARGE, 'by hand'), 'verification_failed', new RegExp(`^cannot finish ${id}: its latest verification failed: npm test exited 1; `));
  assert.deepEqual(dump(), before);
});

test('a pass followed by another build is not a pass for that build; a pass after it finishes the epic', async (t) => {
  const { store, id, build, verify } = await builtEpic(t);
  await build();
  await verify('pass');
  await build();
  await refused(store.finishEpic(id, MARGE, 'by hand'), 'unverified', /has not passed since its latest build/);
  await verify('pass');
  const done = await store.finishEpic(id, MARGE, 'verified by hand', { verificationConfigured: true });
  assert.deepEqual([done.from, done.to], ['in_progress', 'implemented']);
});

test('without verification configured or recorded, finish needs only the steps', async (t) => {
  const { store, id, build } = await builtEpic(t);
  await build();
  assert.equal((await store.finishEpic(id, MARGE, 'by hand')).to, 'implemented');
});
