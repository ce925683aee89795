import { test } from 'node:test';
import { sqliteOf } from '../helpers/sqlite.ts';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ManualClock } from '../../src/core/clock.ts';
import { RefusedError } from '../../src/core/errors.ts';
import { planHash } from '../../src/core/plan/hash.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { MIGRATIONS } from '../../src/core/store/sqlite/migrations.ts';
import { connect, loadSqlite } from '../../src/core/store/sqlite/sqlite.ts';
import { SqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import type { Actor } from '../../src/core/store/types.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';

const A: Actor = { worktree: '/wt/a', agent: 'agent-a' };
const ADMIN: Actor = { worktree: '/wt/admin', agent: null };
const source = (text: string): PlanSource => ({ planPath: 'plans/p.md', plan: parsePlan(text, 'plans/p.md') });

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'sf-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function openStore(t: TestContext, path = join(tempDir(t), 'state.db')): SqliteStore {
  const store = new SqliteStore(path, { clock: new ManualClock(), ifMissing: 'create' });
  t.after(() => store.close());
  return store;
}

function rows(store: SqliteStore, sql: string): unknown[] {
  return sqliteOf(store).prepare(sql).all();
}

function childEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'ELECTRON_RUN_AS_NODE' && !k.startsWith('VSCODE_')));
}

