// The dashboard's Stats view model over the scripted two-epic history (test/helpers/statsHistory.ts), on a
// real SQLite file: the charts' numbers are the ledger's (docs/stats.md), and the dashboard carries them.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/core/clock.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { statsData, statsSince, weekOf } from '../../src/extension/webviews/statsData.ts';
import { script, T0 } from '../helpers/statsHistory.ts';

function open(t: TestContext, clock: ManualClock): Store {
  const dir = mkdtempSync(join(tmpdir(), 'sf-stats-view-'));
  const store = openStore({ location: join(dir, 'state.db'), ifMissing: 'create', clock });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

test('weeks are their Monday (UTC); the view covers this week and the seven before it', () => {
  assert.equal(weekOf('2026-04-01T03:00:00.000Z'), '2026-03-30', 'a Wednesday');
  assert.equal(weekOf('2026-03-30T00:00:00.000Z'), '2026-03-30', 'a Monday');
  assert.equal(weekOf('2026-04-05T23:59:59.000Z'), '2026-03-30', 'a Sunday');
  assert.equal(statsSince(new Date('2026-04-01T03:00:00.000Z')), '2026-02-09T00:00:00.000Z');
});

test('the three charts of the scripted history: cost per merged step by week, first-pass per preset and kind, sessions per step', async (t) => {
  const clock = new ManualClock(T0);
  const store = open(t, clock);
  await script(store, clock);
  const since = statsSince(clock.now());
  const view = statsData(await store.statsRows(since));
  assert.equal(view.since, since);
  // Both epics merged on Wednesday 2026-04-01: A's two steps at $0.45 and $0.65 (claude), B's one at $0.85 (codex).
  assert.deepEqual(view.costOverTime, {
    weeks: ['2026-03-30'],
    series: [
      { preset: 'claude', points: [{ week: '2026-03-30', costPerStep: 0.55, steps: 2 }] },
      { preset: 'codex', points: [{ week: '2026-03-30', costPerStep: 0.85, steps: 1 }] },
    ],
  });
  assert.deepEqual(view.acceptance, [
    { preset: 'claude', kind: 'docs', accepted: 2, reviewed: 2, rate: 1 },
    { preset: 'codex', kind: 'code', accepted: 0, reviewed: 1, rate: 0 },
  ]);
  assert.deepEqual(view.sessions, [
    { preset: 'claude', steps: 2, perStep: 2, seed: 2 },
    { preset: 'codex', steps: 1, perStep: 5, seed: 3 },
  ]);
  // Nine weeks later the history has left the window: every chart is empty.
  clock.advance(9 * 7 * 86_400_000);
  const later = statsData(await store.statsRows(statsSince(clock.now())));
  assert.deepEqual([later.costOverTime, later.acceptance, later.sessions], [{ weeks: [], series: [] }, [], []]);
});
