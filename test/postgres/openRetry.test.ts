// A server that restarts while a command opens the store (connecting, reading the schema version,
// migrating, registering the repository) has been sent nothing of the command's operation: the open
// is tried again like any unreachable server, within SPRINGFIELD_PG_CONNECT_TIMEOUT, not answered
// with exit 3 "the outcome is unknown". The loss is real: the cutting proxy closes the connection
// (test/helpers/pgProxy.ts) and, for a restart, stays away for a moment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { assertClaimed, assertFails, runCliAsync } from '../helpers/gitRepo.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { proxiedRepo } from './proxiedRepo.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const PLAN = '# Plan: Open\n## Step 1: One\n- [ ] a\n## Step 2: Two\n- [ ] b\n';
const SOURCE = planSourceOf('plans/p.md', parsePlan(PLAN, 'plans/p.md'));
const ACTOR = { worktree: '/elsewhere', agent: 'setup' };
const pgServer = postgresForFile({ durability: 'fast' });
let n = 0;

/** Where the cut happens: the startup packet (connecting), the open's first query, the migration, the repository's row. */
const MOMENTS = [
  { name: 'while connecting', marker: 'search_path=springfield' },
  { name: 'reading the schema version', marker: "to_regclass('springfield.schema_version')" },
  { name: 'migrating', marker: 'pg_advisory_xact_lock(1397096448' },
  { name: 'registering the repository', marker: 'INSERT INTO repositories' },
];

test("a restart just before a transaction's BEGIN reaches the server is retried, not an unknown outcome", async (t) => {
  const p = await proxiedRepo(t, pgServer.server, `open_${++n}`, 'open-retry', { 'plans/p.md': PLAN });
  await p.direct.initPlan(SOURCE, ACTOR);
  const env = { ...p.env, SPRINGFIELD_PG_CONNECT_TIMEOUT: '10' };
  // The open's queries come first on the same connection; the cut is the operation's own BEGIN.
  const cut = p.proxy.arm('BEGIN', 'before-send', 'down');
  const command = runCliAsync(p.repo.root, ['epic', 'create', 'Survives a restart', '--json'], env);
  await cut;
  await sleep(300);
  await p.proxy.up();
  const r = await command;
  assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
  assert.deepEqual(
    (await p.direct.listEpics()).map((e) => e.title),
    ['Survives a restart'],
    'one epic',
  );
});

for (const moment of MOMENTS) {
  test(`a restart ${moment.name} is retried: the command succeeds once the server is back`, async (t) => {
    const p = await proxiedRepo(t, pgServer.server, `open_${++n}`, 'open-retry', { 'plans/p.md': PLAN });
    // The schema and the plan are there already, unless the cut is in the migration itself: then the
    // command is the first to reach the database and initialises the plan itself.
    const fresh = moment.name === 'migrating';
    if (!fresh) await p.direct.initPlan(SOURCE, ACTOR);
    const env = { ...p.env, SPRINGFIELD_PG_CONNECT_TIMEOUT: '10' };
    const cut = p.proxy.arm(moment.marker, 'before-send', 'down');
    const command = runCliAsync(
      p.repo.root,
      fresh ? ['init', 'plans/p.md', '--json'] : ['claim', 'plans/p.md', '--json'],
      env,
    );
    await cut;
    await sleep(300);
    await p.proxy.up();
    const r = await command;
    assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
    if (!fresh) assert.equal(assertClaimed(r).step_anchor, 'step-1');
    const ready = await p.direct.ready('plans/p.md');
    assert.deepEqual(ready.claimed_steps, fresh ? [] : ['step-1'], 'one step claimed');
  });
}

test('a server that stays away through the open is exit 3 "unreachable; nothing was changed", not "the outcome is unknown"', async (t) => {
  const p = await proxiedRepo(t, pgServer.server, `open_${++n}`, 'open-retry', { 'plans/p.md': PLAN });
  await p.direct.initPlan(SOURCE, ACTOR);
  const cut = p.proxy.arm("to_regclass('springfield.schema_version')", 'before-send', 'down');
  const claim = runCliAsync(p.repo.root, ['claim', 'plans/p.md', '--json'], p.env);
  await cut;
  const err = assertFails(await claim, 3, 'database_unreachable');
  assert.match(
    err.message,
    /^PostgreSQL at postgres:\/\/springfield@\/open_\d+\?host=[^ ]+ is unreachable \(.*\); nothing was changed/,
  );
  assert.doesNotMatch(err.message, /outcome is unknown/);
});
