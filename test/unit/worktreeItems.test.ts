import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EpicRow, SpringfieldWorktree } from '../../src/core/index.ts';
import type { Snapshot } from '../../src/extension/model/snapshot.ts';
import {
  appTerminalName,
  pruneSummary,
  revealLabel,
  sourceControlCandidates,
  worktreeActions,
  worktreeDescription,
  worktreeItem,
  worktreeProblem,
} from '../../src/extension/model/worktreeItems.ts';
import { epicsRoot } from '../../src/extension/views/treeModel.ts';

const MAIN = '/src/shop';

function epic(over: Partial<EpicRow>): EpicRow {
  return {
    id: 'sf-a1b2c3',
    title: 'Add a caching layer',
    brief: '',
    priority: 'P2',
    complexity: 'standard',
    complexity_source: 'detected',
    status: 'in_progress',
    status_reason: null,
    iteration: 1,
    plan_iteration: 0,
    max_iterations: null,
    merge_approved_by: null,
    merge_approved_at: null,
    worktree_path: `${MAIN}.springfield/sf-a1b2c3`,
    branch: 'springfield/sf-a1b2c3',
    pr_url: null,
    pr_checked_at: null,
    created_at: '2026-11-27T00:00:00Z',
    updated_at: '2026-11-27T00:00:00Z',
    planner: 'lisa',
    budget_usd: null,
    budget_tokens: null,
    budget_minutes: null,
    ...over,
  };
}

function worktree(over: Partial<SpringfieldWorktree>): SpringfieldWorktree {
  return {
    path: `${MAIN}.springfield/sf-a1b2c3`,
    kind: 'epic',
    epic_id: 'sf-a1b2c3',
    title: 'Add a caching layer',
    status: 'in_progress',
    branch: 'springfield/sf-a1b2c3',
    dirty: 0,
    ahead: 2,
    behind: 0,
    disk_bytes: 4096,
    disk_complete: true,
    live_runs: 0,
    ports: '20010-20019',
    port: 20010,
    app: null,
    prunable: null,
    ...over,
  };
}

test("a worktree's row: the epic's title, its status, dirty or clean, ports and app on one line, its path below", () => {
  assert.deepEqual(worktreeItem(worktree({})), {
    label: '$(repo) Add a caching layer',
    description: 'in progress · clean · ports 20010-20019',
    detail: `${MAIN}.springfield/sf-a1b2c3`,
    worktree: worktree({}),
  });
  const running = worktree({ dirty: 3, live_runs: 1, app: { pid: 42, url: 'http://localhost:20010/' } });
  assert.equal(worktreeItem(running).label, '$(globe) Add a caching layer');
  assert.equal(
    worktreeDescription(running),
    'in progress · 3 uncommitted · 1 running · ports 20010-20019 · app http://localhost:20010/',
  );
  const gone = worktreeItem(
    worktree({ title: null, status: null, ports: null, port: null, prunable: 'its epic is gone from the store' }),
  );
  assert.deepEqual(
    [gone.label, gone.description, gone.detail],
    [
      '$(repo) sf-a1b2c3 (epic gone)',
      'epic gone · clean',
      `${MAIN}.springfield/sf-a1b2c3 — prunable: its epic is gone from the store`,
    ],
  );
  const planning = worktreeItem(
    worktree({ kind: 'planning', status: 'planned', path: `${MAIN}.springfield/sf-a1b2c3-plan`, ports: null }),
  );
  assert.deepEqual(
    [planning.label, planning.description],
    ['$(note) Planning: Add a caching layer', 'planning · planned · clean'],
  );
});

test('the actions on a worktree: open (new window, this one), reveal, Source Control; Run app or Stop app for an epic worktree only', () => {
  const open = ['openNewWindow', 'openHere', 'reveal', 'sourceControl'];
  assert.deepEqual(
    worktreeActions(null, 'linux').map((a) => a.action),
    open,
    'Open worktree… on an epic offers the four',
  );
  assert.deepEqual(
    worktreeActions(worktree({}), 'linux').map((a) => a.action),
    [...open, 'runApp'],
  );
  const stop = worktreeActions(worktree({ app: { pid: 42, url: 'http://localhost:20010/' } }), 'linux').at(-1);
  assert.deepEqual([stop?.action, stop?.description], ['stopApp', 'http://localhost:20010/']);
  assert.deepEqual(
    worktreeActions(worktree({ kind: 'planning' }), 'linux').map((a) => a.action),
    open,
    'a planning worktree has no app',
  );
  assert.deepEqual(
    worktreeActions(worktree({ status: null }), 'linux').map((a) => a.action),
    open,
    'nor has an epic gone from the store',
  );
  assert.deepEqual(
    ['darwin', 'win32', 'linux'].map((p) => revealLabel(p as NodeJS.Platform)),
    ['Reveal in Finder', 'Reveal in File Explorer', 'Reveal in file manager'],
  );
});

