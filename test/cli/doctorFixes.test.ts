import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { migrations, SCHEMA_VERSION } from '../../src/core/store/sqlite/migrations.ts';
import { CLI_PATH, cleanEnv, ensureCli, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';

interface Finding {
  severity: 'error' | 'warning';
  code: string;
  fix: string;
  command: string | null;
}

interface Report {
  ok: boolean;
  checks: { name: string; status: string }[];
  findings: Finding[];
}

const P = 'plans/p.md';
const PLAN = '# Plan: Fixes\n\n## Step 1: One {#step-1}\n- [ ] one\n\n## Step 2: Two {#step-2}\n- [ ] two\n';
const hasSqlite3 = spawnSync('sqlite3', ['--version']).status === 0;

let bin: string;
const repos: Repo[] = [];
before(() => {
  ensureCli();
  // The suggested commands say `springfield …`: a shim on PATH runs this build.
  bin = mkdtempSync(join(tmpdir(), 'sf-doctor-bin-'));
  writeFileSync(join(bin, 'springfield'), `#!/bin/sh\nexec '${process.execPath}' '${CLI_PATH}' "$@"\n`);
  chmodSync(join(bin, 'springfield'), 0o755);
});
after(() => {
  rmSync(bin, { recursive: true, force: true });
  for (const r of repos) r.cleanup();
});

function repo(): Repo {
  const r = makeRepo({ files: { [P]: PLAN } });
  repos.push(r);
  return r;
}

const dbOf = (r: Repo) => join(r.root, '.springfield', 'state.db');

async function doctor(r: Repo, args: string[] = []): Promise<Report> {
  const out = await runCli(r.root, ['doctor', '--json', ...args]);
  assert.ok(out.code === 0 || out.code === 1, out.stderr);
  return out.json<Report>();
}

/** Runs each suggested command in the state doctor found it, as a person would paste it, in the main worktree. */
function runFixes(r: Repo, report: Report): void {
  const commands = report.findings.map((f) => f.command).filter((c): c is string => c !== null);
  assert.ok(commands.length > 0, `a command to run: ${JSON.stringify(report.findings)}`);
  for (const c of commands) {
    const run = spawnSync('sh', ['-c', c], {
      cwd: r.root,
      encoding: 'utf8',
      env: cleanEnv({ PATH: `${bin}:${process.env.PATH ?? ''}` }),
    });
    assert.equal(run.status, 0, `the suggested command failed: ${c}\n${run.stdout}${run.stderr}`);
  }
}

const codes = (report: Report) => report.findings.map((f) => f.code).sort();

describe('every command doctor suggests works in the state it was suggested for', () => {
  test('a directory where the database should be: moved aside; then init and reconcile rebuild the state', async () => {
    const r = repo();
    mkdirSync(dbOf(r), { recursive: true });
    const report = await doctor(r);
    assert.deepEqual(codes(report), ['database_is_directory']);
    assert.doesNotMatch(report.findings[0]?.fix ?? '', /recover|\.dump/, 'nothing to salvage from a directory');
    runFixes(r, report);
    assert.deepEqual(codes(await doctor(r)), ['no_database']);
    assert.equal((await runCli(r.root, ['init', P])).code, 0);
    assert.deepEqual((await doctor(r)).findings, []);
  });

  test('a file that is not a database: moved aside, never fed to a recovery tool', async () => {
    const r = repo();
    mkdirSync(join(r.root, '.springfield'));
    writeFileSync(dbOf(r), 'this is not a database\n'.repeat(200));
    const report = await doctor(r);
    assert.deepEqual(codes(report), ['not_a_database']);
    runFixes(r, report);
    assert.deepEqual(codes(await doctor(r)), ['no_database']);
    assert.equal(
      readdirSync(join(r.root, '.springfield')).filter((f) => f.startsWith('state.db.broken-')).length,
      1,
      'kept, aside',
    );
  });

  test('a database whose schema is damaged (doctor used to crash on it): reported, and moved aside', async () => {
    const r = repo();
    assert.equal((await runCli(r.root, ['init', P])).code, 0);
    const fd = openSync(dbOf(r), 'r+');
    writeSync(fd, Buffer.alloc(64, 0x5a), 0, 64, 100); // the schema table's page header, right after the file header
    closeSync(fd);
    const out = await runCli(r.root, ['doctor', '--json']);
    assert.equal(out.code, 1, out.stderr);
    const report = out.json<Report>();
    assert.deepEqual(codes(report), ['database_unreadable']);
    assert.match(report.findings[0]?.command ?? '', /^mv -- /);
    runFixes(r, report);
    assert.deepEqual(codes(await doctor(r)), ['no_database']);
  });

  test(
    'a damaged database: the salvage command copies what is readable, schema version included, into a database doctor passes',
    { skip: !hasSqlite3 && 'needs the sqlite3 tool' },
    async () => {
      const r = repo();
      assert.equal((await runCli(r.root, ['init', P])).code, 0);
      assert.equal((await runCli(r.root, ['claim', P])).code, 0);
      // Scribble over an index's pages: the tables (and so the state) stay readable, integrity_check fails.
      const db = new Database(dbOf(r));
      const root = db
        .prepare(`SELECT rootpage FROM sqlite_master WHERE name = 'idx_events_plan'`)
        .pluck()
        .get() as number;
      const pageSize = Number(db.pragma('page_size', { simple: true }));
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
      const fd = openSync(dbOf(r), 'r+');
      writeSync(fd, Buffer.alloc(64, 0x5a), 0, 64, (root - 1) * pageSize + 8);
      closeSync(fd);
      const report = await doctor(r);
      assert.deepEqual(codes(report), ['integrity_check_failed']);

      runFixes(r, report);

      const recovered = `${dbOf(r)}.recovered`;
      const check = (await runCli(r.root, ['doctor', '--json', '--db', recovered])).json<Report>();
      assert.deepEqual(check.findings, [], 'the salvaged database is whole');
      for (const f of readdirSync(join(r.root, '.springfield')))
        if (/-(wal|shm)$/.test(f)) rmSync(join(r.root, '.springfield', f));
      renameSync(recovered, dbOf(r));
      assert.deepEqual((await doctor(r)).findings, []);
      const shown = (await runCli(r.root, ['show', P, '--json'])).json<{ plans: { steps: { status: string }[] }[] }>();
      assert.deepEqual(
        shown.plans[0]?.steps.map((s) => s.status),
        ['claimed', 'pending'],
        'the claim survived',
      );
    },
  );

  test('a schema too new: nothing this Springfield would refuse is suggested (not reconcile, not prune)', async () => {
    const r = repo();
    assert.equal((await runCli(r.root, ['init', P])).code, 0);
    const db = new Database(dbOf(r));
    db.pragma('journal_mode = DELETE');
    db.pragma('user_version = 99');
    db.close();
    const report = await doctor(r);
    assert.deepEqual(codes(report), ['schema_too_new']);
    assert.deepEqual(
      report.findings.map((f) => f.command),
      [null],
    );
    assert.match(report.findings[0]?.fix ?? '', /newer Springfield/);
    assert.deepEqual(
      report.checks.filter((c) => c.status === 'skipped').map((c) => c.name),
      ['journal_mode', 'foreign_keys', 'orphaned_plans', 'expired_leases', 'missing_holders', 'plan_md'],
    );
    assert.equal((await runCli(r.root, ['reconcile'])).code, 3, 'and indeed reconcile is refused here');
  });

  test('an older schema: reconcile migrates it', async () => {
    const r = repo();
    mkdirSync(join(r.root, '.springfield'));
    const db = new Database(dbOf(r));
    db.pragma('journal_mode = WAL');
    for (let v = 0; v < SCHEMA_VERSION - 1; v++) db.exec(migrations()[v] ?? '');
    db.pragma(`user_version = ${SCHEMA_VERSION - 1}`);
    db.close();
    const report = await doctor(r);
    assert.deepEqual(codes(report), ['schema_outdated']);
    runFixes(r, report);
    assert.deepEqual((await doctor(r)).findings, []);
  });

  test('journal mode not WAL: reconcile reopens it in WAL mode', async () => {
    const r = repo();
    assert.equal((await runCli(r.root, ['init', P])).code, 0);
    const db = new Database(dbOf(r));
    db.pragma('journal_mode = DELETE');
    db.close();
    const report = await doctor(r);
    assert.deepEqual(codes(report), ['journal_mode_not_wal']);
    runFixes(r, report);
    assert.deepEqual((await doctor(r)).findings, []);
    assert.ok(!existsSync(`${dbOf(r)}.recovered`));
  });
});
