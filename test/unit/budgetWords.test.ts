// How a budget reads (issue 36): the one formatter, spendText, words the tree's row, Needs you, the
// card, the plan panel and `epic show` alike (the paused reason is costBlockReason's), so a small spend
// of agent minutes never reads "0.0" and a rounded spend never crosses its limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { costBlockReason, minutesSpent, spendText, type BudgetLine } from '../../src/core/epics/costBudget.ts';
import { needsYou } from '../../src/extension/model/needsYou.ts';
import type { Snapshot } from '../../src/extension/model/snapshot.ts';

const minutes = (spent: number, limit: number | null): BudgetLine => ({
  kind: 'minutes',
  spent,
  limit,
  source: limit === null ? null : 'epic',
});

test('a spend of agent minutes too small for a tenth reads "under 0.1", never "0.0"', () => {
  assert.equal(spendText(minutes(0.04, 0.2)), 'under 0.1 of 0.2 agent minutes');
  assert.equal(spendText(minutes(0.04, null)), 'under 0.1 agent minutes');
  assert.equal(spendText(minutes(0, 0.2)), '0 of 0.2 agent minutes');
  // A limit under a tenth: the spend reads under the limit itself.
  assert.equal(spendText(minutes(0.02, 0.05)), 'under 0.05 of 0.05 agent minutes');
});

test('a rounded spend of agent minutes never crosses its limit: under it stays under, at or past it reads past', () => {
  assert.equal(spendText(minutes(0.99, 1)), '0.9 of 1 agent minutes');
  assert.equal(spendText(minutes(0.26, 0.25)), '0.3 of 0.25 agent minutes');
  assert.equal(spendText(minutes(0.21, 0.2)), '0.2 of 0.2 agent minutes');
  assert.equal(spendText(minutes(0.06, 0.05)), '0.1 of 0.05 agent minutes');
  assert.equal(spendText(minutes(241.5, 240)), '241.5 of 240 agent minutes');
  assert.equal(spendText(minutes(3.04, null)), '3 agent minutes');
  assert.equal(minutesSpent(12), '12');
});

test("a paused epic's reason, and what Needs you and its row say of it, use the same words", () => {
  const reason = costBlockReason(minutes(0.27, 0.2));
  assert.equal(reason, 'budget_exhausted: 0.3 of 0.2 agent minutes');
  const now = new Date('2026-12-01T12:00:00Z');
  const s = {
    now,
    worktree: '/repo',
    epics: [{ id: 'sf-1', title: 'Gift cards', status: 'blocked', status_reason: reason, planner: 'lisa' }],
    plans: [],
    signals: [],
    runs: [],
    awaitingApproval: new Map(),
    changesRequested: new Set(),
    appsRunning: new Set(),
  } as unknown as Snapshot;
  const item = needsYou(s, undefined, now).items.find((i) => i.key === 'paused:sf-1');
  assert.equal(item?.fact, 'paused: 0.3 of 0.2 agent minutes');
  assert.match(item?.text ?? '', /its budget is spent \(0\.3 of 0\.2 agent minutes\)/);
});
