// Conflicts ahead and budgets as the editor shows them (docs/extension.md): the epic's tree row, its
// dashboard card, the day's spend, and the Needs you items with their actions — from a real store.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/core/clock.ts';
import type { ConflictAhead } from '../../src/core/orchestrate/conflictsAhead.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import { ConflictWatch } from '../../src/extension/model/conflictWatch.ts';
import { needsYou } from '../../src/extension/model/needsYou.ts';
import { loadSnapshot } from '../../src/extension/model/snapshot.ts';
import { epicsRoot } from '../../src/extension/views/treeModel.ts';
import { dashboardData } from '../../src/extension/webviews/dashboardData.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const PLAN = '# Plan: Cache\n\n## Step 1: Client {#step-1}\n- [ ] Implement\n';
const me = { worktree: '/wt/me', agent: null };
const lisa = { worktree: '/wt/lisa', agent: 'lisa' };
const usage = (costUsd: number) => ({
  costUsd,
  inputTokens: 1000,
  outputTokens: 200,
  cacheReadTokens: null,
  cacheWriteTokens: null,
  premiumRequests: null,
});

function setup(t: { after: (fn: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'sf-show27-'));
  const clock = new ManualClock(Date.UTC(2026, 10, 21, 12));
  const store = sqliteStore(join(dir, 'state.db'), { clock, ifMissing: 'create' });
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const started = async (title: string) => {
    const epic = await store.createEpic({ title, brief: '', priority: 'P2' }, me);
    const src = planSourceOf(`plans/${title.toLowerCase()}.md`, parsePlan(PLAN, `plans/${title.toLowerCase()}.md`));
    await store.proposePlan(epic.id, { ...src, body: PLAN }, lisa);
    await store.approvePlan(epic.id, src, me);
    await store.startEpic(epic.id, src, me);
    await store.setEpicWorktree(epic.id, `/wt/${title.toLowerCase()}`, `springfield/${epic.id}`);
    return epic;
  };
  const spend = async (epicId: string, usd: number) => {
    const r = await store.startRun(
      {
        epicId,
        planPath: null,
        stepAnchor: null,
        role: 'ralph',
        iteration: 1,
        worktree: '/wt/x',
        agentId: 'ralph',
        command: ['ralph'],
        pid: 1,
      },
      me,
    );
    await store.finishRun(r.id, { exitCode: 0, signal: null, usage: usage(usd) }, me);
  };
  return { dir, store, clock, started, spend };
}

test('a paused epic: its row says paused with the spend, its card the spend against budget and the message, Needs you offers Raise budget…', async (t) => {
  const { store, clock, started, spend } = setup(t);
  const cache = await started('Cache');
  const search = await started('Search');
  await spend(cache.id, 20.4);
  await spend(search.id, 4.2);
  await store.applyEpicEvent(cache.id, 'budget_exhausted', me, 'budget_exhausted: $20.40 of $20');
  const s = await loadSnapshot(store, me.worktree, clock.now());
  const needs = needsYou(s, undefined, clock.now());

  const item = needs.items.find((i) => i.epicId === cache.id);
  assert.deepEqual(
    [item?.label, item?.action, item?.fact],
    ['Raise budget…', { kind: 'raiseBudget', epicId: cache.id }, 'paused: $20.40 of $20'],
  );
  assert.equal(item?.text, '“Cache” is paused: its budget is spent ($20.40 of $20). Raise its budget, then Retry.');

  const row = epicsRoot(s, needs).find((n) => n.id === `epic:${cache.id}`);
  assert.match(String(row?.description), /^paused: \$20\.40 of \$20 · /);
  assert.ok(String(row?.description).length < 60, `fits a 300 px row: ${row?.description}`);

  const data = await dashboardData(store, s, null, needs, { budget: { epicUsd: 20, dailyUsd: 100 } });
  const card = data.epics.find((e) => e.id === cache.id);
  assert.deepEqual(
    card?.spend.map((l) => [l.text, l.own, l.share >= 1]),
    [['$20.40 of $20', false, true]],
  );
  assert.match(
    card?.paused ?? '',
    /^paused — budget_exhausted: \$20\.40 of \$20; raise its budget \(springfield epic budget sf-\w+ --usd N\), then springfield epic retry sf-\w+$/,
  );
  assert.equal(card?.blockedReason, null, 'shown as paused, not as a block');
  assert.deepEqual(
    data.epics.find((e) => e.id === search.id)?.spend.map((l) => l.text),
    ['$4.20 of $20'],
  );
  assert.deepEqual(data.figures.today, { usd: '$24.60', limit: '$100', spent: false });

  // The epic's own budget, raised as `epic budget --usd 30` does, shows as its own; no config budget, no bars.
  await store.setEpicBudget(search.id, { usd: 30 }, me);
  const again = await dashboardData(store, await loadSnapshot(store, me.worktree, clock.now()), null, needs, {});
  assert.deepEqual(
    again.epics.find((e) => e.id === search.id)?.spend.map((l) => [l.text, l.own]),
    [['$4.20 of $30', true]],
  );
  assert.deepEqual(again.epics.find((e) => e.id === cache.id)?.spend, []);
  assert.deepEqual(again.figures.today, { usd: '$24.60', limit: null, spent: false });
});

