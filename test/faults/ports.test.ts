// Ports for worktrees (docs/worktrees.md, "Ports"): two epics' agents built in parallel each start a
// server on $SPRINGFIELD_PORT (real sockets) and never collide; a port in use on the machine is
// skipped; setup, agents and the env map see the same block; blocks are released with the worktree.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { CLI_PATH } from '../helpers/gitRepo.ts';
import { approve, faultRepo, type FaultRepo, violations } from './harness.ts';

interface Served {
  epic: string;
  ok: boolean;
  error: string | null;
  port: number;
  ports: string | null;
  database: string | null;
  at: number;
}

function served(f: FaultRepo): Served[] {
  return f.records().filter((r) => r.event === 'serve') as unknown as Served[];
}

function listen(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(null));
    s.listen({ port, host: '127.0.0.1' }, () => resolve(s));
  });
}

function blocks(f: FaultRepo): { worktree: string; first_port: number; count: number; epic_id: string }[] {
  const db = new Database(join(f.repo, '.springfield', 'state.db'), { readonly: true });
  try {
    return db.prepare('SELECT worktree, first_port, count, epic_id FROM port_blocks ORDER BY first_port').all() as {
      worktree: string;
      first_port: number;
      count: number;
      epic_id: string;
    }[];
  } finally {
    db.close();
  }
}

/** Two epics planned and approved, their builders set to serve while the other serves. */
function twoServingEpics(f: FaultRepo, extra: Record<string, unknown> = {}): [string, string] {
  const a = f.epic('Serve A');
  const b = f.epic('Serve B');
  assert.equal(f.orchestrate().code, 0, 'Lisa proposed both plans');
  approve(f, a);
  approve(f, b);
  f.behave({ ralph: { do: 'serve', ms: 120_000, ...extra } });
  return [a, b];
}

