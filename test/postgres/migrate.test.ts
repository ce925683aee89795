// `springfield migrate` (docs/postgres-design.md, "springfield migrate: to PostgreSQL and back") end to end: a repository whose SQLite state was made
// through the CLI is copied to a real PostgreSQL server and back, each copy checked by the dump compare,
// and the CLI sees the same state on every backend. Refusals leave
// everything as it was; a copy corrupted by a trigger on the server fails the compare and is rolled back.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../../src/core/store/index.ts';
import {
  assertClaimed,
  assertFails,
  assertOk,
  ensureCli,
  makeRepo,
  runCli,
  runJson,
  type CliResult,
  type Repo,
} from '../helpers/gitRepo.ts';
import { postgresForFile } from '../helpers/postgres.ts';

const PLAN = [
  '# Plan: Migrate',
  '',
  '## Step 1: Schema {#step-1}',
  '**Tasks:**',
  '- [ ] Write the tables',
  '- [ ] Index them',
  '**Tests:**',
  '- [ ] Round trip',
  '',
  '### Step 1.1: Triggers {#step-1-1}',
  '- [ ] Append-only',
  '',
  '## Step 2: Copy {#step-2}',
  '**Depends on:** #step-1',
  '- [ ] Copy rows',
  '',
  '## Step 3: Compare {#step-3}',
  '- [ ] Dump both',
  '',
  '## Step 4: Docs {#step-4}',
  '**Depends on:** #step-2, #step-3',
  '- [ ] Write it',
  '',
].join('\n');
const OTHER = '# Plan: Other\n\n## Step 1: Only {#step-1}\n- [ ] it\n';
const HOST = 'host-a';
const pgServer = postgresForFile({ durability: 'fast' });
let databases = 0;

interface Fixture {
  readonly repo: Repo;
  readonly root: string;
  readonly wtB: string;
  readonly epic: string;
  readonly reviewed: string;
  readonly db: string;
}

/** A repository with a real mix of SQLite state, made through the CLI (runs and verifications through the SQLite store). */
async function sqliteState(t: TestContext): Promise<Fixture> {
  ensureCli();
  const repo = makeRepo({
    files: { '.gitignore': '.springfield/\n', 'plans/p.md': PLAN, 'plans/q.md': OTHER },
    worktrees: ['b'],
  });
  t.after(() => repo.cleanup());
  const root = repo.root;
  const env = { SPRINGFIELD_HOST: HOST };
  const ok = (cwd: string, args: string[], extra: Record<string, string> = {}) =>
    assertOk(runJson(cwd, args, { ...env, ...extra }));
  const epic = ok(root, ['epic', 'create', 'Move to the server', '--brief', 'One shared store.']).id as string;
  ok(root, ['plan', 'propose', epic, 'plans/p.md', '--agent', 'lisa']);
  ok(root, ['plan', 'request-changes', epic, '--feedback', 'name the risks']);
  ok(root, ['plan', 'note', epic, '--kind', 'risk', '--summary', 'ids are global on the server', '--agent', 'lisa']);
  ok(root, ['plan', 'propose', epic, 'plans/p.md', '--agent', 'lisa']);
  ok(root, ['plan', 'approve', epic]);
  // The epic's steps are built in its own worktree (docs/lifecycle.md).
  const wt = ok(root, ['epic', 'start', epic]).worktree_path as string;
  const ralph = { SPRINGFIELD_AGENT: 'ralph-1' };
  assertClaimed(runJson(wt, ['claim', 'plans/p.md'], { ...env, ...ralph }));
  ok(wt, ['start', 'plans/p.md', 'step-1'], ralph);
  ok(wt, ['update', 'plans/p.md', 'step-1', '--task', '0', 'completed'], ralph);
  ok(wt, ['artifact', 'plans/p.md', 'step-1', '--kind', 'note', '--summary', 'tables written'], ralph);
  ok(wt, ['update', 'plans/p.md', 'step-1', '--all', 'completed'], ralph);
  ok(wt, ['update', 'plans/p.md', 'step-1-1', '--all', 'completed'], ralph);
  ok(wt, ['complete', 'plans/p.md', 'step-1', '--commit', 'HEAD'], ralph);
  const wtB = wt;
  const live = assertClaimed(runJson(wtB, ['claim', 'plans/p.md'], { ...env, SPRINGFIELD_AGENT: 'ralph-2' }));
  assert.equal(live.step_anchor, 'step-2');
  ok(root, ['init', 'plans/q.md']);
  const later = ok(root, ['epic', 'create', 'Later']).id as string;
  ok(root, ['epic', 'defer', later, '--reason', 'after the launch']);

  // Runs and verifications come from the scheduler; the SQLite store writes them here, as it does there.
  const db = join(root, '.springfield', 'state.db');
  const reviewed = ok(root, ['epic', 'create', 'Reviewed']).id as string;
  const store = openStore({ location: db });
  try {
    const actor = { worktree: root, agent: 'marge' };
    await store.applyEpicEvent(reviewed, 'plan_approved', actor, 'approved');
    await store.applyEpicEvent(reviewed, 'start', actor, 'go');
    const done = await store.startRun(
      {
        epicId: epic,
        planPath: 'plans/p.md',
        stepAnchor: 'step-1',
        role: 'ralph',
        iteration: 1,
        worktree: root,
        agentId: 'ralph-1',
        command: ['claude', '-p', 'build'],
        pid: process.pid,
      },
      actor,
    );
    await store.finishRun(done.id, { exitCode: 0, signal: null }, actor);
    await store.startRun(
      {
        epicId: epic,
        planPath: 'plans/p.md',
        stepAnchor: 'step-2',
        role: 'ralph',
        iteration: 1,
        worktree: wtB,
        agentId: 'ralph-2',
        command: ['claude', '-p', 'copy'],
        pid: process.pid,
      },
      actor,
    );
    await store.recordVerifications([
      {
        runId: done.id,
        epicId: epic,
        planPath: 'plans/p.md',
        stepAnchor: 'step-1',
        command: 'npm test',
        exitCode: 0,
        verdict: 'pass',
        durationMs: 1200,
        outputTail: 'ok',
      },
      {
        runId: null,
        epicId: epic,
        planPath: null,
        stepAnchor: null,
        command: 'npm run lint',
        exitCode: 1,
        verdict: 'fail',
        durationMs: 300,
        outputTail: 'no',
      },
    ]);
    await store.applyEpicEvent(reviewed, 'steps_completed', actor, 'done');
  } finally {
    await store.close();
  }
  writeFileSync(join(root, 'notes.ts'), 'a\nb\nc\n');
  ok(root, [
    'signal',
    reviewed,
    '--type',
    'implementation_failure',
    '--summary',
    'b is wrong',
    '--location',
    'notes.ts:2:3',
    '--note',
    'here',
    '--file',
    'notes.ts',
    '--line',
    '1',
  ]);
  return { repo, root, wtB, epic, reviewed, db };
}

