import { test } from 'node:test';
import { sqliteOf } from '../helpers/sqlite.ts';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ManualClock } from '../../src/core/clock.ts';
import { createEpic } from '../../src/core/store/shared/epics.ts';
import { runSqlite } from '../../src/core/store/sqlite/port.ts';
import { allowedEvents, EPIC_EVENTS, EPIC_STATUSES, TRANSITIONS, type EpicEvent, type EpicStatus } from '../../src/core/epics/transitions.ts';
import { RefusedError, SpringfieldError } from '../../src/core/errors.ts';
import { SqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import type { Actor } from '../../src/core/store/types.ts';

const MARGE: Actor = { worktree: '/wt/main', agent: 'marge' };
const BART: Actor = { worktree: '/wt/review', agent: 'bart' };

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'sf-epicstore-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function openStore(t: TestContext, clock = new ManualClock(), path = join(tempDir(t), 'state.db')): SqliteStore {
  const store = new SqliteStore(path, { clock, ifMissing: 'create' });
  t.after(() => store.close());
  return store;
}

function count(store: SqliteStore, table: string): number {
  return sqliteOf(store).prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
}

/** Events that take a new epic from planned to each status, through the table only. */
const PATH_TO: Readonly<Record<EpicStatus, readonly EpicEvent[]>> = {
  planned: [],
  ready: ['plan_approved'],
  in_progress: ['plan_approved', 'start'],
  implemented: ['plan_approved', 'start', 'steps_completed'],
  verified: ['plan_approved', 'start', 'steps_completed', 'signal_pass'],
  done: ['plan_approved', 'start', 'steps_completed', 'signal_pass', 'merged'],
  deferred: ['defer'],
  blocked: ['plan_approved', 'start', 'steps_completed', 'signal_adr_invalidated'],
};

async function epicIn(store: SqliteStore, status: EpicStatus, title = `epic ${status}`): Promise<string> {
  const { id } = await store.createEpic({ title, brief: '', priority: 'P2' }, MARGE);
  for (const event of PATH_TO[status]) await store.applyEpicEvent(id, event, MARGE, `to reach ${status}`);
  assert.equal((await store.getEpic(id)).status, status);
  return id;
}

test('ids stay unique and well-formed across many creates in one database', async (t) => {
  const store = openStore(t);
  const db = sqliteOf(store);
  const now = new Date().toISOString();
  const ids = db.transaction(() => Array.from({ length: 1500 }, (_, i) => runSqlite(db, new Date(now), (p) => createEpic(p, { title: `e${i}`, brief: '', priority: 'P3' }, MARGE)).id))();
  assert.equal(new Set(ids).size, 1500);
  for (const id of ids) assert.match(id, /^sf-[0-9a-f]{4,6}$/);
  assert.equal(count(store, 'epics'), 1500);
});