test('opening sets WAL (persisted in the file), synchronous FULL, foreign keys and a busy timeout of at least 5 s', (t) => {
  const store = openStore(t);

  assert.equal(sqliteOf(store).pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(sqliteOf(store).pragma('synchronous', { simple: true }), 2);
  assert.equal(sqliteOf(store).pragma('foreign_keys', { simple: true }), 1);
  assert.ok(Number(sqliteOf(store).pragma('busy_timeout', { simple: true })) >= 5000);
  const Sqlite = loadSqlite();
  const raw = new Sqlite(store.describe().file ?? '', { readonly: true });
  t.after(() => raw.close());
  assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
});

test('a new database is at schema version MIGRATIONS.length with every table docs/architecture.md names', (t) => {
  const store = openStore(t);

  assert.equal(sqliteOf(store).pragma('user_version', { simple: true }), MIGRATIONS.length);
  const tables = sqliteOf(store).prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[];
  for (const name of ['epics', 'plans', 'steps', 'step_deps', 'checklist_items', 'artifacts', 'signals', 'runs', 'verifications', 'events']) {
    assert.ok(tables.includes(name), `missing table ${name}`);
  }
  const stepColumns = sqliteOf(store).prepare(`SELECT name FROM pragma_table_info('steps')`).pluck().all() as string[];
  for (const col of ['parent_anchor', 'step_index', 'claimed_by', 'claim_token', 'lease_expires_at', 'heartbeat_at', 'commit_hash', 'complete_reason']) {
    assert.ok(stepColumns.includes(col), `steps lacks ${col}`);
  }
});

test('a 2,000-step plan leaves the plans row on one page: its file bytes and structure live in plan_files', async (t) => {
  // docs/cli-cost.md: SQLite reads a large value's overflow pages to reach the columns after it, so
  // a plan-sized value in plans made every read of open_steps or the bytes grow with the plan.
  const store = openStore(t);
  const steps = Array.from({ length: 2000 }, (_, i) => `## Step ${i + 1}: Step ${i + 1} {#s${i + 1}}\n${i > 0 ? `**Depends on:** #s${i}\n` : ''}- [ ] task ${i + 1}\n`);
  const text = `# Big\n${steps.join('')}`;
  await store.initPlan({ ...source(text), bytes: Buffer.from(text) }, A);
  const pages = (name: string): Record<string, number> => Object.fromEntries(
    (sqliteOf(store).prepare('SELECT pagetype, count(*) AS n FROM dbstat WHERE name = ? GROUP BY pagetype').all(name) as { pagetype: string; n: number }[]).map((r) => [r.pagetype, r.n]));
  assert.deepEqual(pages('plans'), { leaf: 1 });
  assert.ok((pages('plan_files').overflow ?? 0) > 20, 'the bytes and structure spill onto overflow pages of their own table');
  assert.equal(sqliteOf(store).prepare('SELECT length(source) FROM plan_files').pluck().get(), Buffer.byteLength(text));
});

test('reopening an existing database keeps its data and version', async (t) => {
  const path = join(tempDir(t), 'state.db');
  const first = new SqliteStore(path, { clock: new ManualClock() });
  await first.initPlan(source('# P\n## Step 1: One\n- [ ] a\n'), A);
  first.close();

  const second = openStore(t, path);

  assert.equal(sqliteOf(second).pragma('user_version', { simple: true }), MIGRATIONS.length);
  assert.deepEqual((await second.ready('plans/p.md')).ready_steps, ['step-1']);
});

test('a database with a newer schema version is refused with schema_too_new and left byte-for-byte unchanged', (t) => {
  const path = join(tempDir(t), 'state.db');
  const Sqlite = loadSqlite();
  const raw = new Sqlite(path);
  raw.exec('CREATE TABLE future (x TEXT); INSERT INTO future VALUES (\'from a later Springfield\')');
  raw.pragma(`user_version = ${MIGRATIONS.length + 1}`);
  raw.close();
  const before = readFileSync(path);

  assert.throws(() => new SqliteStore(path, { ifMissing: 'create' }), { name: 'EnvironmentError', code: 'schema_too_new', category: 'environment' });

  assert.ok(readFileSync(path).equals(before), 'the database bytes changed');
  assert.equal(existsSync(`${path}-wal`), false);
  assert.equal(existsSync(`${path}-shm`), false);
});

test('migration 4 upgrades a version-3 database in place: runs gain their fault columns and a killed run becomes failed', (t) => {
  const path = join(tempDir(t), 'state.db');
  const raw = new (loadSqlite())(path);
  for (const m of MIGRATIONS.slice(0, 3)) raw.exec(m);
  raw.pragma('user_version = 3');
  raw.exec(`INSERT INTO runs (epic_id, role, command, status, started_at, ended_at, exit_code) VALUES ('sf-0001', 'ralph', '["x"]', 'killed', '2026-01-01T00:00:00.000Z', '2026-01-01T00:01:00.000Z', 143),
    ('sf-0001', 'ralph', '["x"]', 'succeeded', '2026-01-01T00:02:00.000Z', '2026-01-01T00:03:00.000Z', 0)`);
  raw.close();
  const store = openStore(t, path);
  assert.equal(sqliteOf(store).pragma('user_version', { simple: true }), MIGRATIONS.length);
  const rows = sqliteOf(store).prepare('SELECT status, exit_code, outcome_reason, output_tail, head_before, agent_pid, claim_token, launch_id FROM runs ORDER BY id').all();
  assert.deepEqual(rows, [
    { status: 'failed', exit_code: 143, outcome_reason: 'ended by a signal', output_tail: '', head_before: null, agent_pid: null, claim_token: null, launch_id: null },
    { status: 'succeeded', exit_code: 0, outcome_reason: null, output_tail: '', head_before: null, agent_pid: null, claim_token: null, launch_id: null },
  ]);
});

test("ifMissing 'empty' on a missing path creates no file and reads as an empty store", async (t) => {
  const path = join(tempDir(t), 'nested', 'state.db');

  const store = new SqliteStore(path, { ifMissing: 'empty' });
  t.after(() => store.close());

  assert.deepEqual(await store.showPlans(), []);
  assert.deepEqual(await store.events(), []);
  assert.equal(existsSync(path), false);
  assert.equal(existsSync(join(path, '..')), false);
});

test('two processes opening a fresh database at the same moment migrate it exactly once', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'state.db');
  const Sqlite = loadSqlite();
  const holder = new Sqlite(path);
  holder.pragma('journal_mode = WAL');
  holder.exec('BEGIN IMMEDIATE'); // both children read user_version 0, then queue on the write lock
  const script = join(dir, 'open.mjs');
  const storeUrl = pathToFileURL(join(import.meta.dirname, '..', '..', 'src', 'core', 'store', 'sqlite', 'sqliteStore.ts')).href;
  writeFileSync(script, [
    `import { SqliteStore } from ${JSON.stringify(storeUrl)};`,
    `process.stdout.write('ready\\n');`,
    `const s = new SqliteStore(process.argv[2], { ifMissing: 'create' });`,
    `process.stdout.write('v' + s.db.pragma('user_version', { simple: true }) + '\\n');`,
    `s.close();`,
  ].join('\n'));
  const children = [0, 1].map(() => spawn(process.execPath, [script, path], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] }));
  const outputs = children.map((child) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
    const ready = new Promise<void>((resolve) => child.stdout.on('data', () => { if (out.includes('ready')) resolve(); }));
    const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { ready, exit, text: () => out };
  });

  await Promise.all(outputs.map((o) => o.ready));
  await new Promise((resolve) => setTimeout(resolve, 400));
  holder.exec('COMMIT');
  const codes = await Promise.all(outputs.map((o) => o.exit));
  holder.close();

  assert.deepEqual(codes, [0, 0], outputs.map((o) => o.text()).join('\n---\n'));
  for (const o of outputs) assert.match(o.text(), new RegExp(`v${MIGRATIONS.length}\\n`));
  const check = new Sqlite(path, { readonly: true });
  t.after(() => check.close());
  assert.equal(check.pragma('user_version', { simple: true }), MIGRATIONS.length);
});

