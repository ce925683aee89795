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
import { parsePlan } from '../../src/core/plan/parse.ts';
import { migrations, SCHEMA_VERSION } from '../../src/core/store/sqlite/migrations.ts';
import { connect, loadSqlite } from '../../src/core/store/sqlite/sqlite.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import type { Store } from '../../src/core/store/store.ts';
import type { Actor } from '../../src/core/store/types.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const A: Actor = { worktree: '/wt/a', agent: 'agent-a' };
const source = (text: string): PlanSource => planSourceOf('plans/p.md', parsePlan(text, 'plans/p.md'));

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'sf-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function openStore(t: TestContext, path = join(tempDir(t), 'state.db')): Store {
  const store = sqliteStore(path, { clock: new ManualClock(), ifMissing: 'create' });
  t.after(() => store.close());
  return store;
}

function rows(store: Store, sql: string): unknown[] {
  return sqliteOf(store).prepare(sql).all();
}

function childEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k !== 'ELECTRON_RUN_AS_NODE' && !k.startsWith('VSCODE_')),
  );
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

test('SCHEMA_VERSION is the number of migrations (it is written out, so the step commands never build the list)', () => {
  assert.equal(SCHEMA_VERSION, migrations().length);
});

test('a new database is at schema version migrations().length with every table docs/architecture.md names', (t) => {
  const store = openStore(t);

  assert.equal(sqliteOf(store).pragma('user_version', { simple: true }), migrations().length);
  const tables = sqliteOf(store)
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`)
    .pluck()
    .all() as string[];
  for (const name of [
    'epics',
    'plans',
    'steps',
    'step_deps',
    'checklist_items',
    'artifacts',
    'signals',
    'runs',
    'verifications',
    'events',
  ]) {
    assert.ok(tables.includes(name), `missing table ${name}`);
  }
  const stepColumns = sqliteOf(store).prepare(`SELECT name FROM pragma_table_info('steps')`).pluck().all() as string[];
  for (const col of [
    'parent_anchor',
    'step_index',
    'claimed_by',
    'claim_token',
    'lease_expires_at',
    'heartbeat_at',
    'commit_hash',
    'complete_reason',
  ]) {
    assert.ok(stepColumns.includes(col), `steps lacks ${col}`);
  }
});

test('a 2,000-step plan leaves the plans row on one page: its file bytes and structure live in plan_files', async (t) => {
  // docs/cli-cost.md: SQLite reads a large value's overflow pages to reach the columns after it, so
  // a plan-sized value in plans made every read of open_steps or the bytes grow with the plan.
  const store = openStore(t);
  const steps = Array.from(
    { length: 2000 },
    (_, i) =>
      `## Step ${i + 1}: Step ${i + 1} {#s${i + 1}}\n${i > 0 ? `**Depends on:** #s${i}\n` : ''}- [ ] task ${i + 1}\n`,
  );
  const text = `# Big\n${steps.join('')}`;
  await store.initPlan(planSourceOf('plans/p.md', parsePlan(text, 'plans/p.md'), Buffer.from(text)), A);
  const pages = (name: string): Record<string, number> =>
    Object.fromEntries(
      (
        sqliteOf(store)
          .prepare('SELECT pagetype, count(*) AS n FROM dbstat WHERE name = ? GROUP BY pagetype')
          .all(name) as { pagetype: string; n: number }[]
      ).map((r) => [r.pagetype, r.n]),
    );
  assert.deepEqual(pages('plans'), { leaf: 1 });
  assert.ok(
    (pages('plan_files').overflow ?? 0) > 20,
    'the bytes and structure spill onto overflow pages of their own table',
  );
  assert.equal(sqliteOf(store).prepare('SELECT length(source) FROM plan_files').pluck().get(), Buffer.byteLength(text));
});

test('reopening an existing database keeps its data and version', async (t) => {
  const path = join(tempDir(t), 'state.db');
  const first = sqliteStore(path, { clock: new ManualClock() });
  await first.initPlan(source('# P\n## Step 1: One\n- [ ] a\n'), A);
  first.close();

  const second = openStore(t, path);

  assert.equal(sqliteOf(second).pragma('user_version', { simple: true }), migrations().length);
  assert.deepEqual((await second.ready('plans/p.md')).ready_steps, ['step-1']);
});