test('when every 4-hex id is taken, new epics get 5-hex ids and never reuse one', async (t) => {
  const store = openStore(t);
  sqliteOf(store).exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 65535)
    INSERT INTO epics (id, title, created_at, updated_at) SELECT 'sf-' || printf('%04x', i), 'filler', 'x', 'x' FROM n`);
  const ids: string[] = [];
  for (let i = 0; i < 40; i++) ids.push((await store.createEpic({ title: `new ${i}`, brief: '', priority: 'P2' }, MARGE)).id);
  for (const id of ids) assert.match(id, /^sf-[0-9a-f]{5}$/);
  assert.equal(new Set(ids).size, ids.length);
  assert.equal(count(store, 'epics'), 65536 + 40);
});

test('processes creating epics at the same time never collide', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'state.db');
  openStore(t, new ManualClock(), path).close();
  const script = join(dir, 'creator.mjs');
  const storeUrl = pathToFileURL(join(import.meta.dirname, '..', '..', 'src', 'core', 'store', 'sqlite', 'sqliteStore.ts')).href;
  writeFileSync(script, `import { SqliteStore } from '${storeUrl}';
const store = new SqliteStore(process.argv[2]);
for (let i = 0; i < 150; i++) await store.createEpic({ title: 'p' + process.pid + '-' + i, brief: '', priority: 'P2' }, { worktree: '/wt/' + process.pid, agent: null });
store.close();
`);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'ELECTRON_RUN_AS_NODE' && !k.startsWith('VSCODE_')));
  const codes = await Promise.all([0, 1, 2, 3].map(() => new Promise<[number | null, string]>((resolve) => {
    const child = spawn(process.execPath, [script, path], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    child.on('close', (code) => resolve([code, err]));
  })));
  for (const [code, err] of codes) assert.equal(code, 0, err);
  const store = openStore(t, new ManualClock(), path);
  const ids = sqliteOf(store).prepare('SELECT id FROM epics').pluck().all() as string[];
  assert.equal(ids.length, 600);
  assert.equal(new Set(ids).size, 600);
  assert.equal(count(store, 'events'), 600, 'one create event per epic');
});

test('every transition in the table writes exactly one event with its reason, actor and time', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 2, 1));
  const store = openStore(t, clock);
  // Retry's target depends on the block it lifts: tested on its own below.
  const rows = TRANSITIONS.filter((r) => r.event !== 'iteration_budget_exhausted' && r.event !== 'retry');
  assert.ok(rows.length >= 16);
  for (const row of rows) {
    const id = await epicIn(store, row.from, `${row.from} ${row.event}`);
    clock.advance(60_000);
    const before = count(store, 'events');
    const reason = `because ${row.event} from ${row.from}`;
    const out = await store.applyEpicEvent(id, row.event, BART, reason);
    assert.deepEqual([out.from, out.to, out.next_role, out.reason], [row.from, row.to, row.nextRole, reason], `${row.from} --${row.event}->`);
    const epic = await store.getEpic(id);
    assert.deepEqual([epic.status, epic.status_reason, epic.updated_at], [row.to, reason, clock.now().toISOString()]);
    assert.equal(count(store, 'events'), before + 1);
    const event = sqliteOf(store).prepare('SELECT * FROM events ORDER BY id DESC LIMIT 1').get() as Record<string, unknown>;
    assert.deepEqual(
      [event.entity, event.action, event.epic_id, event.from_status, event.to_status, event.reason, event.at, event.worktree, event.agent],
      ['epic', row.event, id, row.from, row.to, reason, clock.now().toISOString(), BART.worktree, BART.agent],
    );
  }
});

test('retry lifts an agent_failed or plan_drift block back to where it was, restoring its reason, without a new iteration; other blocks are not retryable', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 2, 1));
  const store = openStore(t, clock);
  const id = await epicIn(store, 'in_progress', 'failing builder');
  const before = await store.getEpic(id);
  const blocked = await store.applyEpicEvent(id, 'agent_failed', BART, 'agent_failed: Ralph failed 3 times in a row', { role: 'ralph', failures: 3 });
  assert.deepEqual([blocked.from, blocked.to], ['in_progress', 'blocked']);
  const event = sqliteOf(store).prepare(`SELECT data FROM events WHERE action = 'agent_failed' AND epic_id = ?`).pluck().get(id) as string;
  assert.deepEqual(JSON.parse(event), { next_role: null, iteration: before.iteration, budget: 20, previous_reason: before.status_reason, role: 'ralph', failures: 3 });
  const retried = await store.applyEpicEvent(id, 'retry', MARGE, 'key fixed');
  assert.deepEqual([retried.from, retried.to, retried.iteration, retried.reason], ['blocked', 'in_progress', before.iteration, 'key fixed']);
  assert.equal((await store.getEpic(id)).status_reason, before.status_reason, 'the reason from before the block is back');
  await assert.rejects(store.applyEpicEvent(id, 'retry', MARGE), (err: unknown) => err instanceof RefusedError && err.code === 'invalid_transition');

  const drifted = await epicIn(store, 'in_progress', 'drifted');
  await store.applyEpicEvent(drifted, 'plan_drift', BART, 'plan_drift: plans/p.md differs');
  await store.applyEpicEvent(drifted, 'agent_failed', BART, 'agent_failed: Lisa failed 3 times in a row');
  assert.equal((await store.applyEpicEvent(drifted, 'retry', MARGE)).to, 'blocked', 'blocked → blocked is undone to the earlier block');
  assert.equal((await store.getEpic(drifted)).status_reason, 'plan_drift: plans/p.md differs');
  assert.equal((await store.applyEpicEvent(drifted, 'retry', MARGE)).to, 'in_progress');

  const reviewed = await epicIn(store, 'implemented', 'reviewed');
  await store.applyEpicEvent(reviewed, 'signal_option_viability_failure', BART, 'wrong approach');
  await assert.rejects(store.applyEpicEvent(reviewed, 'retry', MARGE), (err: unknown) => err instanceof RefusedError && err.code === 'not_retryable' && /is blocked by wrong approach, not by a failing agent or a drifted plan/.test(err.message));
});

test('an event the table does not allow is refused with the allowed events, and nothing is written', async (t) => {
  const store = openStore(t);
  for (const status of EPIC_STATUSES) {
    const id = await epicIn(store, status);
    const snapshot = JSON.stringify([sqliteOf(store).prepare('SELECT * FROM epics WHERE id = ?').get(id), count(store, 'events')]);
    const allowed = allowedEvents(status);
    for (const event of EPIC_EVENTS.filter((e) => !allowed.includes(e))) {
      await assert.rejects(store.applyEpicEvent(id, event, MARGE, 'try'), (err: unknown) => {
        assert.ok(err instanceof RefusedError, String(err));
        assert.equal(err.code, 'invalid_transition');
        assert.ok(err.message.endsWith(`allowed: ${allowed.length ? allowed.join(', ') : 'none'}`), err.message);
        return true;
      });
    }
    assert.equal(JSON.stringify([sqliteOf(store).prepare('SELECT * FROM epics WHERE id = ?').get(id), count(store, 'events')]), snapshot, status);
  }
  assert.deepEqual(allowedEvents('done'), []);
});

test('build iterations count each entry to in_progress; past the complexity budget the epic is blocked', async (t) => {
  const store = openStore(t);
  const epic = await store.createEpic({ title: 'fix typo', brief: '', priority: 'P2' }, MARGE);
  assert.equal(epic.complexity, 'trivial');
  await store.applyEpicEvent(epic.id, 'plan_approved', MARGE, 'ok');
  let last = await store.applyEpicEvent(epic.id, 'start', MARGE, 'go');
  for (let i = 2; i <= 5; i++) {
    await store.applyEpicEvent(epic.id, 'steps_completed', MARGE, 'done');
    last = await store.applyEpicEvent(epic.id, 'signal_implementation_failure', BART, `miss ${i}`);
    assert.deepEqual([last.to, last.iteration], ['in_progress', i]);
  }
  await store.applyEpicEvent(epic.id, 'steps_completed', MARGE, 'done');
  const blocked = await store.applyEpicEvent(epic.id, 'signal_implementation_failure', BART, 'miss 6');
  const reason = 'iteration_budget_exhausted: 5 of 5 build iterations used; signal_implementation_failure would start build iteration 6';
  assert.deepEqual([blocked.to, blocked.reason, blocked.iteration, blocked.next_role], ['blocked', reason, 5, 'lisa']);
  const row = await store.getEpic(epic.id);
  assert.deepEqual([row.status, row.status_reason, row.iteration], ['blocked', reason, 5]);
});

test('every build-budget block carries one reason code and one wording: entry to in_progress, a counted failure, the event raised directly', async (t) => {
  const store = openStore(t);
  const wording = /^iteration_budget_exhausted: (\d+) of (\d+) build iterations used; \S/;
  const started = async (title: string, maxIterations: number) => {
    const e = await store.createEpic({ title, brief: '', priority: 'P2', maxIterations }, MARGE);
    await store.applyEpicEvent(e.id, 'plan_approved', MARGE, 'ok');
    await store.applyEpicEvent(e.id, 'start', MARGE, 'go');
    return e.id;
  };
  const onEntry = await started('entry', 1);
  await store.applyEpicEvent(onEntry, 'steps_completed', MARGE, 'done');
  const counted = await started('counted', 1);
  const raised = await started('raised', 3);
  const outcomes = [
    (await store.applyEpicEvent(onEntry, 'signal_implementation_failure', BART, 'miss')).reason,
    (await store.countIteration(counted, MARGE, 'ralph run 7 failed')) ? 'not blocked' : (await store.getEpic(counted)).status_reason,
    (await store.applyEpicEvent(raised, 'iteration_budget_exhausted', MARGE, 'verification failed')).reason,
  ];
  for (const [i, reason] of outcomes.entries()) assert.match(reason ?? '', wording, `path ${i}: ${reason}`);
  assert.deepEqual(outcomes.map((r) => wording.exec(r ?? '')?.slice(1, 3)), [['1', '1'], ['1', '1'], ['1', '3']]);
  const events = sqliteOf(store).prepare(`SELECT reason FROM events WHERE to_status = 'blocked'`).pluck().all() as string[];
  assert.deepEqual(events, outcomes, 'the event log records the same reason as the epic row');
});

// Plan versions, the planning budget and drift between versions: test/postgres/planContract.test.ts (both backends).

test('a signal and its transition are stored together or not at all', async (t) => {
  const store = openStore(t);
  const id = await epicIn(store, 'implemented');
  sqliteOf(store).exec(`CREATE TRIGGER fail_location BEFORE INSERT ON signal_locations WHEN NEW.note = 'boom'
    BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
  const before = JSON.stringify([sqliteOf(store).prepare('SELECT * FROM epics').all(), count(store, 'events'), count(store, 'signals')]);
  const locations = [{ file: 'src/a.ts', line: 1, endLine: null, note: 'fine' }, { file: 'src/b.ts', line: 2, endLine: 3, note: 'boom' }];
  await assert.rejects(store.recordSignal(id, 'implementation_failure', 'broken', locations, BART), /injected failure/);
  assert.equal(JSON.stringify([sqliteOf(store).prepare('SELECT * FROM epics').all(), count(store, 'events'), count(store, 'signals')]), before);
  assert.equal(count(store, 'signal_locations'), 0);

  await assert.rejects(store.recordSignal(id, 'pass', '   ', [], BART), (err: unknown) => err instanceof SpringfieldError && err.code === 'missing_value');
  const ok = await store.recordSignal(id, 'implementation_failure', 'broken', [{ file: 'src/b.ts', line: 2, endLine: 3, note: 'real' }], BART);
  assert.deepEqual([ok.transition?.to, ok.locations], ['in_progress', 1]);
  assert.equal(count(store, 'signals'), 1);
  assert.equal(sqliteOf(store).prepare(`SELECT COUNT(*) FROM events WHERE epic_id = ? AND entity IN ('epic', 'signal') AND action IN ('signal_implementation_failure', 'record')`).pluck().get(id), 2);
});
