import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/core/clock.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import { loadSnapshot } from '../../src/extension/model/snapshot.ts';
import { needsYou } from '../../src/extension/model/needsYou.ts';
import { sqliteOf } from '../helpers/sqlite.ts';
import { agentsRoot, epicsRoot, signalsRoot } from '../../src/extension/views/treeModel.ts';
import { dashboardData } from '../../src/extension/webviews/dashboardData.ts';
import type { TreeNode } from '../../src/extension/views/nodes.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const PLAN = `# Plan: Cache
## Approach
Read-through.
## Step 1: Client {#step-1}
**Tasks:**
- [ ] Implement
- [ ] Errors
### Step 1.1: Retry {#step-1-1}
- [ ] Backoff
## Step 2: Cache {#step-2}
**Depends on:** #step-1
- [ ] Store
`;

function setup(t: { after: (fn: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'sf-tree-'));
  const clock = new ManualClock(Date.UTC(2026, 10, 21, 12));
  const store = sqliteStore(join(dir, 'state.db'), { clock, ifMissing: 'create' });
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { store, clock, source: planSourceOf('plans/cache.md', parsePlan(PLAN, 'plans/cache.md')) };
}

const me = { worktree: '/wt/me', agent: null };
const ralph = { worktree: '/wt/ralph', agent: 'ralph-1' };

function walk(nodes: readonly TreeNode[]): TreeNode[] {
  return nodes.flatMap((n) => [n, ...walk(n.children?.() ?? [])]);
}

test('an epic with an approved plan shows its steps, progress, holder and lease; items carry checkboxes', async (t) => {
  const { store, clock, source } = setup(t);
  const epic = await store.createEpic({ title: 'Cache reads', brief: 'Fast reads', priority: 'P1' }, me);
  await store.proposePlan(epic.id, { ...source, body: PLAN }, { worktree: '/wt/lisa', agent: 'lisa' });
  await store.approvePlan(epic.id, source, me);
  await store.startEpic(epic.id, source, me);
  await store.claimNext(source, ralph, { leaseSeconds: 6300 });
  await store.updateItems(source, 'step-1', [{ selector: { kind: 'task', ordinal: 0 }, status: 'completed' }], ralph);

  const snap = await loadSnapshot(store, me.worktree, clock.now());
  const nodes = walk(epicsRoot(snap));
  const byId = new Map(nodes.map((n) => [n.id, n]));

  const epicRow = byId.get(`epic:${epic.id}`);
  assert.equal(epicRow?.label, 'Cache reads', 'the title alone: the id is in the tooltip');
  assert.match(epicRow?.description ?? '', /^in progress · ▱+ 0\/2$/);
  assert.doesNotMatch(epicRow?.description ?? '', /standard/, 'no complexity on the row');
  assert.match(epicRow?.tooltip?.() ?? '', new RegExp(`${epic.id.replace('-', '\\\\-')}[\\s\\S]*Complexity: standard`));
  assert.equal(epicRow?.contextValue, 'epic:in_progress');
  const step1 = byId.get('step:plans/cache.md#step-1');
  assert.equal(step1?.icon?.id, 'circle-filled');
  assert.equal(
    step1?.description,
    'ralph-1 · 1h45m · ▰▱▱ 1/3',
    'holder and lease first, the bar last; the worktree is in the tooltip',
  );
  assert.equal(step1?.contextValue, 'step:claimed:elsewhere:agent');
  assert.equal(step1?.label, 'Client', 'the title: its number is in the tooltip');
  const tip = step1?.tooltip?.() ?? '';
  assert.match(tip, /claim token 1/);
  assert.match(
    tip,
    /Status: \*\*claimed\*\* — taken under a lease, not started yet/,
    'claimed is told apart from started',
  );
  assert.match(tip, /Held by ralph\\-1 in ralph/);
  assert.doesNotMatch(tip, /\/wt\//, 'no worktree path in the tooltip');
  const step2 = byId.get('step:plans/cache.md#step-2');
  assert.equal(step2?.icon?.id, 'lock');
  assert.equal(step2?.description, 'waits for Client · ▱ 0/1');
  assert.match(step2?.tooltip?.() ?? '', /Depends on: Step 1 — waiting for Step 1/);
  assert.equal(byId.get('step:plans/cache.md#step-1-1')?.label, 'Retry');
  const items = nodes.filter((n) => n.kind === 'item' && n.ref.anchor === 'step-1');
  assert.deepEqual(
    items.map((n) => [n.label, n.checked]),
    [
      ['Implement', true],
      ['Errors', false],
    ],
  );
  assert.ok(byId.has('step:plans/cache.md#step-1-1'), 'substep nested under its parent');
});

test('a lease counts down with the clock and reads as expired once it runs out; the next change is when the text changes', async (t) => {
  const { store, clock, source } = setup(t);
  await store.initPlan(source, me);
  await store.claimNext(source, ralph, { leaseSeconds: 125 });
  const snap = await loadSnapshot(store, me.worktree, clock.now());
  const step1 = walk(epicsRoot(snap)).find((n) => n.id === 'step:plans/cache.md#step-1');
  assert.ok(step1?.live, 'a claimed step moves with the clock');
  const at = (ms: number) => step1.live?.(new Date(clock.now().getTime() + ms));
  assert.match(step1.description ?? '', /^ralph-1 · 2m ·/);
  assert.deepEqual(at(0), { text: step1.description, nextMs: 5001 });
  assert.match(at(5001)?.text ?? '', /· 1m ·/);
  assert.match(at(66_000)?.text ?? '', /· 59s ·/);
  assert.match(at(125_000 + 6 * 60_000)?.text ?? '', /· expired 6m ago ·/);
  const pending = walk(epicsRoot(snap)).find((n) => n.id === 'step:plans/cache.md#step-2');
  assert.equal(pending?.live, undefined, 'a step nobody holds does not tick');
});

test('a proposed plan waiting for approval needs the person: the badge counts it and the tree lists it first', async (t) => {
  const { store, clock, source } = setup(t);
  const epic = await store.createEpic({ title: 'Search', brief: '', priority: 'P2' }, me);
  await store.proposePlan(epic.id, { ...source, body: PLAN }, { worktree: '/wt/lisa', agent: 'lisa' });
  const snap = await loadSnapshot(store, me.worktree, clock.now());
  const needs = needsYou(snap, undefined, clock.now());
  const [top, row] = epicsRoot(snap, needs);
  assert.equal(top?.label, 'Needs you (1)');
  assert.deepEqual(
    top?.children?.().map((c) => [c.label, c.description, c.command?.title]),
    [['Review plan', 'Search', 'Review plan']],
  );
  assert.match(row?.description ?? '', /plan awaiting approval/);
  assert.equal(row?.contextValue, 'epic:planned:awaitingApproval');
  assert.equal(needs.items.length, 1);
});

test('signals list awaiting ones first with their locations', async (t) => {
  const { store, clock, source } = setup(t);
  const epic = await store.createEpic({ title: 'Fix typo', brief: '', priority: 'P2' }, me);
  await store.proposePlan(epic.id, { ...source, body: PLAN }, { worktree: '/wt/lisa', agent: 'lisa' });
  await store.approvePlan(epic.id, source, me);
  await store.startEpic(epic.id, source, me);
  sqliteOf(store)
    .prepare(`UPDATE steps SET status = 'completed', completed_at = ? WHERE plan_path = ?`)
    .run(clock.now().toISOString(), source.planPath);
  await store.finishEpic(epic.id, me, 'done');
  await store.recordSignal(
    epic.id,
    'implementation_failure',
    'races on write',
    [{ file: 'src/a.ts', line: 3, endLine: null, note: 'here' }],
    { worktree: '/wt/bart', agent: 'bart' },
    true,
  );
  const snap = await loadSnapshot(store, me.worktree, clock.now());
  const [sig] = signalsRoot(snap);
  assert.equal(sig?.label, 'implementation failure · Fix typo');
  assert.equal(sig?.contextValue, 'signal:awaiting');
  assert.deepEqual(
    sig?.children?.().map((c) => [c.label, c.description]),
    [['src/a.ts:3', 'here']],
  );
  assert.deepEqual(
    needsYou(snap, undefined, clock.now()).items.map((i) => [i.text, i.label]),
    [[`Bart's review of “Fix typo” waits for your decision: implementation failure — races on write`, 'Decide']],
  );

  // A person's review, in a person's words; once the epic is done, its old signals are settled, not warnings.
  await store.decideSignal(sig?.ref?.signalId as number, 'accept', me, '');
  await store.recordSignal(
    epic.id,
    'implementation_failure',
    'rename the helper',
    [{ file: 'src/a.ts', line: 5, endLine: null, note: 'call it cache' }],
    { worktree: '/wt/me', agent: 'marge' },
  );
  const mine = signalsRoot(await loadSnapshot(store, me.worktree, clock.now()));
  assert.equal(mine[0]?.label, 'changes requested by you · Fix typo');
  assert.deepEqual(mine[0]?.icon, { id: 'warning', color: 'disabledForeground' });
  sqliteOf(store).prepare(`UPDATE epics SET status = 'done' WHERE id = ?`).run(epic.id);
  const settled = signalsRoot(await loadSnapshot(store, me.worktree, clock.now()));
  assert.deepEqual(
    settled.map((n) => [n.label, n.icon]),
    [
      ['changes requested by you · Fix typo', { id: 'check', color: 'disabledForeground' }],
      ['implementation failure · Fix typo', { id: 'check', color: 'disabledForeground' }],
    ],
  );
  assert.match(String(settled[0]?.description), / · settled: the epic is done$/);
});