test("the daily budget spent: the idle line says the scheduler's one sentence", async (t) => {
  const { store, clock, started } = setup(t);
  await started('Cache');
  const s = await loadSnapshot(store, me.worktree, clock.now());
  const waiting = [
    {
      epic_id: s.epics[0]?.id ?? '',
      kind: 'budget' as const,
      message:
        'waiting: daily budget spent: $101 of $100; runs start again tomorrow (UTC) or when the budget is raised',
      until: null,
    },
  ];
  const needs = needsYou(s, { running: true, busy: false, waiting, unstaffed: [] }, clock.now());
  assert.equal(
    needs.idle,
    'Scheduler idle: daily budget spent: $101 of $100; runs start again tomorrow (UTC) or when the budget is raised.',
  );
});

test('a conflict ahead: the row names the other epic and the file, the card lists it, Needs you opens the file in the worktree', async (t) => {
  const { store, clock, started } = setup(t);
  const a = await started('Add caching');
  const b = await started('Users');
  const c = await started('Docs');
  await store.applyEpicEvent(c.id, 'defer', me, 'later');
  const ahead = new Map<string, ConflictAhead[]>([
    [
      b.id,
      [
        { with: a.id, files: ['src/db/user.ts', 'src/db/index.ts'] },
        { with: 'main', files: ['README.md'] },
      ],
    ],
    [a.id, [{ with: b.id, files: ['src/db/user.ts', 'src/db/index.ts'] }]],
    [c.id, [{ with: 'main', files: ['docs/a.md'] }]],
  ]);
  const s = await loadSnapshot(store, me.worktree, clock.now());
  const needs = needsYou(s, undefined, clock.now(), ahead);

  const item = needs.items.find((i) => i.epicId === b.id);
  assert.deepEqual(
    [item?.fact, item?.label, item?.action],
    [
      'conflict ahead with Add caching in user.ts (+1)',
      'Open file',
      { kind: 'openFile', path: '/wt/users/src/db/user.ts' },
    ],
  );
  assert.equal(
    item?.text,
    '“Users” would conflict with “Add caching” in src/db/user.ts, src/db/index.ts; also with main (a test merge; nothing touched). Of the two, the one that merges first goes in; the other rebases after.',
  );
  assert.equal(
    needsYou(s, undefined, clock.now(), new Map([[b.id, [{ with: 'main', files: ['README.md'] }]]])).items.find(
      (i) => i.epicId === b.id,
    )?.text,
    '“Users” would conflict with main in README.md (a test merge; nothing touched). Its branch is rebased onto main when it merges; that rebase will stop there, for you to resolve in its worktree.',
    'a conflict with main is not said as a race between two epics',
  );
  assert.equal(
    needs.items.some((i) => i.epicId === c.id),
    false,
    'a deferred epic is not under way: nothing shown',
  );

  const rows = epicsRoot(s, needs);
  assert.match(
    String(rows.find((n) => n.id === `epic:${b.id}`)?.description),
    /^conflict ahead with Add caching in user\.ts \(\+1\) · /,
  );
  assert.match(
    String(rows.find((n) => n.id === `epic:${a.id}`)?.description),
    /^conflict ahead with Users in user\.ts/,
  );

  const data = await dashboardData(store, s, null, needs, { ahead });
  assert.deepEqual(data.epics.find((e) => e.id === b.id)?.conflictsAhead, [
    { with: a.id, withTitle: 'Add caching', files: ['src/db/user.ts', 'src/db/index.ts'] },
    { with: 'main', withTitle: 'main', files: ['README.md'] },
  ]);
  assert.deepEqual(data.epics.find((e) => e.id === c.id)?.conflictsAhead, []);
  assert.ok(data.needsYou.items.some((i) => i.label === 'Open file' && i.epicId === b.id));
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  }).trim();
}

