// Worktree ports (docs/worktrees.md, "Ports"): aligned blocks, free in the ledger and on the machine.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { test } from 'node:test';
import {
  blockFree,
  freeStarts,
  portFree,
  reservePorts,
  type PortBlock,
  type PortLedger,
} from '../../src/core/orchestrate/ports.ts';
import { expandEnvMap, worktreeCommandEnv } from '../../src/core/orchestrate/worktreeEnv.ts';

function listen(port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen({ port, host }, () => resolve(s));
  });
}

function ledger(initial: PortBlock[] = []): PortLedger & { rows: PortBlock[] } {
  const rows = [...initial];
  return {
    rows,
    blocks: async (host) => rows.filter((b) => b.host === host),
    insert: async (b) => {
      if (rows.some((r) => r.host === b.host && r.first === b.first)) return false;
      rows.push(b);
      return true;
    },
    release: async (host, worktree) => {
      const before = rows.length;
      rows.splice(0, rows.length, ...rows.filter((r) => !(r.host === host && r.worktree === worktree)));
      return before - rows.length;
    },
  };
}

test('aligned blocks that no held block overlaps, lowest first', () => {
  const range = { first: 100, last: 139 };
  assert.deepEqual(freeStarts([], 10, range), [100, 110, 120, 130]);
  assert.deepEqual(
    freeStarts(
      [
        { first: 110, count: 10 },
        { first: 135, count: 2 },
      ],
      10,
      range,
    ),
    [100, 120],
  );
  assert.deepEqual(freeStarts([], 15, range), [100, 115], 'a block never runs past the range');
});

test('a port something listens on is not free; the block holding it is skipped', async () => {
  const server = await listen(0, '127.0.0.1');
  const port = (server.address() as { port: number }).port;
  try {
    assert.equal(await portFree(port), false);
    assert.equal(await blockFree(port, 1), false);
  } finally {
    await new Promise((r) => server.close(r));
  }
  assert.equal(await portFree(port), true, 'free again once closed');
});

test("a reservation takes the lowest block free in the ledger and on the machine, keeps a worktree's own, and loses a race gracefully", async () => {
  const range = { first: 200, last: 259 };
  const busyOnMachine = new Set([205]);
  const isFree = async (p: number) => !busyOnMachine.has(p);
  const probe = { isFree, range, exists: () => true };
  const l = ledger([
    { host: 'h', first: 210, count: 10, worktree: '/other', epic_id: 'sf-0' },
    { host: 'elsewhere', first: 220, count: 10, worktree: '/x', epic_id: 'sf-9' },
  ]);
  const a = await reservePorts(l, { host: 'h', count: 10, worktree: '/a', epic_id: 'sf-a' }, probe);
  assert.equal(
    a.first,
    220,
    "200-209 has a port in use on the machine; 210-219 is held; another host's block does not count",
  );
  assert.deepEqual(
    await reservePorts(l, { host: 'h', count: 10, worktree: '/a', epic_id: 'sf-a' }, probe),
    a,
    'the same worktree keeps its block',
  );
  // Another scheduler inserts 230 between our read and our insert: ours moves on to 240.
  const racing: PortLedger = {
    blocks: l.blocks,
    release: l.release,
    insert: async (b) => {
      if (b.first === 230) {
        l.rows.push({ ...b, worktree: '/rival' });
        return false;
      }
      return l.insert(b);
    },
  };
  assert.equal(
    (await reservePorts(racing, { host: 'h', count: 10, worktree: '/b', epic_id: 'sf-b' }, probe)).first,
    240,
  );
  assert.equal((await reservePorts(l, { host: 'h', count: 10, worktree: '/c', epic_id: 'sf-c' }, probe)).first, 250);
  await assert.rejects(
    reservePorts(l, { host: 'h', count: 10, worktree: '/d', epic_id: 'sf-d' }, probe),
    /no block of 10 free ports left between 200 and 259 on h/,
  );
});

test("the env map gets the worktree's variables; nothing but SPRINGFIELD_ names is expanded", () => {
  const env = worktreeCommandEnv(
    { PATH: '/bin', SPRINGFIELD_EPIC: 'stale', VSCODE_PID: '1' },
    {
      epicId: 'sf-1a2b',
      title: 'Add cache',
      worktree: '/w/sf-1a2b',
      mainRoot: '/w/repo',
      ports: { first: 20010, count: 10 },
      env: {
        PORT: '$SPRINGFIELD_PORT',
        DATABASE_URL: 'postgres://localhost/app_${SPRINGFIELD_WORKTREE_ID}',
        HOME_TOO: '$HOME',
        RANGE: '$SPRINGFIELD_PORTS',
      },
    },
  );
  assert.equal(env.PORT, '20010');
  assert.equal(env.SPRINGFIELD_PORTS, '20010-20019');
  assert.equal(env.RANGE, '20010-20019');
  assert.equal(env.DATABASE_URL, 'postgres://localhost/app_sf-1a2b');
  assert.equal(env.HOME_TOO, '$HOME');
  assert.equal(env.SPRINGFIELD_EPIC, 'sf-1a2b');
  assert.equal(env.VSCODE_PID, undefined);
  assert.deepEqual(
    expandEnvMap({ A: '$SPRINGFIELD_NOPE' }, {}),
    { A: '$SPRINGFIELD_NOPE' },
    'an unknown name stays as written',
  );
});

test('a block whose worktree is gone is released and taken again', async () => {
  const range = { first: 300, last: 319 };
  const l = ledger([
    { host: 'h', first: 300, count: 10, worktree: '/gone', epic_id: 'sf-0' },
    { host: 'h', first: 310, count: 10, worktree: '/here', epic_id: 'sf-1' },
  ]);
  const b = await reservePorts(
    l,
    { host: 'h', count: 10, worktree: '/new', epic_id: 'sf-2' },
    { isFree: async () => true, range, exists: (w) => w !== '/gone' },
  );
  assert.equal(b.first, 300);
  assert.deepEqual(l.rows.map((r) => r.worktree).sort(), ['/here', '/new']);
});