test("an epic's worktree: none before it starts, none when it is the main checkout, gone after removal", () => {
  const exists = (p: string): boolean => p !== '/gone';
  assert.equal(worktreeProblem(epic({}), MAIN, exists), null);
  assert.match(
    worktreeProblem(epic({ worktree_path: null, status: 'ready' }), MAIN, exists) ?? '',
    /sf-a1b2c3 has no worktree of its own yet: it gets one when it is started/,
  );
  assert.match(worktreeProblem(epic({ worktree_path: MAIN }), MAIN, exists) ?? '', /no worktree of its own/);
  assert.match(worktreeProblem(epic({ worktree_path: '/gone' }), MAIN, exists) ?? '', /worktree \/gone is gone/);
  assert.equal(appTerminalName(epic({})), 'App · Add a caching layer');
});

test('Source Control gets the worktrees of epics being worked on, each once, only those that exist', () => {
  const epics = ['planned', 'ready', 'in_progress', 'implemented', 'verified', 'done', 'deferred', 'blocked'].map(
    (status, i) => epic({ id: `sf-${i}`, status: status as EpicRow['status'], worktree_path: `/wt/${status}` }),
  );
  const all = sourceControlCandidates(epics, MAIN, new Set(), () => true);
  assert.deepEqual(all, ['/wt/in_progress', '/wt/implemented', '/wt/verified']);
  assert.deepEqual(
    sourceControlCandidates(epics, MAIN, new Set(['/wt/in_progress']), (p) => p !== '/wt/verified'),
    ['/wt/implemented'],
  );
  assert.deepEqual(
    sourceControlCandidates([epic({ worktree_path: MAIN })], MAIN, new Set(), () => true),
    [],
    'never the main checkout',
  );
});

test('prune: what would go and what stays, then what went', () => {
  const dry = {
    dry_run: true,
    removed: [
      { path: '/wt/a', epic_id: 'sf-a', kind: 'epic', reason: 'its epic is done', branch_deleted: true },
      {
        path: '/wt/b-plan',
        epic_id: 'sf-b',
        kind: 'planning',
        reason: 'a planning worktree no run uses',
        branch_deleted: false,
      },
    ],
    kept: [{ path: '/wt/c', epic_id: 'sf-c', reason: 'its epic is in_progress' }],
  };
  assert.deepEqual(pruneSummary(dry), {
    headline: 'Remove 2 worktrees?',
    detail:
      'Would go:\n• /wt/a (sf-a: its epic is done; branch deleted)\n• /wt/b-plan (sf-b: a planning worktree no run uses)\n\nStays:\n• /wt/c (sf-c: its epic is in_progress)',
  });
  assert.equal(
    pruneSummary({ ...dry, dry_run: false, removed: dry.removed.slice(0, 1) }).headline,
    'Removed 1 worktree.',
  );
  assert.deepEqual(pruneSummary({ dry_run: true, removed: [], kept: [] }), {
    headline: 'Nothing to prune.',
    detail: '',
  });
});

test('an epic row offers the worktree actions once it has a worktree, until it is done; Run app or Stop app as its app runs', () => {
  const snap = (e: EpicRow, running: string[] = []): Snapshot => ({
    now: new Date(),
    worktree: MAIN,
    epics: [e],
    plans: [],
    signals: [],
    runs: [],
    awaitingApproval: new Map(),
    changesRequested: new Set(),
    appsRunning: new Set(running),
    reviewedByPerson: [],
  });
  assert.equal(epicsRoot(snap(epic({})))[0]?.contextValue, 'epic:in_progress:worktree:appStopped');
  const e = epic({});
  assert.equal(epicsRoot(snap(e, [e.id]))[0]?.contextValue, 'epic:in_progress:worktree:appRunning');
  assert.equal(epicsRoot(snap(epic({ status: 'ready', worktree_path: null })))[0]?.contextValue, 'epic:ready');
  assert.equal(epicsRoot(snap(epic({ status: 'done' })))[0]?.contextValue, 'epic:done');
});