test('events are append-only: UPDATE and DELETE on events throw and leave the rows', async (t) => {
  const store = openStore(t);
  await store.initPlan(source('# P\n## Step 1: One\n'), A);
  const before = rows(store, 'SELECT * FROM events');
  assert.equal(before.length, 1);

  assert.throws(() => sqliteOf(store).prepare(`UPDATE events SET action = 'forged'`).run(), /append-only/);
  assert.throws(() => sqliteOf(store).prepare('DELETE FROM events').run(), /append-only/);

  assert.deepEqual(rows(store, 'SELECT * FROM events'), before);
});

const NESTED = `# Plan: Nested

## Step 1: First {#first}
**Tasks:**
- [ ] a
- [x] b
**Tests:**
- [ ] c

### Step 1.1: Sub one
- [ ] d

### Step 1.2: Sub two
**Depends on:** #step-1-1
**Checkpoints:**
- [ ] e

## Step 2: Second
**Depends on:** #first
`;

test('init writes plans, steps (interleaved step_index, parent_anchor), step_deps and checklist_items', async (t) => {
  const store = openStore(t);
  const src = source(NESTED);

  const result = await store.initPlan(src, A);

  assert.deepEqual(result, {
    plan_path: 'plans/p.md', plan_hash: planHash(src.plan), steps_created: 4, checklist_items_created: 5,
    already_initialized: false, reinitialized: false, steps_kept_completed: 0,
  });
  assert.deepEqual(rows(store, 'SELECT plan_path, epic_id, plan_hash, title, status FROM plans'),
    [{ plan_path: 'plans/p.md', epic_id: null, plan_hash: planHash(src.plan), title: 'Nested', status: 'active' }]);
  assert.deepEqual(rows(store, 'SELECT anchor, parent_anchor, step_index, number, title, status, claim_token, claimed_by FROM steps ORDER BY step_index'), [
    { anchor: 'first', parent_anchor: null, step_index: 0, number: '1', title: 'First', status: 'pending', claim_token: 0, claimed_by: null },
    { anchor: 'step-1-1', parent_anchor: 'first', step_index: 1, number: '1.1', title: 'Sub one', status: 'pending', claim_token: 0, claimed_by: null },
    { anchor: 'step-1-2', parent_anchor: 'first', step_index: 2, number: '1.2', title: 'Sub two', status: 'pending', claim_token: 0, claimed_by: null },
    { anchor: 'step-2', parent_anchor: null, step_index: 3, number: '2', title: 'Second', status: 'pending', claim_token: 0, claimed_by: null },
  ]);
  assert.deepEqual(rows(store, 'SELECT step_anchor, depends_on FROM step_deps ORDER BY step_anchor'), [
    { step_anchor: 'step-1-2', depends_on: 'step-1-1' },
    { step_anchor: 'step-2', depends_on: 'first' },
  ]);
  assert.deepEqual(rows(store, 'SELECT step_anchor, kind, ordinal, text, status FROM checklist_items ORDER BY id'), [
    { step_anchor: 'first', kind: 'task', ordinal: 0, text: 'a', status: 'open' },
    { step_anchor: 'first', kind: 'task', ordinal: 1, text: 'b', status: 'open' }, // a ticked box is informational only
    { step_anchor: 'first', kind: 'test', ordinal: 0, text: 'c', status: 'open' },
    { step_anchor: 'step-1-1', kind: 'task', ordinal: 0, text: 'd', status: 'open' },
    { step_anchor: 'step-1-2', kind: 'checkpoint', ordinal: 0, text: 'e', status: 'open' },
  ]);
  assert.deepEqual(rows(store, 'SELECT worktree, agent, entity, action, plan_path, to_status FROM events'),
    [{ worktree: '/wt/a', agent: 'agent-a', entity: 'plan', action: 'init', plan_path: 'plans/p.md', to_status: planHash(src.plan) }]);
});