test('a database with a newer schema version is refused with schema_too_new and left byte-for-byte unchanged', (t) => {
  const path = join(tempDir(t), 'state.db');
  const Sqlite = loadSqlite();
  const raw = new Sqlite(path);
  raw.exec("CREATE TABLE future (x TEXT); INSERT INTO future VALUES ('from a later Springfield')");
  raw.pragma(`user_version = ${migrations().length + 1}`);
  raw.close();
  const before = readFileSync(path);

  assert.throws(() => sqliteStore(path, { ifMissing: 'create' }), {
    name: 'EnvironmentError',
    code: 'schema_too_new',
    category: 'environment',
  });

  assert.ok(readFileSync(path).equals(before), 'the database bytes changed');
  assert.equal(existsSync(`${path}-wal`), false);
  assert.equal(existsSync(`${path}-shm`), false);
});

test('migration 4 upgrades a version-3 database in place: runs gain their fault columns and a killed run becomes failed', (t) => {
  const path = join(tempDir(t), 'state.db');
  const raw = new (loadSqlite())(path);
  for (const m of migrations().slice(0, 3)) raw.exec(m);
  raw.pragma('user_version = 3');
  raw.exec(`INSERT INTO runs (epic_id, role, command, status, started_at, ended_at, exit_code) VALUES ('sf-0001', 'ralph', '["x"]', 'killed', '2026-01-01T00:00:00.000Z', '2026-01-01T00:01:00.000Z', 143),
    ('sf-0001', 'ralph', '["x"]', 'succeeded', '2026-01-01T00:02:00.000Z', '2026-01-01T00:03:00.000Z', 0)`);
  raw.close();
  const store = openStore(t, path);
  assert.equal(sqliteOf(store).pragma('user_version', { simple: true }), migrations().length);
  const rows = sqliteOf(store)
    .prepare(
      'SELECT status, exit_code, outcome_reason, output_tail, head_before, agent_pid, claim_token, launch_id FROM runs ORDER BY id',
    )
    .all();
  assert.deepEqual(rows, [
    {
      status: 'failed',
      exit_code: 143,
      outcome_reason: 'ended by a signal',
      output_tail: '',
      head_before: null,
      agent_pid: null,
      claim_token: null,
      launch_id: null,
    },
    {
      status: 'succeeded',
      exit_code: 0,
      outcome_reason: null,
      output_tail: '',
      head_before: null,
      agent_pid: null,
      claim_token: null,
      launch_id: null,
    },
  ]);
});

test("ifMissing 'empty' on a missing path creates no file and reads as an empty store", async (t) => {
  const path = join(tempDir(t), 'nested', 'state.db');

  const store = sqliteStore(path, { ifMissing: 'empty' });
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
  const storeUrl = pathToFileURL(
    join(import.meta.dirname, '..', '..', 'src', 'core', 'store', 'sqlite', 'sqliteStore.ts'),
  ).href;
  writeFileSync(
    script,
    [
      `import { sqliteStore, sqliteConnection } from ${JSON.stringify(storeUrl)};`,
      `process.stdout.write('ready\\n');`,
      `const s = sqliteStore(process.argv[2], { ifMissing: 'create' });`,
      `process.stdout.write('v' + sqliteConnection(s).pragma('user_version', { simple: true }) + '\\n');`,
      `s.close();`,
    ].join('\n'),
  );
  const children = [0, 1].map(() =>
    spawn(process.execPath, [script, path], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  const outputs = children.map((child) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const ready = new Promise<void>((resolve) =>
      child.stdout.on('data', () => {
        if (out.includes('ready')) resolve();
      }),
    );
    const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { ready, exit, text: () => out };
  });

  await Promise.all(outputs.map((o) => o.ready));
  await new Promise((resolve) => setTimeout(resolve, 400));
  holder.exec('COMMIT');
  const codes = await Promise.all(outputs.map((o) => o.exit));
  holder.close();

  assert.deepEqual(codes, [0, 0], outputs.map((o) => o.text()).join('\n---\n'));
  for (const o of outputs) assert.match(o.text(), new RegExp(`v${migrations().length}\\n`));
  const check = new Sqlite(path, { readonly: true });
  t.after(() => check.close());
  assert.equal(check.pragma('user_version', { simple: true }), migrations().length);
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

// What init writes, its idempotence, drift and re-initialisation are the store's contract, on every
// backend: test/unit/storeContract.test.ts.

test('a statement prepared again is the compiled one, back in its default modes', (t) => {
  const store = sqliteStore(join(tempDir(t), 'state.db'), { ifMissing: 'create' });
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
  t.after(() => {
    named.close();
    fallback.close();
  });

  assert.equal(
    named.prepare('SELECT sqlite_version() AS v').pluck().get(),
    fallback.prepare('SELECT sqlite_version() AS v').pluck().get(),
  );
  assert.throws(
    () => connect(join(dir, 'c.db'), { readonly: true, fileMustExist: true }, bogus),
    /unable to open|does not exist/i,
    'other errors still surface',
  );
});
