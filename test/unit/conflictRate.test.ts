// The conflict rate per epic (docs/files.md): each conflict met at a merge is an event saying who
// resolved it; `epic show` and the dashboard's card count them — from a real store.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/core/clock.ts';
import { conflictRate, conflictRateLine, recordConflict } from '../../src/core/orchestrate/mergeConflicts.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import { needsYou } from '../../src/extension/model/needsYou.ts';
import { loadSnapshot } from '../../src/extension/model/snapshot.ts';
import { dashboardData } from '../../src/extension/webviews/dashboardData.ts';

const me = { worktree: '/wt/me', agent: null };
const scheduler = { worktree: 'springfield-scheduler', agent: 'scheduler' };

test('conflicts met at merge are counted by who resolved them, in epic show’s terms and on the dashboard card', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-rate-'));
  const clock = new ManualClock(Date.UTC(2026, 10, 28, 9));
  const store = sqliteStore(join(dir, 'state.db'), { clock, ifMissing: 'create' });
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const a = await store.createEpic({ title: 'Registry', brief: '', priority: 'P2' }, me);
  const b = await store.createEpic({ title: 'Quiet', brief: '', priority: 'P2' }, me);
  const additive = [{ file: 'CHANGELOG.md', how: 'additive' as const, commit: 'abc Build' }];
  await recordConflict(store, a.id, scheduler, 'mechanical', ['CHANGELOG.md'], additive);
  await recordConflict(store, a.id, scheduler, 'ralph', ['src/config.ts'], []);
  await recordConflict(store, a.id, scheduler, 'person', ['src/config.ts'], []);
  await store.recordWorktreeEvent(a.id, scheduler, 'tidy', 'committed leftovers');

  const rate = conflictRate(await store.events({ epicId: a.id }));
  assert.deepEqual(rate, { met: 3, mechanical: 1, ralph: 1, person: 1 });
  assert.equal(
    conflictRateLine(rate),
    'conflicts at merge: 3 met — 1 resolved mechanically, 1 by Ralph, 1 by a person',
  );
  assert.equal(conflictRateLine(conflictRate(await store.events({ epicId: b.id }))), null, 'none met: nothing said');

  const s = await loadSnapshot(store, me.worktree, clock.now());
  const needs = needsYou(s, { running: false, busy: false, waiting: [], unstaffed: [] }, clock.now());
  const data = await dashboardData(store, s, null, needs, {});
  assert.equal(data.epics.find((e) => e.id === a.id)?.conflictsAtMerge, conflictRateLine(rate));
  assert.equal(data.epics.find((e) => e.id === b.id)?.conflictsAtMerge, null);
});
