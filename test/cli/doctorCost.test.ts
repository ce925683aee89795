// doctor's cost follows the state it reports, not the length of the history: on a store with a long
// event log it reads a bounded part of the file (measured as the bytes this process reads, Linux's
// /proc/self/io), while `doctor --full` reads every page and says so on stderr while it works. Damage
// in the middle of the log is found by --full; damage where writes happen (the log's ends, its
// indexes' roots) by either (test/cli/doctorFixes.test.ts scribbles over an index root).
import assert from 'node:assert/strict';
import { closeSync, existsSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { diagnose } from '../../src/core/workflows/doctor.ts';
import { makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';

const PLAN =
  '# Plan: Long history\n## Step 1: One {#step-1}\n**Tasks:**\n- [ ] one\n## Step 2: Two {#step-2}\n**Tasks:**\n- [ ] two\n';
const EVENTS = 200_000;
const linux = existsSync('/proc/self/io');

let repo: Repo;
let db: string;
before(async () => {
  repo = makeRepo({ files: { 'plans/p.md': PLAN, '.gitignore': '.springfield/\n' } });
  assert.equal((await runCli(repo.root, ['init', 'plans/p.md'])).code, 0);
  db = join(repo.root, '.springfield', 'state.db');
  const conn = new Database(db);
  const insert =
    conn.prepare(`INSERT INTO events (at, worktree, agent, entity, action, plan_path, step_anchor, from_status, to_status, data)
    VALUES (?, ?, 'agent', 'step', 'heartbeat', 'plans/p.md', ?, NULL, NULL, ?)`);
  conn.transaction(() => {
    for (let i = 0; i < EVENTS; i++)
      insert.run(
        new Date(1e12 + i * 1000).toISOString(),
        `${repo.root}/wt-${i % 7}`,
        `step-${(i % 2) + 1}`,
        JSON.stringify({ lease_seconds: 7200, i }),
      );
  })();
  conn.pragma('wal_checkpoint(TRUNCATE)');
  conn.close();
});
after(() => repo.cleanup());

/** Bytes this process read (read and pread calls, from the page cache or not) while `fn` ran. */
function bytesRead(fn: () => unknown): number {
  const rchar = (): number => Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1]);
  const before = rchar();
  fn();
  return rchar() - before;
}

const input = (full: boolean) => ({
  dbPath: db,
  mainRoot: null,
  worktrees: [],
  now: new Date(),
  env: process.env,
  full,
});

test(
  'doctor reads a bounded part of a store with a long event log; --full reads all of it',
  { skip: !linux && 'needs /proc/self/io' },
  (t) => {
    const size = statSync(db).size;
    assert.ok(size > 20 * 1048576, `the store is large: ${size} bytes`);
    let report = diagnose(input(false));
    const quick = bytesRead(() => {
      report = diagnose(input(false));
    });
    assert.equal(report.ok, true, JSON.stringify(report.findings));
    assert.ok(quick < size / 20, `doctor read ${quick} bytes of a ${size}-byte store`);
    assert.match(
      report.checks.find((c) => c.name === 'integrity')?.detail ?? '',
      /^ok \(tables and indexes; the log's 200,00\d events at its ends only, --full for every page\)$/,
    );
    const full = bytesRead(() => {
      report = diagnose(input(true));
    });
    assert.equal(report.checks.find((c) => c.name === 'integrity')?.detail, 'ok (every page)');
    assert.ok(full > size * 0.9, `doctor --full read ${full} bytes of a ${size}-byte store`);
    t.diagnostic(`a ${size}-byte store: doctor read ${quick} bytes, doctor --full ${full}`);
  },
);

test('damage in the middle of the event log: doctor --full finds it (and says what it is doing meanwhile), plain doctor reports what it checked', async () => {
  const conn = new Database(db, { readonly: true });
  const leaves = conn
    .prepare(`SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf' ORDER BY path`)
    .pluck()
    .all() as number[];
  const pageSize = Number(conn.pragma('page_size', { simple: true }));
  conn.close();
  const middle = leaves[Math.floor(leaves.length / 2)] as number;
  const fd = openSync(db, 'r+');
  writeSync(fd, Buffer.alloc(64, 0x5a), 0, 64, (middle - 1) * pageSize + 8); // its cell pointers, after the leaf page header
  closeSync(fd);

  const plain = await runCli(repo.root, ['doctor']);
  assert.equal(plain.code, 0, plain.stdout + plain.stderr);
  assert.match(
    plain.stdout,
    /^ok +integrity +ok \(tables and indexes; the log's 200,00\d events at its ends only, --full for every page\)$/m,
  );
  assert.equal(plain.stderr, '');
  const full = await runCli(repo.root, ['doctor', '--full']);
  assert.equal(full.code, 1, full.stdout + full.stderr);
  assert.match(full.stdout, /^error +integrity +failed \(every page\)$/m);
  assert.match(full.stdout, /integrity_check_failed: integrity_check: /);
  assert.match(full.stderr, /^springfield: checking every page of .*state\.db \(\d+ MB\)…\n$/);
});