test(
  'two epics built in parallel each serve on their own $SPRINGFIELD_PORT without a clash; a port in use is skipped; the env map and setup see the same block; released with the worktree',
  { timeout: 300_000 },
  async (t) => {
    // Something else on the machine holds the first port of the range: that block is never handed out.
    const squatter = await listen(20_000);
    t.after(() => squatter?.close());
    const f = faultRepo(
      t,
      {
        maxParallelAgents: 2,
        ports: 10,
        env: { DATABASE_URL: 'postgres://localhost/app_${SPRINGFIELD_WORKTREE_ID}', PORT: '$SPRINGFIELD_PORT' },
        setup: [
          [
            process.execPath,
            '-e',
            "require('fs').appendFileSync(process.env.SF_SETUP_LOG, JSON.stringify({ epic: process.env.SPRINGFIELD_EPIC, port: process.env.SPRINGFIELD_PORT, ports: process.env.SPRINGFIELD_PORTS, PORT: process.env.PORT }) + '\\n')",
          ],
        ],
      },
      (base) => ({ SF_SETUP_LOG: join(base, 'setup.log') }),
    );
    const [a, b] = twoServingEpics(f);
    const run = f.orchestrate();
    for (const epic of [a, b])
      assert.deepEqual(violations(f, run, { epic, maxSessions: { ralph: 2 }, status: 'done' }), [], run.stderr);

    const serves = served(f);
    assert.equal(serves.length, 4, `two steps per epic, each served once: ${JSON.stringify(serves)}`);
    assert.deepEqual(
      serves.filter((s) => !s.ok),
      [],
      'no server found its port taken',
    );
    const portOf = (epic: string) => [...new Set(serves.filter((s) => s.epic === epic).map((s) => s.port))];
    assert.equal(portOf(a).length, 1, `${a} served on one port in its worktree (${portOf(a).join(', ')})`);
    assert.equal(portOf(b).length, 1, `${b} served on one port in its worktree (${portOf(b).join(', ')})`);
    assert.notEqual(portOf(a)[0], portOf(b)[0]);
    for (const s of serves) {
      assert.ok(s.port >= 20_000 && s.port <= 29_999, `${s.port} in the range`);
      const [first, last] = (s.ports ?? '').split('-').map(Number);
      assert.equal(first, s.port);
      assert.equal(last, s.port + 9, 'a block of ten');
      assert.ok(
        !(first! <= 20_000 && 20_000 <= last!) || squatter === null,
        'the block holding the port in use was skipped',
      );
      assert.equal(s.database, `postgres://localhost/app_${s.epic}`, 'the env map, expanded per worktree');
    }
    // The two servers were up at the same time: the builders really ran side by side.
    const firstA = serves.find((s) => s.epic === a)!;
    const firstB = serves.find((s) => s.epic === b)!;
    assert.ok(Math.abs(firstA.at - firstB.at) < 20_000, 'both epics served at once');

    const setups = readFileSync(join(f.base, 'setup.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { epic: string; port: string; ports: string; PORT: string });
    for (const epic of [a, b]) {
      // Setup also ran in each epic's planning worktree, in the first orchestrate, with that worktree's
      // own block (released with it): the building worktree's setup is the epic's last line.
      const lines = setups.filter((x) => x.epic === epic);
      assert.equal(
        lines.length,
        2,
        `setup ran in ${epic}'s planning and building worktrees: ${JSON.stringify(setups)}`,
      );
      const s = lines[1]!;
      assert.equal(Number(s.port), portOf(epic)[0], 'setup saw the block its agents got');
      assert.equal(s.PORT, s.port, '"PORT": "$SPRINGFIELD_PORT" in the env map');
    }
    assert.deepEqual(blocks(f), [], 'both worktrees removed after the merge: their ports released');
  },
);

test(
  'the checker can fail: with "ports": 0 the same servers fall back to one fixed port and collide',
  { timeout: 300_000 },
  async (t) => {
    const fixed = await listen(0);
    const port = (fixed!.address() as { port: number }).port;
    fixed!.close();
    const f = faultRepo(t, { maxParallelAgents: 2, ports: 0 });
    twoServingEpics(f, { port });
    const run = f.orchestrate();
    assert.equal(run.code, 0, run.stderr);
    const serves = served(f);
    assert.ok(
      serves.some((s) => !s.ok && s.error === 'EADDRINUSE'),
      `a server found the port taken: ${JSON.stringify(serves)}`,
    );
    assert.ok(
      serves.every((s) => s.ports === null),
      'no block without ports',
    );
    assert.deepEqual(blocks(f), [], 'nothing reserved');
  },
);

test(
  "springfield app starts the epic's run commands in its worktree on its port, shows it in worktrees, refuses a second, stops with --stop and with prune",
  { timeout: 300_000 },
  async (t) => {
    const server =
      "const s = require('net').createServer((c) => c.end(process.env.SPRINGFIELD_EPIC + ' ' + process.cwd())); s.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening on ' + process.env.PORT)); process.on('SIGTERM', () => { console.log('bye'); process.exit(0); });";
    const f = faultRepo(t, { ports: 5, env: { PORT: '$SPRINGFIELD_PORT' }, run: [[process.execPath, '-e', server]] });
    const epic = f.epic('App');
    assert.equal(f.orchestrate().code, 0);
    approve(f, epic);
    const startedEpic = f.sf('epic', 'start', epic);
    assert.equal(startedEpic.code, 0, startedEpic.stderr);
    const worktree = String(startedEpic.json.worktree_path);

    const app = spawn(process.execPath, [CLI_PATH, 'app', epic], {
      cwd: f.repo,
      env: f.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    app.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    app.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const exited = new Promise<number | null>((r) => app.once('exit', (code) => r(code)));
    t.after(() => app.kill('SIGKILL'));
    const deadline = Date.now() + 30_000;
    while (!/listening on \d+/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const port = Number(/listening on (\d+)/.exec(out)?.[1]);
    assert.ok(port >= 20_000, `the app listens on the worktree's port: ${out} ${err}`);
    assert.match(
      err,
      new RegExp(
        `${epic}'s app \\(App\\) in .* at http://localhost:${port}/ \\(ports ${port}-${port + 4}\\); Ctrl\\+C stops it`,
      ),
    );
    const reply = await new Promise<string>((resolve, reject) => {
      const c = connect({ port, host: '127.0.0.1' });
      let data = '';
      c.on('data', (d) => {
        data += d.toString();
      });
      c.on('end', () => resolve(data));
      c.on('error', reject);
    });
    assert.equal(
      reply,
      `${epic} ${realpathSync(worktree)}`,
      "it runs in the epic's worktree with its SPRINGFIELD_ variables",
    );

    const listed = (
      f.sf('worktrees').json.worktrees as {
        epic_id: string;
        ports: string | null;
        port: number | null;
        app: { url: string } | null;
      }[]
    ).find((w) => w.epic_id === epic);
    assert.deepEqual(
      { ports: listed?.ports, port: listed?.port, url: listed?.app?.url },
      { ports: `${port}-${port + 4}`, port, url: `http://localhost:${port}/` },
    );
    const second = f.sf('app', epic);
    assert.equal(second.code, 1);
    assert.match(
      second.stderr,
      new RegExp(
        `${epic}'s app already runs \\(pid \\d+, http://localhost:${port}/\\); stop it with: springfield app ${epic} --stop`,
      ),
    );

    const stopped = f.sf('app', epic, '--stop');
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.equal(stopped.json.stopped, true);
    assert.equal(await exited, 0, 'a stopped app exits 0');
    assert.match(out, /bye/, 'its command was asked to end (SIGTERM) first');
    assert.equal(
      await listen(port).then((s) => {
        s?.close();
        return s !== null;
      }),
      true,
      'the port is free again',
    );

    // Started again, then the epic deferred and its worktree pruned: the app goes with it, the ports too.
    const again = spawn(process.execPath, [CLI_PATH, 'app', epic, '--json'], {
      cwd: f.repo,
      env: f.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let again2 = '';
    again.stderr.on('data', (c: Buffer) => {
      again2 += c.toString();
    });
    const againExit = new Promise<number | null>((r) => again.once('exit', (code) => r(code)));
    t.after(() => again.kill('SIGKILL'));
    while (!/listening on/.test(again2) && Date.now() < deadline + 30_000) await new Promise((r) => setTimeout(r, 50));
    assert.equal(f.sf('epic', 'defer', epic).code, 0);
    const pruned = f.sf('worktrees', 'prune');
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.equal(await againExit, 0);
    assert.deepEqual(blocks(f), [], "the pruned worktree's ports are released");
    const noRun = faultRepo(t);
    const e2 = noRun.epic('No run');
    assert.equal(noRun.orchestrate().code, 0);
    approve(noRun, e2);
    assert.equal(noRun.sf('epic', 'start', e2).code, 0);
    const refused = noRun.sf('app', e2);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /no "run" commands: add e\.g\. "run": \[\["npm", "run", "dev"\]\] \(docs\/worktrees\.md\)/,
    );
  },
);