test("the editor's own test merges: real git, once per change of a branch tip, throttled, and none while the scheduler's forecast is there", async (t) => {
  const { dir, store, clock, started } = setup(t);
  const repo = join(dir, 'repo');
  git(dir, 'init', '-q', '-b', 'main', repo);
  writeFileSync(join(repo, 'user.ts'), 'one\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'base');
  const a = await started('Add caching');
  const b = await started('Users');
  for (const [e, text] of [
    [a, 'two\n'],
    [b, 'three\n'],
  ] as const) {
    git(repo, 'checkout', '-qb', `springfield/${e.id}`, 'main');
    writeFileSync(join(repo, 'user.ts'), text);
    git(repo, 'commit', '-qam', e.title);
  }
  git(repo, 'checkout', '-q', 'main');

  const scheduler: { forecast?: Map<string, ConflictAhead[]> } = {};
  let rounds = 0;
  let changed = 0;
  const { conflictsAhead } = await import('../../src/core/orchestrate/conflictsAhead.ts');
  const watch = new ConflictWatch({
    mainRoot: () => repo,
    forecast: () => scheduler.forecast,
    onChange: () => changed++,
    minIntervalMs: 200,
    test: async (root, id, others) => {
      rounds++;
      return conflictsAhead(root, id, others);
    },
  });
  t.after(() => watch.dispose());
  const s = await loadSnapshot(store, me.worktree, clock.now());
  // Each round ends by calling onChange when what it found changed: the test waits for that, however
  // long git takes on a busy machine. Where no round may start, it waits longer than the throttle.
  const changes = async (n: number) => {
    for (let waited = 0; changed < n; waited += 20) {
      assert.ok(waited < 120_000, `still ${changed} change(s) of ${n} after 120 s (rounds: ${rounds})`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const noRound = async () => new Promise((r) => setTimeout(r, 400));
  watch.update(s);
  await changes(1);
  assert.deepEqual(
    [...watch.current].map(([id, cs]) => [id, cs.map((x) => [x.with, x.files])]).sort(),
    [
      [a.id, [[b.id, ['user.ts']]]],
      [b.id, [[a.id, ['user.ts']]]],
    ].sort(),
    'the pair conflicts; neither conflicts with main',
  );
  assert.deepEqual([rounds, changed], [2, 1], 'each epic once, the pair tested once');

  watch.update(s);
  watch.update(s);
  await noRound();
  assert.equal(rounds, 2, 'no tip moved: no test merge');

  git(repo, 'checkout', '-q', `springfield/${b.id}`);
  writeFileSync(join(repo, 'user.ts'), 'two\n');
  git(repo, 'commit', '-qam', 'agree');
  git(repo, 'checkout', '-q', 'main');
  watch.update(s);
  assert.deepEqual(
    [...watch.current].map(([, cs]) => cs.length),
    [0, 0],
    'a tip moved: what was tested of it is stale at once, before the next round',
  );
  await changes(2);
  assert.deepEqual([rounds, changed], [4, 2], 'a tip moved: tested again');
  assert.deepEqual(
    [...watch.current].map(([, cs]) => cs.length),
    [0, 0],
    'the conflict is gone',
  );

  scheduler.forecast = new Map([[a.id, [{ with: 'main', files: ['x'] }]]]);
  git(repo, 'checkout', '-q', `springfield/${b.id}`);
  writeFileSync(join(repo, 'user.ts'), 'four\n');
  git(repo, 'commit', '-qam', 'again');
  git(repo, 'checkout', '-q', 'main');
  watch.update(s);
  await noRound();
  assert.equal(rounds, 4, "the scheduler running here: its forecast is used, no test merge of the editor's own");
  assert.equal(watch.current, scheduler.forecast);

  delete scheduler.forecast;
  watch.update(s);
  await changes(3);
  assert.equal(rounds, 6, 'the scheduler stopped: the editor test-merges afresh');
  assert.deepEqual(
    [...watch.current].map(([, cs]) => cs.length),
    [1, 1],
    'the new conflict is seen',
  );
});