test('an epic blocked by a failing agent shows who failed, offers Retry, and its runs show their outcome and output', async (t) => {
  const { store, clock, source } = setup(t);
  const epic = await store.createEpic({ title: 'Flaky', brief: '', priority: 'P2' }, me);
  await store.proposePlan(epic.id, { ...source, body: PLAN }, { worktree: '/wt/lisa', agent: 'lisa' });
  await store.approvePlan(epic.id, source, me);
  await store.startEpic(epic.id, source, me);
  const started = await store.startRun(
    {
      epicId: epic.id,
      planPath: null,
      stepAnchor: null,
      role: 'ralph',
      iteration: 1,
      worktree: '/wt/e',
      agentId: 'ralph',
      command: ['claude', '-p', 'go'],
      pid: 1,
    },
    ralph,
  );
  const run = await store.finishRun(
    started.id,
    { exitCode: 1, signal: null, outputTail: 'working\nError: 401 invalid x-api-key' },
    ralph,
  );
  const reason = `agent_failed: Ralph failed 3 times in a row (last: run ${run.id} failed: exit 1); last output: Error: 401 invalid x-api-key`;
  await store.applyEpicEvent(epic.id, 'agent_failed', me, reason, { role: 'ralph' });
  const snap = await loadSnapshot(store, me.worktree, clock.now());
  const row = epicsRoot(snap).find((n) => n.id === `epic:${epic.id}`);
  assert.equal(row?.description, 'blocked: Ralph failed 3 times in a row · ▱▱▱▱▱ 0/2');
  assert.equal(row?.contextValue, 'epic:blocked:retry');
  assert.match(row?.tooltip?.() ?? '', /Nothing runs for it until a person retries/);
  const [agentRow] = agentsRoot(snap);
  assert.equal(agentRow?.label, 'Ralph · Flaky');
  assert.match(agentRow?.description ?? '', /^failed \(exit 1\) · (just now|\d+s ago)$/);
  assert.match(agentRow?.tooltip?.() ?? '', /^\*\*Ralph\*\* on Flaky \(sf\\-[0-9a-f]+\)\n\nCommand: `claude -p go`/);
  assert.equal(agentRow?.icon?.id, 'error');
  assert.match(
    agentRow?.tooltip?.() ?? '',
    /\*\*failed \(exit 1\)\*\* — exit 1\n\n```\nworking\nError: 401 invalid x-api-key\n```$/,
  );
  const dash = await dashboardData(store, snap, null);
  assert.deepEqual(
    dash.epics.map((e) => [e.status, e.blockedReason, e.retryable]),
    [['blocked', reason.replace('agent_failed: ', ''), true]],
  );
  assert.deepEqual(
    dash.runs.map((r) => [r.status, r.exitCode, r.reason, r.outputTail]),
    [['failed', 1, 'exit 1', 'working\nError: 401 invalid x-api-key']],
  );

  await store.applyEpicEvent(epic.id, 'retry', me, 'key fixed');
  const after = await loadSnapshot(store, me.worktree, clock.now());
  assert.equal(
    epicsRoot(after).find((n) => n.id === `epic:${epic.id}`)?.contextValue,
    'epic:in_progress',
    'back where it was blocked from; no Retry any more',
  );
});

