import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { liveServers, startPostgres } from '../../scripts/postgres.ts';
import { childrenOf, postgresForFile, running, type PostgresServer } from '../helpers/postgres.ts';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'harnessChild.ts');

/** Waits (up to a generous limit, not a timing assertion) until `done()` holds; returns whether it did. */
async function eventually(done: () => boolean, limitMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

function everythingGone(pids: readonly number[], dataDir: string): () => boolean {
  return () => pids.every((p) => !running(p)) && !existsSync(dirname(dataDir));
}

test('a throwaway server: socket-only, durable, survives restarts, and leaves no process or file behind', async () => {
  const server = startPostgres();
  const pids: number[] = [];
  try {
    const pid = server.pid();
    assert.ok(pid !== null && running(pid), 'the postmaster runs');
    pids.push(pid, ...childrenOf(pid));
    if (server.watchdogPid !== null) pids.push(server.watchdogPid);
    assert.match(server.url, /^postgres:\/\/springfield:[0-9a-f]+@\/springfield\?host=\/[^&]+\/socket&port=5432$/);
    // unix_socket_directories is visible to superusers only.
    const settings = await query<{ name: string; setting: string }>(
      server.superuserUrl,
      `SELECT name, setting FROM pg_settings WHERE name IN ('listen_addresses', 'fsync', 'full_page_writes', 'synchronous_commit', 'unix_socket_directories', 'TimeZone') ORDER BY name`,
    );
    assert.deepEqual(Object.fromEntries(settings.map((s) => [s.name, s.setting])), {
      TimeZone: 'UTC',
      fsync: 'on',
      full_page_writes: 'on',
      listen_addresses: '',
      synchronous_commit: 'on',
      unix_socket_directories: server.socketDir,
    });
    const [who] = await query<{ user: string; db: string }>(
      server.url,
      'SELECT current_user AS user, current_database() AS db',
    );
    assert.deepEqual(who, { user: 'springfield', db: 'springfield' });
    await assert.rejects(
      query(server.url.replace(/:[0-9a-f]+@/, ':wrong@'), 'SELECT 1'),
      /password authentication failed/,
    );

    await query(server.url, 'CREATE TABLE t (id int PRIMARY KEY, v text NOT NULL)');
    await query(server.url, `INSERT INTO t VALUES (1, 'before the crash')`);
    const held = new pg.Client({ connectionString: server.url });
    held.on('error', () => undefined); // the server going away is reported here too
    await held.connect();
    server.restart('immediate');
    assert.notEqual(server.pid(), pid, 'a new postmaster after the restart');
    await assert.rejects(held.query('SELECT 1'), 'a connection from before the restart is dead');
    await held.end().catch(() => undefined);
    assert.deepEqual(
      await query(server.url, 'SELECT v FROM t'),
      [{ v: 'before the crash' }],
      'a committed row survives an immediate (crash) restart',
    );
    const second = server.pid();
    assert.ok(second !== null);
    pids.push(second, ...childrenOf(second));

    server.down('fast');
    await assert.rejects(query(server.url, 'SELECT 1'), /ENOENT|ECONNREFUSED/, 'no server: the socket is gone');
    server.up();
    const third = server.pid();
    assert.ok(third !== null);
    pids.push(third, ...childrenOf(third));
    const other = server.createDatabase('other');
    assert.deepEqual(await query(other, 'SELECT current_database() AS db'), [{ db: 'other' }]);
  } finally {
    server.stop();
  }
  assert.equal(liveServers().length, 0);
  assert.ok(
    await eventually(everythingGone(pids, server.dataDir)),
    `left behind: ${pids.filter(running).join(', ') || 'none'}; directory ${existsSync(dirname(server.dataDir)) ? 'still there' : 'gone'}`,
  );
  server.stop(); // idempotent
});

interface Started {
  pid: number;
  children: number[];
  watchdogPid: number;
  dataDir: string;
  settings: string;
}

/** Runs harnessChild.ts until it reports its server; `how` says how it then dies. */
async function childServer(
  how: 'wait' | 'throw',
  t: TestContext,
): Promise<{
  started: Started;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill: (s: NodeJS.Signals) => void;
}> {
  const child = spawn(process.execPath, [CHILD, how], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  // A failed assertion must not leave the child (and so this test file) waiting forever; its watchdog then cleans up.
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const started = await new Promise<Started>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))) as Started);
    });
    void exited.then(() => reject(new Error(`child exited before starting its server: ${err}`)));
  });
  return { started, exited, kill: (s) => child.kill(s) };
}

// Each case is its own process with its own server, so they run side by side.
describe(
  'a process that started a server (fast mode) and ended badly leaves nothing behind',
  { concurrency: true },
  () => {
    for (const [name, how, signal] of [
      ['killed with SIGKILL: the watchdog stops the server and removes its files', 'wait', 'SIGKILL'],
      [
        'told to stop with SIGTERM: the exit hook stops the server, and the process still ends by the signal',
        'wait',
        'SIGTERM',
      ],
      ['crashed by an uncaught exception: the exit hook stops the server', 'throw', null],
    ] as const) {
      test(name, async (t) => {
        const { started, exited, kill } = await childServer(how, t);
        const pids = [started.pid, ...started.children, started.watchdogPid];
        assert.ok(running(started.pid) && started.children.length > 0, 'the server ran with its background processes');
        assert.equal(
          started.settings,
          'fsync=off full_page_writes=off synchronous_commit=on',
          'fast mode: no fsync, commits still synchronous',
        );
        kill(signal ?? 'SIGUSR2'); // SIGUSR2: the child throws
        const end = await exited;
        if (signal) assert.equal(end.signal, signal);
        else assert.equal(end.code, 1);
        // The exit hook cleans up before the process ends; only the watchdog could do it later.
        if (signal !== 'SIGKILL')
          assert.equal(
            existsSync(dirname(started.dataDir)),
            false,
            'removed by the exit hook before the process ended',
          );
        assert.ok(
          await eventually(everythingGone(pids, started.dataDir)),
          `left behind: ${pids.filter(running).join(', ') || 'no process'}; directory ${existsSync(dirname(started.dataDir)) ? 'still there' : 'gone'}`,
        );
      });
    }
  },
);

let fileServer: PostgresServer | undefined;
describe('postgresForFile: one server for a group of tests', () => {
  const pg15 = postgresForFile({ durability: 'fast' });
  test('is running inside the tests and takes SQL', async () => {
    fileServer = pg15.server;
    assert.deepEqual(await query(pg15.server.url, 'SELECT 1 + 1 AS two'), [{ two: 2 }]);
  });
});

test('postgresForFile: the server is stopped and removed after its group', () => {
  assert.ok(fileServer, 'the group ran');
  assert.equal(liveServers().includes(fileServer), false);
  assert.equal(existsSync(dirname(fileServer.dataDir)), false);
});
