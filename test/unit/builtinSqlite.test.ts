import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvironmentError } from '../../src/core/errors.ts';
import { planFileSource } from '../../src/core/plan/source.ts';
import { builtinConnect } from '../../src/core/store/sqlite/builtinSqlite.ts';
import { openDatabase } from '../../src/core/store/sqlite/open.ts';
import type { Connect } from '../../src/core/store/sqlite/sqlite.ts';
import { sqliteStepStore } from '../../src/core/store/sqlite/stepStore.ts';
import type { StepStore } from '../../src/core/store/store.ts';

// docs/architecture.md, "Two SQLite drivers": the step commands' store over node:sqlite must answer as
// it does over better-sqlite3. Each database here is opened through one driver only: two SQLite
// libraries in one process must never hold the same file (their POSIX locks do not see each other).

const P = 'plans/p.md';
const PLAN = `# Plan: Drivers

## Step 1: One {#one}
**Tasks:**
- [ ] First
- [ ] Second
**Tests:**
- [ ] It works

### Step 1.1: Sub {#one-sub}
**Tasks:**
- [ ] Inner

## Step 2: Two {#two}
**Depends on:** #one
**Files:** src/two/**
**Tasks:**
- [ ] Build

## Step 3: Three {#three}
**Tasks:**
- [ ] Write
`;

const connect = builtinConnect();

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'springfield-driver-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('Node 24, which the project runs on, has the built-in driver', () => {
  assert.ok(connect, 'builtinConnect() found node:sqlite incomplete or warning');
});

/** Every step operation, in order, over `store`; the answers as JSON documents. */
async function script(store: StepStore, dir: string): Promise<unknown[]> {
  const file = join(dir, 'plan.md');
  writeFileSync(file, PLAN);
  const source = () => planFileSource(file, P, P);
  const a = { worktree: '/wt/a', agent: 'ralph' };
  const b = { worktree: '/wt/b', agent: null };
  const out: unknown[] = [];
  const keep = (r: unknown): void => void out.push(JSON.parse(JSON.stringify(r)));
  keep(await store.initPlan(source(), a));
  // A read that fails must end its transaction: the writes below would find it still open.
  await assert.rejects(() => store.ready('plans/missing.md'), /missing\.md/);
  keep(await store.claimNext(source(), a, { leaseSeconds: 600 }));
  keep(await store.claimNext(source(), b));
  keep(await store.claimNext(source(), b));
  keep(await store.start(P, 'one', a));
  keep(await store.heartbeat(P, 'one', a, { leaseSeconds: 900 }));
  keep(await store.updateItems(source(), 'one', [{ selector: { kind: 'task', ordinal: 0 }, status: 'completed' }], a));
  keep(await store.updateItems(source(), 'one', [{ selector: { all: true }, status: 'completed' }], a));
  keep(await store.recordArtifact(P, 'one', 'note', 'a note', a));
  keep(await store.ready(P, b));
  keep(
    await store.complete(source(), 'one', a, { commitHash: 'abc123', forceReason: 'the substep is done elsewhere' }),
  );
  keep(await store.ready(P));
  keep(await store.reset(P, 'three', b, 'handing back'));
  keep(await store.showStep(P, 'one'));
  keep(await store.showPlans(P));
  keep(await store.events({ limit: 100 }));
  await assert.rejects(() => store.heartbeat(P, 'two', b), /two/);
  return out;
}

test('a step store over the built-in driver answers every step operation exactly as over better-sqlite3', async (t) => {
  assert.ok(connect);
  let at = Date.parse('2026-11-27T08:00:00.000Z');
  const clock = { now: () => new Date((at += 1000)) };
  const answers: unknown[][] = [];
  for (const driver of [undefined, connect]) {
    at = Date.parse('2026-11-27T08:00:00.000Z');
    const dir = tempDir(t);
    const store = sqliteStepStore(join(dir, 'state.db'), { clock, ...(driver ? { connect: driver } : {}) });
    try {
      answers.push(await script(store, dir));
    } finally {
      await store.close();
    }
  }
  const [better, builtin] = answers;
  assert.equal(better?.length, 16);
  assert.deepEqual(builtin, better);
});

test('pluck, raw and rows modes, and a cached statement comes back in rows mode', (t) => {
  assert.ok(connect);
  const db = openDatabase(join(tempDir(t), 'state.db'), { connect });
  t.after(() => db.close());
  db.exec(`CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT); INSERT INTO t (b) VALUES ('x'), ('y')`);
  const sql = 'SELECT a, b FROM t ORDER BY a';
  assert.deepEqual(db.prepare(sql).pluck().all(), [1, 2]);
  assert.deepEqual(db.prepare(sql).raw().all(), [
    [1, 'x'],
    [2, 'y'],
  ]);
  assert.deepEqual({ ...(db.prepare(sql).get() as object) }, { a: 1, b: 'x' });
  assert.equal(db.prepare('SELECT b FROM t WHERE a = @a').pluck().get({ a: 2, unused: 1 }), 'y');
  const info = db.prepare('INSERT INTO t (b) VALUES (?)').run('z');
  assert.deepEqual([info.changes, info.lastInsertRowid], [1, 3]);
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(db.pragma('user_version', { simple: true }), 13);
});

test('SQLite failures carry better-sqlite3 codes, so the store maps them the same way', async (t) => {
  assert.ok(connect);
  const dir = tempDir(t);
  const db = openDatabase(join(dir, 'state.db'), { connect });
  t.after(() => db.close());
  db.exec('CREATE TABLE u (a PRIMARY KEY)');
  db.exec('INSERT INTO u VALUES (1)');
  assert.throws(
    () => db.exec('INSERT INTO u VALUES (1)'),
    (err: unknown) => (err as { code?: string }).code === 'SQLITE_CONSTRAINT',
  );

  const notDb = join(dir, 'not.db');
  writeFileSync(notDb, 'this is not a database, just long enough to have a header '.repeat(20));
  assert.throws(
    () => openDatabase(notDb, { connect }),
    (err: unknown) => err instanceof EnvironmentError && err.code === 'database_corrupt',
  );

  // Another process holds the write lock: a writer here gives up after its busy timeout with database_locked.
  const holder = spawn(
    process.execPath,
    [
      '-e',
      `const { DatabaseSync } = require('node:sqlite'); const db = new DatabaseSync(${JSON.stringify(join(dir, 'state.db'))});
       db.exec('BEGIN IMMEDIATE'); process.stdout.write('held\\n'); setTimeout(() => db.exec('ROLLBACK'), 5000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.after(() => holder.kill());
  await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
  const store = sqliteStepStore(join(dir, 'state.db'), { connect, busyTimeoutMs: 200 });
  t.after(() => store.close());
  await assert.rejects(
    () => store.reset(P, 'one', { worktree: '/wt', agent: null }),
    (err: unknown) => err instanceof EnvironmentError && err.code === 'database_locked',
  );
});

test('a read-only open of a database in a folder nobody may write reads it as immutable through a file: URI', (t) => {
  assert.ok(connect);
  const path = join(tempDir(t), 'state.db');
  openDatabase(path, { connect }).close();
  const uri = `file:${encodeURI(path)}?immutable=1`;
  const db = (connect as Connect)(uri, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  assert.equal(db.pragma('user_version', { simple: true }), 13);
  assert.throws(
    () => db.exec('CREATE TABLE x (a)'),
    (err: unknown) => String((err as { code?: string }).code).startsWith('SQLITE_READONLY'),
  );
});