test('a running agent row shows its iteration against the budget: build iterations for Ralph, the plan it writes for Lisa', async (t) => {
  const { store, clock, source } = setup(t);
  const epic = await store.createEpic(
    { title: 'Add a login form', brief: '', priority: 'P2', complexity: 'trivial' },
    me,
  );
  const planning = await store.createEpic({ title: 'Search', brief: '', priority: 'P2', complexity: 'critical' }, me);
  await store.proposePlan(epic.id, { ...source, body: PLAN }, { worktree: '/wt/lisa', agent: 'lisa' });
  await store.approvePlan(epic.id, source, me);
  await store.startEpic(epic.id, source, me);
  await store.startRun(
    {
      epicId: epic.id,
      planPath: null,
      stepAnchor: null,
      role: 'ralph',
      iteration: 2,
      worktree: '/wt/e',
      agentId: 'ralph',
      command: ['claude'],
      pid: process.pid,
    },
    ralph,
  );
  await store.startRun(
    {
      epicId: planning.id,
      planPath: null,
      stepAnchor: null,
      role: 'lisa',
      iteration: 0,
      worktree: '/wt/m',
      agentId: 'lisa',
      command: ['claude'],
      pid: process.pid,
    },
    ralph,
  );
  const rows = agentsRoot(await loadSnapshot(store, me.worktree, clock.now()));
  const by = (label: string) => rows.find((r) => r.label === label);
  assert.match(
    by('Ralph · Add a login form')?.description ?? '',
    /^running \d+s · iteration 2\/5$/,
    'a trivial epic builds within 5 iterations',
  );
  assert.match(
    by('Lisa · Search')?.description ?? '',
    /^running \d+s · iteration 1\/8$/,
    "her first run writes plan 1 of a critical epic's 8",
  );
  assert.match(by('Ralph · Add a login form')?.tooltip?.() ?? '', /build iteration 2\/5/);
});

