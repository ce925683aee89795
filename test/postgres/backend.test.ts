// What only the PostgreSQL backend has: holders on several hosts, repositories sharing one server,
// concurrent claimers on separate connections, a newer schema refused untouched, LISTEN/NOTIFY.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock, systemClock } from '../../src/core/clock.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION } from '../../src/core/store/postgres/migrations.ts';
import { watchRepository } from '../../src/core/store/postgres/watch.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const P = 'plans/p.md';
const A: Actor = { worktree: '/src/repo', agent: null };
const source = (text: string): PlanSource => planSourceOf(P, parsePlan(text, P));
const TWO = source('# Plan: Two\n## Step 1: One\n- [ ] a\n## Step 2: Two\n- [ ] b\n');
const pgServer = postgresForFile({ durability: 'fast' });
let n = 0;

function open(url: string, host: string, repo = 'repo-1', clock = systemClock): Store {
  return openStore({ location: url, repository: { id: repo, source: 'configured' }, host, clock });
}

test("the same worktree path on two hosts is two holders: neither acts on the other's claim", async (t) => {
  const url = pgServer.server.createDatabase(`hosts_${++n}`);
  const [a, b] = [open(url, 'devbox-1'), open(url, 'devbox-2')];
  t.after(async () => {
    await a.close();
    await b.close();
  });
  await a.initPlan(TWO, A);
  const claimed = await a.claimNext(TWO, A);
  assert.equal(claimed.claimed && claimed.step_anchor, 'step-1');
  await assert.rejects(b.heartbeat(P, 'step-1', A), {
    code: 'not_holder',
    message: 'cannot heartbeat step-1: it is held by devbox-1:/src/repo, not by devbox-2:/src/repo',
  });
  await assert.rejects(b.complete(TWO, 'step-1', A, { forceReason: 'x' }), { code: 'not_holder' });
  const other = await b.claimNext(TWO, A);
  assert.equal(other.claimed && other.step_anchor, 'step-2', 'the second host claims the next step, not the same one');
  await a.complete(TWO, 'step-1', A, { forceReason: 'done' });
  await assert.rejects(b.complete(TWO, 'step-1', A), {
    code: 'already_completed',
    message: /already completed by devbox-1:\/src\/repo/,
  });
});

test("two repositories on one database never see each other's plans, steps or events", async (t) => {
  const url = pgServer.server.createDatabase(`repos_${++n}`);
  const [one, two] = [open(url, 'h', 'repo-one'), open(url, 'h', 'repo-two')];
  t.after(async () => {
    await one.close();
    await two.close();
  });
  await one.initPlan(TWO, A);
  await assert.rejects(two.ready(P), { code: 'unknown_plan' });
  await two.initPlan(TWO, A);
  await one.claimNext(TWO, A);
  assert.deepEqual((await two.ready(P)).ready_steps, ['step-1', 'step-2']);
  assert.deepEqual(
    (await two.events()).map((e) => e.action),
    ['init'],
  );
  assert.deepEqual((await one.showPlans()).length, 1);
});

test('twelve claimers on their own connections claim twelve different steps at once, with no error', async (t) => {
  const url = pgServer.server.createDatabase(`race_${++n}`);
  const text = ['# Plan: Wide', ...Array.from({ length: 12 }, (_, i) => `## Step ${i + 1}: S${i + 1}\n- [ ] x`)].join(
    '\n',
  );
  const wide = source(text);
  const stores = Array.from({ length: 12 }, (_, i) => open(url, `host-${i % 2}`));
  t.after(async () => {
    for (const s of stores) await s.close();
  });
  await stores[0]?.initPlan(wide, A);
  const results = await Promise.all(
    stores.map((s, i) => s.claimNext(wide, { worktree: `/wt/${i}`, agent: `agent-${i}` })),
  );
  const anchors = results.map((r) => (r.claimed ? r.step_anchor : 'none'));
  assert.equal(new Set(anchors).size, 12, `distinct steps: ${anchors.join(', ')}`);
  assert.ok(!anchors.includes('none'));
  const more = await stores[0]?.claimNext(wide, A);
  assert.equal(more?.claimed, false);
  const done = await Promise.all(
    stores.map((s, i) =>
      s.complete(wide, anchors[i] ?? '', { worktree: `/wt/${i}`, agent: `agent-${i}` }, { forceReason: 'race' }),
    ),
  );
  assert.equal(done.filter((d) => d.plan_completed).length, 1, 'exactly one completion marks the plan done');
  assert.equal((await stores[0]?.plan(P))?.status, 'done');
});