function newDatabase(): string {
  return pgServer.server.createDatabase(`migrate_${++databases}`);
}

/**
 * A server another repository already uses (its rows made through the CLI), every identity sequence
 * moved on by a different amount: ids copied unchanged, or through the wrong table, name no row.
 */
function sharedDatabase(root: string): string {
  const url = newDatabase();
  const other = {
    SPRINGFIELD_DATABASE_URL: url,
    SPRINGFIELD_HOST: 'host-z',
    SPRINGFIELD_REPO_ID: 'another-repository',
  };
  assertOk(runJson(root, ['init', 'plans/q.md'], other));
  assertClaimed(runJson(root, ['claim', 'plans/q.md'], other));
  assertOk(runJson(root, ['update', 'plans/q.md', 'step-1', '--all', 'completed'], other));
  const epic = assertOk<{ id: string }>(runJson(root, ['epic', 'create', 'Theirs'], other)).id;
  assertOk(runJson(root, ['plan', 'note', epic, '--kind', 'risk', '--summary', 'not ours'], other));
  const tables = [
    'plan_versions',
    'checklist_items',
    'artifacts',
    'signals',
    'signal_locations',
    'runs',
    'verifications',
    'debt',
    'planning_notes',
    'events',
  ];
  pgServer.server.psql(
    tables
      .map((t, i) => `SELECT setval(pg_get_serial_sequence('springfield.${t}', 'id'), ${(i + 1) * 1000});`)
      .join(' '),
    dbOf(url),
  );
  return url;
}

function dbOf(url: string): string {
  return /\/(\w+)\?/.exec(url)?.[1] ?? '';
}

/** Rows of every table of one database (all repositories), for "nothing changed". */
function pgCounts(url: string): string {
  const db = /\/(\w+)\?/.exec(url)?.[1] ?? '';
  const tables = [
    'epics',
    'plans',
    'plan_versions',
    'steps',
    'step_deps',
    'checklist_items',
    'artifacts',
    'signals',
    'signal_locations',
    'runs',
    'verifications',
    'debt',
    'planning_notes',
    'events',
  ];
  return pgServer.server
    .psql(`SELECT ${tables.map((t) => `(SELECT count(*) FROM springfield.${t})`).join(" || ' ' || ")}`, db)
    .trim();
}