test('the dashboard shows the debt register and, per epic, the cost and tokens its runs reported (docs/lifecycle.md)', async (t) => {
  const { store, clock } = setup(t);
  const costed = await store.createEpic({ title: 'Costed', brief: '', priority: 'P2' }, me);
  const parked = await store.createEpic({ title: 'Parked', brief: '', priority: 'P2' }, me);
  const none = await store.createEpic({ title: 'Unreported', brief: '', priority: 'P2' }, me);
  await store.applyEpicEvent(parked.id, 'defer', me, 'waiting for the API');
  for (const [epicId, usage] of [
    [costed.id, { costUsd: 0.5, inputTokens: 1000, outputTokens: 200 }],
    [costed.id, { costUsd: 0.25, inputTokens: 10, outputTokens: 5 }],
    [none.id, null],
  ] as const) {
    const run = await store.startRun(
      {
        epicId,
        planPath: null,
        stepAnchor: null,
        role: 'lisa',
        iteration: 0,
        worktree: '/wt/m',
        agentId: 'lisa',
        command: ['claude'],
        pid: process.pid,
      },
      ralph,
    );
    await store.finishRun(
      run.id,
      {
        exitCode: 0,
        signal: null,
        usage: usage ? { ...usage, cacheReadTokens: null, cacheWriteTokens: null, premiumRequests: null } : null,
      },
      ralph,
    );
  }
  const dash = await dashboardData(store, await loadSnapshot(store, me.worktree, clock.now()), null);
  const by = (id: string) => dash.epics.find((e) => e.id === id);
  assert.deepEqual([by(costed.id)?.costUsd, by(costed.id)?.tokens], [0.75, 1215]);
  assert.deepEqual([by(none.id)?.costUsd, by(none.id)?.tokens], [null, null], 'nothing reported is not zero');
  assert.deepEqual(
    dash.debt.map((d) => [d.epicId, d.title, d.reason]),
    [[parked.id, 'Parked', 'waiting for the API']],
  );
  await store.applyEpicEvent(parked.id, 'resume', me, 'back');
  assert.deepEqual(
    (await dashboardData(store, await loadSnapshot(store, me.worktree, clock.now()), null)).debt,
    [],
    'a resume closes it',
  );
});