test('init is idempotent: a second init changes nothing and reports already_initialized', async (t) => {
  const store = openStore(t);
  await store.initPlan(source(NESTED), A);
  const dump = () => ['plans', 'steps', 'step_deps', 'checklist_items', 'events'].map((table) => rows(store, `SELECT * FROM ${table}`));
  const before = dump();

  const again = await store.initPlan(source(NESTED), A);

  assert.equal(again.already_initialized, true);
  assert.equal(again.reinitialized, false);
  assert.equal(again.steps_created, 0);
  assert.equal(again.checklist_items_created, 0);
  assert.deepEqual(dump(), before);
});

const V1 = `# P
## Step 1: One {#one}
- [ ] a
- [ ] b
## Step 2: Two {#two}
- [ ] x
- [ ] y
## Step 3: Three {#three}
- [ ] t
## Step 4: Four {#four}
- [ ] f
`;
const V2 = `# P
## Step 1: One {#one}
- [ ] a
- [ ] b
## Step 2: Two renamed {#two}
- [ ] x
- [ ] z
## Step 3: Three {#three}
- [ ] t
## Step 5: Five {#five}
**Depends on:** #one
- [ ] n
`;

test('init without force on a drifted plan is refused with plan_drift naming what changed; nothing is written', async (t) => {
  const store = openStore(t);
  await store.initPlan(source(V1), A);
  const dump = () => ['plans', 'steps', 'step_deps', 'checklist_items', 'events'].map((table) => rows(store, `SELECT * FROM ${table}`));
  const before = dump();
  await assert.rejects(store.initPlan(source(V2), A), (e: unknown) => e instanceof RefusedError && e.code === 'plan_drift' &&
    e.message.startsWith('plans/p.md: plan changed since init (') && e.message.includes('two title changed') && e.message.includes('init --force plans/p.md'));
  assert.deepEqual(dump(), before);
});

test('init --force keeps unchanged completed steps and their items, resets changed and claimed ones, removes and adds steps', async (t) => {
  const store = openStore(t);
  await store.initPlan(source(V1), A);
  for (const anchor of ['one', 'two']) {
    const claim = await store.claimNext(source(V1), A);
    assert.equal(claim.claimed && claim.step_anchor, anchor);
    await store.updateItems(source(V1), anchor, [{ selector: { all: true }, status: 'completed' }], A);
    await store.complete(source(V1), anchor, A, { commitHash: `c-${anchor}` });
  }
  const held = await store.claimNext(source(V1), A);
  assert.ok(held.claimed && held.step_anchor === 'three');

  const result = await store.initPlan(source(V2), ADMIN, { force: true });

  assert.equal(result.reinitialized, true);
  assert.equal(result.already_initialized, false);
  assert.equal(result.steps_kept_completed, 1);
  assert.equal(result.plan_hash, planHash(source(V2).plan));
  assert.deepEqual(rows(store, 'SELECT anchor, step_index, title, status, claimed_by, claim_token, commit_hash FROM steps ORDER BY step_index'), [
    { anchor: 'one', step_index: 0, title: 'One', status: 'completed', claimed_by: '/wt/a', claim_token: 1, commit_hash: 'c-one' },
    { anchor: 'two', step_index: 1, title: 'Two renamed', status: 'pending', claimed_by: null, claim_token: 2, commit_hash: null },
    { anchor: 'three', step_index: 2, title: 'Three', status: 'pending', claimed_by: null, claim_token: 2, commit_hash: null },
    { anchor: 'five', step_index: 3, title: 'Five', status: 'pending', claimed_by: null, claim_token: 0, commit_hash: null },
  ]);
  assert.deepEqual(rows(store, 'SELECT step_anchor, ordinal, text, status FROM checklist_items ORDER BY step_anchor, ordinal'), [
    { step_anchor: 'five', ordinal: 0, text: 'n', status: 'open' },
    { step_anchor: 'one', ordinal: 0, text: 'a', status: 'completed' },
    { step_anchor: 'one', ordinal: 1, text: 'b', status: 'completed' },
    { step_anchor: 'three', ordinal: 0, text: 't', status: 'open' },
    { step_anchor: 'two', ordinal: 0, text: 'x', status: 'completed' },
    { step_anchor: 'two', ordinal: 1, text: 'z', status: 'open' },
  ]);
  assert.deepEqual(rows(store, 'SELECT step_anchor, depends_on FROM step_deps'), [{ step_anchor: 'five', depends_on: 'one' }]);
  await assert.rejects(store.heartbeat('plans/p.md', 'three', { ...A, token: 1 }), { code: 'not_claimed' });
  await assert.rejects(store.claimNext(source(V1), A), { code: 'plan_drift' });
  const next = await store.claimNext(source(V2), A);
  assert.equal(next.claimed && next.step_anchor, 'two');
});

