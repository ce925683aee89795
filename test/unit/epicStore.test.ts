// Epic ids on SQLite: unique across many creates in one transaction, longer once the short ones are
// taken, and never doubled by processes creating at once. The epic state machine itself is the store's
// contract, on every backend: test/unit/epicContract.test.ts.
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
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import type { Store } from '../../src/core/store/store.ts';
import type { Actor } from '../../src/core/store/types.ts';

const MARGE: Actor = { worktree: '/wt/main', agent: 'marge' };

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'sf-epicstore-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function openStore(t: TestContext, clock = new ManualClock(), path = join(tempDir(t), 'state.db')): Store {
  const store = sqliteStore(path, { clock, ifMissing: 'create' });
  t.after(() => store.close());
  return store;
}

function count(store: Store, table: string): number {
  return sqliteOf(store).prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
}

test('ids stay unique and well-formed across many creates in one database', async (t) => {
  const store = openStore(t);
  const db = sqliteOf(store);
  const now = new Date().toISOString();
  const ids = db.transaction(() =>
    Array.from(
      { length: 1500 },
      (_, i) =>
        runSqlite(db, new Date(now), (p) => createEpic(p, { title: `e${i}`, brief: '', priority: 'P3' }, MARGE)).id,
    ),
  )();
  assert.equal(new Set(ids).size, 1500);
  for (const id of ids) assert.match(id, /^sf-[0-9a-f]{4,6}$/);
  assert.equal(count(store, 'epics'), 1500);
});

test('when every 4-hex id is taken, new epics get 5-hex ids and never reuse one', async (t) => {
  const store = openStore(t);
  sqliteOf(store).exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 65535)
    INSERT INTO epics (id, title, created_at, updated_at) SELECT 'sf-' || printf('%04x', i), 'filler', 'x', 'x' FROM n`);
  const ids: string[] = [];
  for (let i = 0; i < 40; i++)
    ids.push((await store.createEpic({ title: `new ${i}`, brief: '', priority: 'P2' }, MARGE)).id);
  for (const id of ids) assert.match(id, /^sf-[0-9a-f]{5}$/);
  assert.equal(new Set(ids).size, ids.length);
  assert.equal(count(store, 'epics'), 65536 + 40);
});

test('processes creating epics at the same time never collide', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'state.db');
  openStore(t, new ManualClock(), path).close();
  const script = join(dir, 'creator.mjs');
  const storeUrl = pathToFileURL(
    join(import.meta.dirname, '..', '..', 'src', 'core', 'store', 'sqlite', 'sqliteStore.ts'),
  ).href;
  writeFileSync(
    script,
    `import { sqliteStore } from '${storeUrl}';
const store = sqliteStore(process.argv[2]);
for (let i = 0; i < 150; i++) await store.createEpic({ title: 'p' + process.pid + '-' + i, brief: '', priority: 'P2' }, { worktree: '/wt/' + process.pid, agent: null });
store.close();
`,
  );
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k !== 'ELECTRON_RUN_AS_NODE' && !k.startsWith('VSCODE_')),
  );
  const codes = await Promise.all(
    [0, 1, 2, 3].map(
      () =>
        new Promise<[number | null, string]>((resolve) => {
          const child = spawn(process.execPath, [script, path], { env, stdio: ['ignore', 'ignore', 'pipe'] });
          let err = '';
          child.stderr.on('data', (d: Buffer) => {
            err += d.toString();
          });
          child.on('close', (code) => resolve([code, err]));
        }),
    ),
  );
  for (const [code, err] of codes) assert.equal(code, 0, err);
  const store = openStore(t, new ManualClock(), path);
  const ids = sqliteOf(store).prepare('SELECT id FROM epics').pluck().all() as string[];
  assert.equal(ids.length, 600);
  assert.equal(new Set(ids).size, 600);
  assert.equal(count(store, 'events'), 600, 'one create event per epic');
});