function fileHash(path: string): string {
  return existsSync(path) ? createHash('sha256').update(readFileSync(path)).digest('hex') : 'absent';
}

interface Migrated {
  readonly dump_sha256: string;
  readonly rows: Record<string, number> & { events: number };
  readonly repository: string;
  readonly set_on_every_clone: string;
  readonly event_ids_cleared: number;
}

/** A successful migrate --json: exit 0, one JSON document, progress (one line per table) on stderr. */
function migrated(r: CliResult): Migrated {
  assert.equal(r.code, 0, `migrate failed: ${r.stdout}\n${r.stderr}`);
  const lines = r.stderr.split('\n');
  assert.equal(
    lines.filter((l) => /^ {2}[a-z_]+: \d+ rows?$/.test(l)).length,
    14,
    `one progress line per table on stderr:\n${r.stderr}`,
  );
  return r.json<Migrated>();
}

/** What the CLI shows of the state, numeric ids (renumbered by design) blanked; the SQL checks follow the references. */
function view(cwd: string, env: Record<string, string>, epic: string): unknown {
  const get = (args: string[]) => withoutIds(assertOk(runJson(cwd, args, env)));
  return {
    show: get(['show']),
    ready: get(['ready', 'plans/p.md']),
    epics: get(['epic', 'list']),
    epic: get(['epic', 'show', epic]),
    plan: get(['plan', 'show', epic]),
    debt: get(['debt', '--all']),
    signals: get(['signals']),
    runs: get(['runs']),
  };
}

function withoutIds(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutIds);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [
      k,
      (k === 'id' || k.endsWith('_id')) && typeof x === 'number' ? '#' : withoutIds(x),
    ]),
  );
}

