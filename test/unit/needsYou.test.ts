// What waits for the person (docs/extension.md, "Needs you"): one list, read from the store and the
// scheduler's last pass, that the tree, the dashboard, the status bar and the badge all show.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/core/clock.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { MESSAGES } from '../../src/core/scheduler/rules.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import { needsYou, type SchedulerState } from '../../src/extension/model/needsYou.ts';
import { loadSnapshot } from '../../src/extension/model/snapshot.ts';
import { epicsRoot } from '../../src/extension/views/treeModel.ts';
import { needsYouNews } from '../../src/extension/model/needsYouNews.ts';
import { wakeTimes } from '../../src/extension/liveClock.ts';
import { sqliteOf } from '../helpers/sqlite.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const PLAN =
  '# Plan: Cache\n\n## Step 1: Client {#step-1}\n- [ ] Implement\n\n## Step 2: Store {#step-2}\n- [ ] Write\n';
const me = { worktree: '/wt/me', agent: null };
const lisa = { worktree: '/wt/lisa', agent: 'lisa' };

function setup(t: { after: (fn: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'sf-needs-'));
  const clock = new ManualClock(Date.UTC(2026, 10, 21, 12));
  const store = sqliteStore(join(dir, 'state.db'), { clock, ifMissing: 'create' });
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const source = (name: string) => planSourceOf(`plans/${name}.md`, parsePlan(PLAN, `plans/${name}.md`));
  /** An epic with an approved plan, started (in the given worktree). */
  const started = async (title: string, worktree = `/wt/${title.toLowerCase()}`) => {
    const epic = await store.createEpic({ title, brief: '', priority: 'P2' }, me);
    const src = source(title.toLowerCase());
    await store.proposePlan(epic.id, { ...src, body: PLAN }, lisa);
    await store.approvePlan(epic.id, src, me);
    await store.startEpic(epic.id, src, me);
    await store.setEpicWorktree(epic.id, worktree, `springfield/${epic.id}`);
    return { epic, src };
  };
  return { store, clock, source, started };
}

const idle: SchedulerState = { running: true, busy: false, waiting: [], unstaffed: [] };