test('init --force that moves a substep under a new parent keeps the substep (old parent removed)', async (t) => {
  const store = openStore(t);
  await store.initPlan(source('# P\n## Step 1: A {#a}\n### Step 1.1: X {#x}\n- [ ] xt\n'), A);

  const result = await store.initPlan(source('# P\n## Step 1: B {#b}\n### Step 1.1: X {#x}\n- [ ] xt\n'), A, { force: true });

  assert.equal(result.reinitialized, true);
  assert.deepEqual(rows(store, 'SELECT anchor, parent_anchor FROM steps ORDER BY step_index'), [
    { anchor: 'b', parent_anchor: null }, { anchor: 'x', parent_anchor: 'b' },
  ]);
});

test('init --force that changes a substep of a completed step leaves that substep reachable', async (t) => {
  const store = openStore(t);
  const v1 = source('# P\n## Step 1: A\n- [ ] t\n### Step 1.1: X\n- [ ] xt\n');
  const v2 = source('# P\n## Step 1: A\n- [ ] t\n### Step 1.1: X renamed\n- [ ] xt\n');
  await store.initPlan(v1, A);
  await store.claimNext(v1, A);
  await store.complete(v1, 'step-1', A, { forceReason: 'done' });

  await store.initPlan(v2, ADMIN, { force: true });
  const claim = await store.claimNext(v2, A);

  assert.deepEqual(claim.claimed && [claim.step_anchor, claim.substeps], ['step-1', ['step-1-1']]);
});

test('a statement prepared again is the compiled one, back in its default modes', (t) => {
  const store = new SqliteStore(join(tempDir(t), 'state.db'), { ifMissing: 'create' });
  t.after(() => store.close());
  const sql = 'SELECT 1 AS one, 2 AS two';

  const plucked = sqliteOf(store).prepare(sql).pluck().get();
  const raw = sqliteOf(store).prepare(sql).raw().get();
  const again = sqliteOf(store).prepare(sql);

  assert.equal(again, sqliteOf(store).prepare(sql));
  assert.deepEqual([plucked, raw, again.get()], [1, [1, 2], { one: 1, two: 2 }]);
  assert.notEqual(sqliteOf(store).prepare('SELECT 1 AS one'), again);
});

test('the native module is named directly; a file that will not load falls back to better-sqlite3 finding its own', (t) => {
  const dir = tempDir(t);
  const bogus = join(dir, 'not-a-module.node');
  writeFileSync(bogus, 'this is not a shared library');

  const named = connect(join(dir, 'a.db'), {});
  const fallback = connect(join(dir, 'b.db'), {}, bogus);
  t.after(() => { named.close(); fallback.close(); });

  assert.equal(named.prepare('SELECT sqlite_version() AS v').pluck().get(), fallback.prepare('SELECT sqlite_version() AS v').pluck().get());
  assert.throws(() => connect(join(dir, 'c.db'), { readonly: true, fileMustExist: true }, bogus), /unable to open|does not exist/i, 'other errors still surface');
});