test('migrate to PostgreSQL and back: the CLI sees the same state on each, hosts set, ids and references renumbered, the source only read', async (t) => {
  const f = await sqliteState(t);
  const url = sharedDatabase(f.root);
  const env = { SPRINGFIELD_HOST: HOST };
  const onSqlite = view(f.root, env, f.epic);
  const before = { db: fileHash(f.db), wal: fileHash(`${f.db}-wal`) };

  const there = migrated(runJson(f.root, ['migrate', '--to', url], env));
  assert.match(there.dump_sha256, /^[0-9a-f]{64}$/);
  assert.deepEqual(
    [
      there.rows.epics,
      there.rows.plans,
      there.rows.steps,
      there.rows.step_deps,
      there.rows.signal_locations,
      there.rows.runs,
      there.rows.verifications,
      there.rows.debt,
      there.rows.planning_notes,
    ],
    [3, 2, 6, 3, 2, 2, 2, 1, 1],
  );
  assert.match(
    there.set_on_every_clone,
    /^On every clone, set SPRINGFIELD_DATABASE_URL to the URL given to --to \(postgres:\/\/springfield@\/migrate_\d+\?host=/,
  );
  assert.ok(
    !JSON.stringify(there).includes(/:\/\/[^:]+:([^@]+)@/.exec(url)?.[1] ?? '\0'),
    'the password is not printed',
  );
  assert.deepEqual({ db: fileHash(f.db), wal: fileHash(`${f.db}-wal`) }, before, 'the SQLite file was only read');

  const onPg = { SPRINGFIELD_HOST: HOST, SPRINGFIELD_DATABASE_URL: url };
  assert.deepEqual(
    view(f.root, onPg, f.epic),
    onSqlite,
    'show, ready, epic list/show, plan show, debt, signals and runs are the same on PostgreSQL',
  );
  const sql = (q: string) => pgServer.server.psql(q, dbOf(url)).trim();
  const ours = `repo_id = '${there.repository}'`;
  assert.equal(
    sql(
      `SELECT count(*) FROM springfield.steps WHERE ${ours} AND claimed_by IS NOT NULL AND claimed_host IS DISTINCT FROM '${HOST}'`,
    ),
    '0',
    "live claims are this host's",
  );
  assert.equal(sql(`SELECT count(*) FROM springfield.steps WHERE ${ours} AND status = 'claimed'`), '1');
  assert.equal(
    sql(
      `SELECT count(*) FROM springfield.epics WHERE ${ours} AND worktree_path IS NOT NULL AND worktree_host IS DISTINCT FROM '${HOST}'`,
    ),
    '0',
  );
  assert.equal(sql(`SELECT count(*) FROM springfield.runs WHERE ${ours} AND host IS DISTINCT FROM '${HOST}'`), '0');
  // Every id in event data names a row of this repository on the server.
  for (const [key, table] of [
    ['run_id', 'runs'],
    ['signal_id', 'signals'],
    ['artifact_id', 'artifacts'],
    ['note_id', 'planning_notes'],
    ['item_id', 'checklist_items'],
  ]) {
    const named = sql(
      `SELECT count(*) FROM springfield.events WHERE ${ours} AND data ? '${key}' AND data->>'${key}' IS NOT NULL`,
    );
    const found = sql(
      `SELECT count(*) FROM springfield.events e JOIN springfield.${table} r ON r.id = (e.data->>'${key}')::bigint AND r.repo_id = e.repo_id WHERE e.${ours} AND e.data ? '${key}'`,
    );
    assert.equal(found, named, `${key}: every id names its ${table} row`);
    assert.ok(Number(named) > 0, `some event names a ${key}`);
  }
  assert.equal(
    sql(
      `SELECT count(*) FROM springfield.verifications v JOIN springfield.runs r ON r.id = v.run_id AND r.repo_id = v.repo_id WHERE v.${ours}`,
    ),
    '1',
    'the verification follows its run',
  );
  const event = JSON.parse(
    sql(`SELECT data FROM springfield.events WHERE ${ours} AND entity = 'store' AND action = 'migrate'`),
  ) as { from: string; dump_sha256: string };
  assert.deepEqual(
    [event.from, event.dump_sha256],
    ['sqlite', there.dump_sha256],
    'a store/migrate event on the target',
  );

  // And back, into a new file: what the CLI shows is what it showed on the original file.
  const back = join(f.repo.tmp, 'back.db');
  const home = migrated(runJson(f.root, ['migrate', '--to', `sqlite:${back}`], onPg));
  assert.equal(existsSync(`${back}.migrating`), false);
  assert.match(
    home.set_on_every_clone,
    new RegExp(`unset SPRINGFIELD_DATABASE_URL .* export SPRINGFIELD_DB=${back.replace(/[.]/g, '\\.')}\\.$`),
  );
  assert.deepEqual(
    home.rows,
    { ...there.rows, events: there.rows.events + 1 },
    'every row came back, with the migrate event',
  );
  const onBack = { SPRINGFIELD_HOST: HOST, SPRINGFIELD_DB: back };
  assert.deepEqual(view(f.root, onBack, f.epic), onSqlite, 'the copy back shows what the original showed');
  const events = assertOk<{ events: { entity: string; action: string }[] }>(runJson(f.root, ['events'], onBack)).events;
  assert.deepEqual(
    events.filter((e) => e.entity === 'store').map((e) => e.action),
    ['migrate', 'migrate'],
    'both migrations are in the history',
  );
  const runIds = assertOk<{ runs: { id: number }[] }>(runJson(f.root, ['runs'], onBack))
    .runs.map((r) => r.id)
    .sort();
  assert.deepEqual(runIds, [1, 2], 'ids in the new file are 1…n');
  assertOk(runJson(f.wtB, ['heartbeat', 'plans/p.md', 'step-2'], { ...onBack, SPRINGFIELD_AGENT: 'ralph-2' }));

  // The shared store works: the live claim is this host's, and a claim continues where SQLite left off.
  assertFails(
    runJson(f.wtB, ['heartbeat', 'plans/p.md', 'step-2'], {
      ...onPg,
      SPRINGFIELD_HOST: 'host-b',
      SPRINGFIELD_AGENT: 'ralph-2',
    }),
    1,
    'not_holder',
  );
  assertOk(runJson(f.wtB, ['heartbeat', 'plans/p.md', 'step-2'], { ...onPg, SPRINGFIELD_AGENT: 'ralph-2' }));
  assert.equal(
    assertClaimed(runJson(f.wtB, ['claim', 'plans/p.md'], { ...onPg, SPRINGFIELD_AGENT: 'ralph-3' })).step_anchor,
    'step-3',
  );
  const again = migrated(runJson(f.root, ['migrate', '--to', newDatabase()], onBack));
  assert.equal(
    again.rows.events,
    home.rows.events + 2,
    'the copy back migrates on again (its heartbeat and migrate events included)',
  );
});

test('refusals: rows already there, an existing file, a bad URL, no state: exit and one line, nothing changed', async (t) => {
  const f = await sqliteState(t);
  const url = newDatabase();
  const env = { SPRINGFIELD_HOST: HOST };
  migrated(runJson(f.root, ['migrate', '--to', url], env));
  const counts = pgCounts(url);
  const refused = assertFails(runJson(f.root, ['migrate', '--to', url], env), 1, 'repository_not_empty');
  assert.match(
    refused.message,
    /already holds repository [0-9a-f]{40} \(3 epics, 2 plans, 2 plan versions, 6 steps, 3 dependencies, .*, 1 debt entry, 1 planning note, \d+ events\); migrate never merges: nothing was written$/,
  );
  assert.equal(pgCounts(url), counts, 'nothing was written');

  const onPg = { SPRINGFIELD_HOST: HOST, SPRINGFIELD_DATABASE_URL: url };
  const before = fileHash(f.db);
  assertFails(runJson(f.root, ['migrate', '--to', 'sqlite'], onPg), 1, 'target_exists');
  assertFails(runJson(f.root, ['migrate', '--to', `sqlite:${f.db}`], onPg), 1, 'target_exists');
  assert.equal(fileHash(f.db), before, 'the existing file is untouched');
  assert.equal(existsSync(`${f.db}.migrating`), false);

  assertFails(runJson(f.root, ['migrate', '--to', 'mysql://db.example.com/x'], env), 2, 'bad_target');
  assertFails(runJson(f.root, ['migrate'], env), 2, 'missing_argument');
  const missing = assertFails(
    runJson(f.root, ['migrate', '--to', url.replace(/\/migrate_\d+\?/, '/no_such_db?')], env),
    3,
    'database_missing',
  );
  assert.ok(
    !missing.message.includes(/:\/\/[^:]+:([^@]+)@/.exec(url)?.[1] ?? '\0'),
    'the password is not in the message',
  );
  assertFails(runJson(f.root, ['migrate', '--to', 'sqlite'], env), 2, 'no_postgres');

  const fresh = makeRepo({ files: { 'plans/p.md': PLAN } });
  t.after(() => fresh.cleanup());
  const none = assertFails(runJson(fresh.root, ['migrate', '--to', url], env), 1, 'nothing_to_migrate');
  assert.match(none.message, /\.springfield\/state\.db does not exist/);
  assert.equal(pgCounts(url), counts);
  assertFails(
    runJson(fresh.root, ['migrate', '--to', 'sqlite'], { ...env, SPRINGFIELD_DATABASE_URL: url }),
    1,
    'nothing_to_migrate',
  );
  assert.equal(existsSync(join(fresh.root, '.springfield')), false, 'nothing was created');
});

test('the compare catches a copy the server changed: exit 3 naming the table and row, the target left empty', async (t) => {
  const f = await sqliteState(t);
  const url = newDatabase();
  const env = { SPRINGFIELD_HOST: HOST };
  const dbName = /\/(\w+)\?/.exec(url)?.[1] ?? '';
  // The schema exists once any command has opened the server; then a trigger corrupts one step on its way in.
  assertOk(runJson(f.root, ['epic', 'list'], { ...env, SPRINGFIELD_DATABASE_URL: url }));
  pgServer.server.psql(
    `CREATE FUNCTION springfield.corrupt() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.title := 'Tampered'; RETURN NEW; END $$;
    CREATE TRIGGER corrupt BEFORE INSERT ON springfield.steps FOR EACH ROW WHEN (NEW.anchor = 'step-3') EXECUTE FUNCTION springfield.corrupt()`,
    dbName,
  );
  // In text mode the progress goes to stdout, so stderr is the error's one line.
  const failed = runCli(f.root, ['migrate', '--to', url], env);
  assert.equal(failed.code, 3, failed.stderr);
  assert.match(
    failed.stderr,
    /^springfield: the copy in PostgreSQL differs from the SQLite state: table steps, row 4 \(plan_path plans\/p\.md, anchor step-3\): title is "Compare" in SQLite and "Tampered" in PostgreSQL; rolled back, nothing was written\n$/,
  );
  assert.ok(!failed.stdout.includes('    at ') && !failed.stdout.includes('Migrated'), failed.stdout);
  assert.equal(pgCounts(url), '0 0 0 0 0 0 0 0 0 0 0 0 0 0', 'the target is empty');

  pgServer.server.psql('DROP TRIGGER corrupt ON springfield.steps', dbName);
  migrated(runJson(f.root, ['migrate', '--to', url], env));
});