test('plans to approve, reviews to decide and blocks to retry are listed in words, each with its action', async (t) => {
  const { store, clock, source, started } = setup(t);
  const search = await store.createEpic({ title: 'Search', brief: '', priority: 'P2' }, me);
  await store.proposePlan(search.id, { ...source('search'), body: PLAN }, lisa);
  const { epic: flaky } = await started('Flaky');
  await store.applyEpicEvent(
    flaky.id,
    'agent_failed',
    me,
    'agent_failed: Ralph failed 3 times in a row (last: run 4 failed: exit 1)',
    { role: 'ralph' },
  );
  const { epic: docs } = await started('Docs');
  sqliteOf(store)
    .prepare(`UPDATE steps SET status = 'completed', completed_at = ? WHERE plan_path = ?`)
    .run(clock.now().toISOString(), 'plans/docs.md');
  await store.finishEpic(docs.id, me, 'done');
  await store.recordSignal(
    docs.id,
    'implementation_failure',
    'The README example is outdated',
    [{ file: 'README.md', line: 1, endLine: null, note: null }],
    { worktree: '/wt/bart', agent: 'bart' },
    true,
  );

  const needs = needsYou(await loadSnapshot(store, me.worktree, clock.now()), undefined, clock.now());
  assert.deepEqual(
    needs.items.map((i) => [i.text, i.label, i.action.kind]),
    [
      ['The plan for “Search” waits for your approval (version 1).', 'Review plan', 'reviewPlan'],
      [
        "Bart's review of “Docs” waits for your decision: implementation failure — The README example is outdated",
        'Decide',
        'decideSignal',
      ],
      ['“Flaky” is blocked: Ralph failed 3 times in a row. Fix the cause, then Retry.', 'Retry', 'retry'],
    ],
  );
  assert.equal(needs.idle, null, 'no scheduler here: nothing said about it');
  for (const i of needs.items) assert.doesNotMatch(i.text, /sf-[0-9a-f]+|\/wt\//, 'epics by title, no ids or paths');
});

test("the views wake at each lease's end, ten minutes before a person's, and at each usage limit's reset", async (t) => {
  const { store, clock, started } = setup(t);
  const { src } = await started('Cache', '/wt/cache');
  await store.claimNext(src, { worktree: '/wt/cache', agent: null }, { leaseSeconds: 30 * 60 });
  await store.claimNext(src, { worktree: '/wt/cache', agent: 'ralph' }, { leaseSeconds: 60 });
  const snap = await loadSnapshot(store, me.worktree, clock.now());
  const at = (minutes: number) => new Date(clock.now().getTime() + minutes * 60_000).toISOString();
  assert.deepEqual(wakeTimes(snap, [{ until: at(90) }]).sort(), [at(1), at(20), at(30), at(90)].sort());
  await store.complete(src, 'step-2', { worktree: '/wt/cache', agent: 'ralph' }, { forceReason: 'test' });
  const after = await loadSnapshot(store, me.worktree, clock.now());
  assert.deepEqual(wakeTimes(after, []).sort(), [at(20), at(30)].sort(), 'a completed step wakes nothing');
});

test("a person's lease near its end needs them (renewed where they hold it); an agent's does not", async (t) => {
  const { store, clock, started } = setup(t);
  const { epic, src } = await started('Cache', '/wt/cache');
  await store.claimNext(src, { worktree: '/wt/cache', agent: null }, { leaseSeconds: 9 * 60 });
  await store.claimNext(src, { worktree: '/wt/cache', agent: 'ralph' }, { leaseSeconds: 60 });
  const snap = await loadSnapshot(store, me.worktree, clock.now());
  const needs = needsYou(snap, undefined, clock.now());
  assert.deepEqual(
    needs.items.map((i) => [i.subject, i.label, i.fact]),
    [['Step 1 · Cache', 'Renew lease', 'your lease ends soon']],
  );
  assert.deepEqual(
    needs.items[0]?.action,
    { kind: 'renewLease', planPath: 'plans/cache.md', anchor: 'step-1', worktree: '/wt/cache' },
    "the claim went to the epic's worktree: renewed there",
  );
  const [top] = epicsRoot(snap, needs);
  assert.deepEqual(
    [top?.children?.()[0]?.label, top?.children?.()[0]?.description],
    ['Renew lease', 'Step 1 · Cache · 9m left'],
  );

  const later = new Date(clock.now().getTime() + 12 * 60_000);
  assert.match(needsYou(snap, undefined, later).items[0]?.text ?? '', /has expired: anyone may take the step over/);
  assert.equal(
    needsYou(snap, undefined, new Date(clock.now().getTime() - 5 * 60_000)).items.length,
    0,
    'fourteen minutes left is not yet news',
  );
  void epic;
});

test('a person-planned epic waits for its plan; a critical verified epic for the merge approval', async (t) => {
  const { store, clock, started } = setup(t);
  await store.createEpic({ title: 'Notes', brief: '', priority: 'P2', planner: 'person' }, me);
  await store.createEpic({ title: 'Lisa plans this', brief: '', priority: 'P2' }, me);
  const { epic: pay } = await started('Payments');
  sqliteOf(store).prepare(`UPDATE epics SET status = 'verified', complexity = 'critical' WHERE id = ?`).run(pay.id);
  const snap = await loadSnapshot(store, me.worktree, clock.now());
  const needs = needsYou(snap, undefined, clock.now());
  assert.deepEqual(
    needs.items.map((i) => [i.subject, i.label]),
    [
      ['Notes', 'New plan…'],
      ['Payments', 'Approve merge'],
    ],
  );
  assert.match(needs.items[0]?.text ?? '', /waits for the plan you said you would write/);
  const rows = epicsRoot(snap, needs);
  assert.equal(
    rows.find((r) => r.label === 'Lisa plans this')?.description,
    'Lisa writes its plan',
    "a Lisa epic is not the person's to plan",
  );
  assert.equal(
    rows.find((r) => r.label === 'Payments')?.contextValue,
    'epic:verified:mergeApproval:worktree:appStopped',
    'Approve merge… and, as it has a worktree of its own, Open worktree… and Run app (no app runs)',
  );
});

test("the scheduler's view joins the list: roles without an agent, a merge held by the main worktree's changes, and what it waits for when idle", async (t) => {
  const { store, clock, started } = setup(t);
  const a = await store.createEpic({ title: 'Alpha', brief: '', priority: 'P2' }, me);
  const b = await store.createEpic({ title: 'Beta', brief: '', priority: 'P2' }, me);
  const { epic: shipped } = await started('Shipped');
  sqliteOf(store).prepare(`UPDATE epics SET status = 'verified' WHERE id = ?`).run(shipped.id);
  const snap = await loadSnapshot(store, me.worktree, clock.now());
  const state: SchedulerState = {
    ...idle,
    unstaffed: [
      { epic_id: a.id, role: 'lisa', message: '' },
      { epic_id: b.id, role: 'lisa', message: '' },
    ],
    waiting: [{ epic_id: shipped.id, kind: 'person', message: MESSAGES.mainDirty(['notes.txt']), until: null }],
  };
  const needs = needsYou(snap, state, clock.now());
  assert.deepEqual(
    needs.items.map((i) => [i.text, i.label]),
    [
      ['No agent is configured for Lisa: “Alpha” and “Beta” wait for one.', 'Configure agents…'],
      [
        '“Shipped”: verified; its merge waits: the main worktree has uncommitted changes (notes.txt); commit or stash them and it merges',
        'Open Source Control',
      ],
    ],
  );
  assert.equal(needs.idle, 'Scheduler idle: waiting for you (the 2 items above).');
  assert.equal(
    epicsRoot(snap, needs).find((r) => r.label === 'Shipped')?.description,
    'merge waits: uncommitted changes in the main worktree · ▱▱▱▱▱ 0/2 · in shipped',
  );

  const backoff: SchedulerState = {
    ...idle,
    waiting: [
      {
        epic_id: a.id,
        kind: 'backoff',
        message: 'Lisa failed',
        until: new Date(clock.now().getTime() + 9 * 60_000).toISOString(),
      },
    ],
  };
  assert.equal(
    needsYou(snap, backoff, clock.now()).idle,
    'Scheduler idle: waiting for a retry — “Alpha” retries in 9 minutes.',
  );
  assert.equal(needsYou(snap, { ...idle, busy: true }, clock.now()).idle, null, 'not idle while its work is under way');
  assert.match(needsYou(snap, idle, clock.now()).idle ?? '', /^Scheduler idle: nothing to do/);
});

test('one source: a deferred epic asks no decision, and what the scheduler last said is shown only while the store still holds it', async (t) => {
  const { store, clock, started } = setup(t);
  const { epic: docs } = await started('Docs');
  sqliteOf(store).prepare(`UPDATE epics SET status = 'implemented' WHERE id = ?`).run(docs.id);
  await store.recordSignal(
    docs.id,
    'implementation_failure',
    'The README example is outdated',
    [{ file: 'README.md', line: 1, endLine: null, note: null }],
    { worktree: '/wt/bart', agent: 'bart' },
    true,
  );
  assert.deepEqual(
    needsYou(await loadSnapshot(store, me.worktree, clock.now()), undefined, clock.now()).items.map((i) => i.label),
    ['Decide'],
  );
  await store.applyEpicEvent(docs.id, 'defer', me, 'later');
  const snap = await loadSnapshot(store, me.worktree, clock.now());
  const needs = needsYou(snap, undefined, clock.now());
  assert.deepEqual(needs.items, [], 'deferred: no decision asked');
  assert.match(String(epicsRoot(snap, needs).find((r) => r.label === 'Docs')?.description), /^deferred/);

  // The scheduler's last pass, before the person approved the plan and before they deferred the epic.
  const search = await store.createEpic({ title: 'Search', brief: '', priority: 'P2' }, me);
  const stale: SchedulerState = {
    ...idle,
    waiting: [
      { epic_id: search.id, kind: 'person', message: MESSAGES.planAwaitingApproval, until: null },
      { epic_id: docs.id, kind: 'person', message: MESSAGES.signalsAwaitingPerson(1), until: null },
    ],
  };
  const now = needsYou(await loadSnapshot(store, me.worktree, clock.now()), stale, clock.now());
  assert.deepEqual(now.items, [], 'no plan waits in the store, the epic is deferred: nothing from the stale pass');
  assert.match(now.idle ?? '', /^Scheduler idle: nothing to do/);
});

test("the person's queue and the fleet: one item for the held planning, the agents at once, and each item told once", async (t) => {
  const { store, clock } = setup(t);
  const a = await store.createEpic({ title: 'Alpha', brief: '', priority: 'P2' }, me);
  const b = await store.createEpic({ title: 'Beta', brief: '', priority: 'P2' }, me);
  const snap = await loadSnapshot(store, me.worktree, clock.now());
  const held = (id: string) => ({
    epic_id: id,
    kind: 'queue' as const,
    message: 'no new planning: 3 epics wait for a person (at most 3, maxWaitingOnPerson)',
    until: null,
  });
  const machine = { epic_id: b.id, kind: 'machine' as const, message: 'waiting: 0.9 GB free, needs 2 GB', until: null };
  const state: SchedulerState = {
    ...idle,
    busy: true,
    waiting: [held(a.id), held(b.id), machine],
    parallel: 'auto: 3 agents at once (at most 20)',
  };
  const needs = needsYou(snap, state, clock.now());
  assert.deepEqual(
    needs.items.map((i) => [i.key, i.text]),
    [
      [
        'queue',
        "No new epic's planning starts while 3 epics wait for a person (at most 3, maxWaitingOnPerson): 2 new epics wait.",
      ],
    ],
  );
  assert.equal(needs.fleet, 'auto: 3 agents at once (at most 20) · waiting: 0.9 GB free, needs 2 GB');
  assert.equal(needsYou(snap, { ...state, running: false }, clock.now()).fleet, null);

  const first = needsYouNews([], needs.items);
  assert.deepEqual(
    first.fresh.map((i) => i.key),
    ['queue'],
  );
  assert.deepEqual(needsYouNews(first.keep, needs.items).fresh, [], 'told once while it stands');
  const gone = needsYouNews(first.keep, []);
  assert.deepEqual(gone.keep, []);
  assert.deepEqual(
    needsYouNews(gone.keep, needs.items).fresh.map((i) => i.key),
    ['queue'],
    'told again when it comes back',
  );
});

test('a built epic whose complexity the config gives the person waits with Review changes; one with a signal waiting is Decide', async (t) => {
  const { store, clock, source } = setup(t);
  const built = async (title: string) => {
    const epic = await store.createEpic({ title, brief: '', priority: 'P2', complexity: 'critical' }, me);
    const src = source(title.toLowerCase());
    await store.proposePlan(epic.id, { ...src, body: PLAN }, lisa);
    await store.approvePlan(epic.id, src, me);
    await store.startEpic(epic.id, src, me);
    sqliteOf(store)
      .prepare(`UPDATE steps SET status = 'completed', completed_at = ? WHERE plan_path = ?`)
      .run(clock.now().toISOString(), src.planPath);
    await store.finishEpic(epic.id, me, 'done');
    return epic;
  };
  await built('Refunds');
  const audit = await built('Audit');
  await store.recordSignal(
    audit.id,
    'implementation_failure',
    'The log misses refunds',
    [{ file: 'src/audit.ts', line: 1, endLine: null, note: null }],
    { worktree: '/wt/bart', agent: 'bart' },
    true,
  );
  const items = async (reviewedByPerson: ('critical' | 'standard')[]) =>
    needsYou(await loadSnapshot(store, me.worktree, clock.now(), reviewedByPerson), undefined, clock.now()).items.map(
      (i) => [i.subject, i.label, i.action.kind],
    );
  assert.deepEqual(await items(['critical']), [
    ['Audit', 'Decide', 'decideSignal'],
    ['Refunds', 'Review changes', 'reviewChanges'],
  ]);
  assert.deepEqual(await items(['standard']), [['Audit', 'Decide', 'decideSignal']], "Bart's to review: nothing asked");
});
