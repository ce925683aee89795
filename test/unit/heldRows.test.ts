// An epic the scheduler holds back says why (issue 36): its row in the Epics view and `epic show` give
// the scheduler's own words (the person's queue full, the machine busy), never "Lisa writes its plan"
// while her planning is held.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/core/clock.ts';
import { epicHolds } from '../../src/core/orchestrate/dryRun.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';
import { DEFAULT_RUN_CONFIG } from '../../src/core/runs/runConfig.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import { needsYou, type SchedulerState } from '../../src/extension/model/needsYou.ts';
import { loadSnapshot } from '../../src/extension/model/snapshot.ts';
import { epicsRoot } from '../../src/extension/views/treeModel.ts';

const me = { worktree: '/wt/me', agent: null };
const lisa = { worktree: '/wt/lisa', agent: 'lisa' };
const PLAN = '# Plan: P\n\n## Step 1: One {#step-1}\n- [ ] Do it\n';

test("a new epic whose planning the person's queue holds: epic show's waiting and its row give the same words", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-held-'));
  const clock = new ManualClock(Date.UTC(2026, 11, 1, 23));
  const store = sqliteStore(join(dir, 'state.db'), { clock, ifMissing: 'create' });
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // Two plans wait for the person's approval; the queue takes one.
  for (const title of ['Search', 'Refunds']) {
    const e = await store.createEpic({ title, brief: '', priority: 'P2' }, me);
    const path = `plans/${title}.md`;
    await store.proposePlan(e.id, { ...planSourceOf(path, parsePlan(PLAN, path)), body: PLAN }, lisa);
  }
  const gift = await store.createEpic({ title: 'Gift cards', brief: '', priority: 'P2' }, me);
  const config = { ...DEFAULT_RUN_CONFIG, roles: { lisa: ['lisa-agent'] }, maxWaitingOnPerson: 1, admission: {} };
  const holds = await epicHolds(store, dir, config as never, gift.id, clock.now());
  assert.deepEqual(
    holds.map((w) => [w.kind, w.message]),
    [['queue', 'no new planning: 2 epics wait for a person (at most 1, maxWaitingOnPerson)']],
  );

  // The editor's scheduler passed with that wait: the row says it, the tooltip too.
  const snap = await loadSnapshot(store, me.worktree, clock.now());
  const state: SchedulerState = { running: true, busy: false, waiting: holds, unstaffed: [] };
  const row = epicsRoot(snap, needsYou(snap, state, clock.now())).find((r) => r.label === 'Gift cards');
  assert.equal(row?.description, holds[0]?.message);
  assert.match(String(row?.tooltip?.()), /The scheduler holds it: no new planning/);
  // Without a scheduler here, or once Lisa runs for it, the row is what the store says.
  const plain = epicsRoot(snap, needsYou(snap, undefined, clock.now())).find((r) => r.label === 'Gift cards');
  assert.equal(plain?.description, 'Lisa writes its plan');
  const running = { ...snap, runs: [{ ...snap.runs[0], status: 'running', epic_id: gift.id }] } as never;
  const planning = epicsRoot(running, needsYou(running, state, clock.now())).find((r) => r.label === 'Gift cards');
  assert.equal(planning?.description, 'Lisa writes its plan');
});