test("migration 5 moves a schema-4 database's open-step counts into the counters, and its claims and completions go on from there", async (t) => {
  const db = `schema4_${++n}`;
  const url = pgServer.server.createDatabase(db);
  const plan = source(`# Plan: Five\n${Array.from({ length: 5 }, (_, i) => `## Step ${i + 1}: S${i + 1}\n`).join('')}`);
  const store = open(url, 'h');
  await store.initPlan(plan, A);
  for (let i = 0; i < 2; i++) {
    const c = await store.claimNext(plan, A);
    assert.ok(c.claimed);
    await store.complete(plan, c.step_anchor, { ...A, token: c.claim_token });
  }
  await store.close();
  // Back to schema 4: the count in the plan's row (3 open of 5), no counters.
  pgServer.server.psql(
    `ALTER TABLE springfield.plans ADD COLUMN open_steps integer NOT NULL DEFAULT 0;
    UPDATE springfield.plans SET open_steps = 3; DROP TABLE springfield.plan_open; ALTER TABLE springfield.epics DROP COLUMN planner;
    DROP INDEX springfield.runs_ended; ALTER TABLE springfield.epics DROP COLUMN budget_usd, DROP COLUMN budget_tokens, DROP COLUMN budget_minutes; DROP TABLE springfield.port_blocks;
    ALTER TABLE springfield.steps DROP COLUMN files;
    DELETE FROM springfield.schema_version WHERE version >= 5`,
    db,
  );
  const reopened = open(url, 'h');
  t.after(() => reopened.close());
  assert.equal((await reopened.plan(P)).open_steps, 3);
  assert.equal(Number(pgServer.server.psql('SELECT sum(n) FROM springfield.plan_open', db)), 3);
  assert.equal(
    pgServer.server.psql(
      `SELECT count(*) FROM information_schema.columns WHERE table_schema = 'springfield' AND table_name = 'plans' AND column_name = 'open_steps'`,
      db,
    ),
    '0',
  );
  let last = null;
  for (let i = 0; i < 3; i++) {
    const c = await reopened.claimNext(plan, A);
    assert.ok(c.claimed);
    last = await reopened.complete(plan, c.step_anchor, { ...A, token: c.claim_token });
  }
  assert.deepEqual([last?.remaining_steps, last?.plan_completed], [0, true]);
});

test('a schema newer than this Springfield is refused, and nothing in the database changes', async (t) => {
  const url = pgServer.server.createDatabase(`newer_${++n}`);
  const store = open(url, 'h');
  t.after(() => store.close());
  await store.initPlan(TWO, A);
  const db = url.split('?')[0]?.split('/').pop() ?? '';
  pgServer.server.psql("INSERT INTO springfield.schema_version (version, applied_by) VALUES (99, 'future')", db);
  const dump = () =>
    pgServer.server.psql(
      `SELECT (SELECT count(*) FROM springfield.events) || ' ' || (SELECT string_agg(version::text, ',' ORDER BY version) FROM springfield.schema_version)`,
      db,
    );
  const before = dump();
  const fresh = open(url, 'h');
  t.after(() => fresh.close());
  await assert.rejects(fresh.claimNext(TWO, A), {
    code: 'schema_too_new',
    category: 'environment',
    message: new RegExp(
      `schema version 99 is newer than this Springfield supports \\(${PG_SCHEMA_VERSION}\\); upgrade Springfield — the database was not modified`,
    ),
  });
  assert.equal(dump(), before);
});

test('watch() hears writes committed by another connection (LISTEN/NOTIFY)', async (t) => {
  const url = pgServer.server.createDatabase(`watch_${++n}`);
  const writer = open(url, 'writer-host');
  const watcher = open(url, 'watcher-host');
  t.after(async () => {
    await writer.close();
    await watcher.close();
  });
  await writer.initPlan(TWO, A);
  let heard = 0;
  const w = watcher.watch(() => {
    heard++;
  });
  t.after(() => w.dispose());
  // The listener is live once a notification sent after LISTEN arrives: poll with harmless writes.
  for (let i = 0; heard === 0 && i < 200; i++) {
    await writer.heartbeat(P, 'step-1', A).catch(() => undefined);
    await writer.claimNext(TWO, A).catch(() => undefined);
    await sleep(50);
  }
  assert.ok(heard > 0, 'a write from another connection was heard');
  const before = heard;
  await writer.reset(P, 'step-1', A);
  for (let i = 0; heard === before && i < 200; i++) await sleep(25);
  assert.ok(heard > before, 'the next write (a transaction) is heard');
  await sleep(200);
  const quiet = heard;
  // Refused (not claimed) or unknown token (claimed above with a smaller one): either way nothing is written.
  await assert.rejects(
    writer.complete(TWO, 'step-2', { ...A, token: 99 }),
    (e: { category?: string }) => e.category === 'refused' || e.category === 'usage',
  );
  await sleep(300);
  assert.equal(heard, quiet, 'a refused write committed nothing and notified no one');
  const claimed = await writer.claimNext(TWO, A);
  assert.ok(claimed.claimed);
  for (let i = 0; heard === quiet && i < 200; i++) await sleep(25);
  assert.ok(heard > quiet, 'a claim (one statement, one round trip) is heard');
});

test("a write whose notification was never sent (its writer died after COMMIT) is still heard, by the watch's safety check", async (t) => {
  const db = `safety_${++n}`;
  const url = pgServer.server.createDatabase(db);
  const writer = open(url, 'writer-host');
  t.after(() => writer.close());
  await writer.initPlan(TWO, A);
  let heard = 0;
  const w = watchRepository(
    url,
    'repo-1',
    () => {
      heard++;
    },
    () => undefined,
    300,
  );
  t.after(() => w.dispose());
  for (let i = 0; heard === 0 && i < 200; i++) {
    await writer.heartbeat(P, 'step-1', A).catch(() => undefined);
    await writer.claimNext(TWO, A).catch(() => undefined);
    await sleep(50);
  }
  assert.ok(heard > 0, 'the watch is live');
  await sleep(800);
  const quiet = heard;
  await sleep(800);
  assert.equal(heard, quiet, 'nothing written, nothing heard: the check calls only on a change');
  // What a writer killed between its COMMIT and its notification leaves: committed events, no NOTIFY.
  pgServer.server.psql(
    `INSERT INTO springfield.events (repo_id, at, entity, action, plan_path, reason) VALUES ('repo-1', now(), 'step', 'reset', '${P}', 'written without a notification')`,
    db,
  );
  for (let i = 0; heard === quiet && i < 100; i++) await sleep(50);
  assert.ok(heard > quiet, 'the safety check noticed the new event');
});

test('a server that cannot be reached is one line, exit category environment, naming the server without its password', async (t) => {
  const url = pgServer.server.createDatabase(`down_${++n}`);
  const broken = url.replace(/port=\d+/, 'port=1');
  const store = open(broken, 'h');
  t.after(() => store.close());
  const err = await store.ready(P).then(
    () => null,
    (e: unknown) => e as { code: string; category: string; message: string },
  );
  assert.ok(err);
  assert.deepEqual([err.code, err.category], ['database_unreachable', 'environment']);
  assert.match(
    err.message,
    /^PostgreSQL at postgres:\/\/springfield@\/down_\d+\?host=[^ ]+&port=1 is unreachable \(.*\); nothing was changed/,
  );
  const password = /:\/\/[^:]+:([^@]+)@/.exec(url)?.[1] ?? '';
  assert.ok(password.length > 8 && !err.message.includes(password));
  assert.doesNotMatch(err.message, /\n/);
});

test("ManualClock drives lease expiry on PostgreSQL as on SQLite; without one, the server's clock does", async (t) => {
  const url = pgServer.server.createDatabase(`clock_${++n}`);
  const clock = new ManualClock(Date.UTC(2020, 0, 1));
  const old = open(url, 'h', 'repo-1', clock);
  const live = open(url, 'h');
  t.after(async () => {
    await old.close();
    await live.close();
  });
  await old.initPlan(TWO, A);
  const c = await old.claimNext(TWO, A, { leaseSeconds: 60 });
  assert.equal(c.claimed && c.lease_expires_at, '2020-01-01T00:01:00.000Z');
  const now = Date.now();
  const re = await live.claimNext(TWO, { worktree: '/other', agent: null });
  assert.ok(
    re.claimed && re.step_anchor === 'step-1' && re.reclaimed_from_expired,
    "the server's clock says the 2020 lease expired",
  );
  assert.ok(
    re.claimed && Math.abs(Date.parse(re.lease_expires_at) - 7200_000 - now) < 3600_000,
    "the new lease is two hours from the server's now",
  );
});

test('PostgreSQL: a version-1 database is upgraded in place; its runs keep their rows and gain usage', async (t) => {
  const url = pgServer.server.createDatabase('runs_upgrade');
  const db = url.split('?')[0]?.split('/').pop() ?? '';
  const role = /^postgres:\/\/([^:@]+)/.exec(url)?.[1] ?? '';
  pgServer.server.psql(
    `SET ROLE ${role}; CREATE SCHEMA springfield; SET search_path = springfield; ${PG_MIGRATIONS[0]};
    CREATE TABLE schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now(), applied_by text);
    INSERT INTO schema_version (version) VALUES (1);
    INSERT INTO repositories VALUES ('old-repo', 'configured');
    INSERT INTO runs (repo_id, role, command, started_at, status, host, pid) VALUES ('old-repo', 'bart', '["bart"]', now(), 'running', 'h', 1)`,
    db,
  );
  const store = openStore({ location: url, repository: { id: 'old-repo', source: 'configured' }, host: 'h' });
  t.after(() => store.close());
  const [old] = await store.runs();
  assert.deepEqual([old?.role, old?.command, old?.cost_usd], ['bart', '["bart"]', null]);
  const ended = await store.finishRun(
    old?.id ?? 0,
    {
      exitCode: 0,
      signal: null,
      usage: {
        costUsd: 2,
        inputTokens: 1,
        outputTokens: 1,
        cacheReadTokens: null,
        cacheWriteTokens: null,
        premiumRequests: null,
      },
    },
    null,
  );
  assert.deepEqual([ended.status, ended.cost_usd], ['succeeded', 2]);
  assert.equal(
    pgServer.server.psql('SELECT max(version) FROM springfield.schema_version', db),
    String(PG_MIGRATIONS.length),
  );
});
