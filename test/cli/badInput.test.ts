import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { once } from 'node:events';
import Database from 'better-sqlite3';
import type { ClaimResult, PlanView } from '../../src/core/store/types.ts';
import { assertFails, assertOk, cleanEnv, ensureCli, makeRepo, runCliAsync, type Repo } from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';

const P = 'plans/p.md';
const FILES = {
  [P]: '# Plan: Bad input\n\n## Step 1: First {#step-1}\n**Tasks:**\n- [ ] One\n- [ ] Two\n**Tests:**\n- [ ] Test one\n\n## Step 2: Second {#step-2}\n**Depends on:** #step-1\n- [ ] Three\n',
  'plans/other.md': '# Plan: Never initialised\n\n## Step 1: Only {#step-1}\n- [ ] Item\n',
  'plans/bad.md': '# Plan: Duplicate anchor\n\n## Step 1: First {#step-1}\n\n## Step 2: Second {#step-1}\n',
  'plans/empty.md': '',
};

before(() => ensureCli());

interface Fingerprint {
  readonly sha256: string;
  readonly walBytes: number;
  readonly dump: Record<string, unknown[]>;
}

/** Checkpoints the WAL into the file, then hashes the file and dumps every table's rows. */
function fingerprint(dbPath: string): Fingerprint {
  const db = new Database(dbPath, { fileMustExist: true });
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all() as string[];
    const dump: Record<string, unknown[]> = { user_version: [db.pragma('user_version', { simple: true })] };
    for (const t of tables) dump[t] = db.prepare(`SELECT * FROM "${t}" ORDER BY rowid`).all();
    const wal = `${dbPath}-wal`;
    return { sha256: sha256(dbPath), walBytes: existsSync(wal) ? statSync(wal).size : 0, dump };
  } finally {
    db.close();
  }
}

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

interface BadCase {
  readonly args: readonly string[];
  readonly code: string;
  readonly env?: Record<string, string>;
  /** A text the message must contain. */
  readonly says?: string;
}

const CASES: readonly BadCase[] = [
  { args: ['init'], code: 'missing_argument', says: '<plan>' },
  { args: ['init', P, '--frobnicate'], code: 'unknown_option', says: '--frobnicate' },
  { args: ['init', P, 'extra'], code: 'unexpected_argument' },
  { args: ['init', 'plans/missing.md'], code: 'invalid_plan', says: 'no such file' },
  { args: ['init', 'plans/bad.md'], code: 'invalid_plan', says: 'plans/bad.md:5:' },
  { args: ['init', '/etc/hostname'], code: 'plan_outside_worktree' },
  { args: ['claim', P, '--lease', 'abc'], code: 'bad_option', says: "'abc'" },
  { args: ['claim', P, '--lease'], code: 'missing_value' },
  { args: ['claim', P, '--lease', '10', '--lease', '20'], code: 'bad_option', says: '--lease given twice' },
  { args: ['claim', P, '--lease', '10', '--lease-duration', '10'], code: 'bad_option', says: '--lease given twice' },
  {
    args: ['claim', P, '--lease', '9007199254740993'],
    code: 'bad_option',
    says: "--lease needs a whole number up to 9007199254740991, got '9007199254740993'",
  },
  { args: ['heartbeat', P, 'step-1', '--token', '1', '--token', '1'], code: 'bad_option', says: '--token given twice' },
  {
    args: ['heartbeat', P, 'step-1', '--token', '99999999999999999999'],
    code: 'bad_option',
    says: "'99999999999999999999'",
  },
  {
    args: ['heartbeat', P, 'step-1'],
    env: { SPRINGFIELD_CLAIM_TOKEN: '9007199254740993' },
    code: 'bad_token',
    says: "SPRINGFIELD_CLAIM_TOKEN needs a whole number up to 9007199254740991, got '9007199254740993'",
  },
  {
    args: ['update', P, 'step-1', '--item', '9007199254740993', 'completed'],
    code: 'bad_option',
    says: "got '9007199254740993'",
  },
  { args: ['events', '--since', '18446744073709551616'], code: 'bad_option', says: "got '18446744073709551616'" },
  { args: ['events', '--limit', '5', '--limit', '6'], code: 'bad_option', says: '--limit given twice' },
  {
    args: ['signal', 'decide', '9007199254740993', '--decision', 'accept'],
    code: 'bad_argument',
    says: "<signal> needs a whole number up to 9007199254740991, got '9007199254740993'",
  },
  { args: ['claim', P, '--token', '1'], code: 'unknown_option' },
  { args: ['claim', 'plans/bad.md'], code: 'invalid_plan', says: 'duplicate' },
  { args: ['claim', 'plans/missing.md'], code: 'invalid_plan' },
  { args: ['claim', 'plans/other.md'], code: 'unknown_plan', says: 'not initialised' },
  { args: ['start', P], code: 'missing_argument', says: '<step>' },
  { args: ['start', P, 'step-99'], code: 'unknown_step', says: 'step-99' },
  { args: ['start', P, 'step-1', '--token', 'x'], code: 'bad_option' },
  { args: ['start', P, 'step-1'], env: { SPRINGFIELD_CLAIM_TOKEN: 'x' }, code: 'bad_token' },
  { args: ['start', 'plans/other.md', 'step-1'], code: 'unknown_plan' },
  { args: ['heartbeat', P], code: 'missing_argument' },
  { args: ['heartbeat', P, 'nope'], code: 'unknown_step' },
  { args: ['heartbeat', P, 'step-1', '--lease', 'abc'], code: 'bad_option' },
  { args: ['heartbeat', P, 'step-1', '--token', 'x'], code: 'bad_option' },
  { args: ['update', P, 'step-1'], code: 'missing_argument', says: 'at least one change' },
  { args: ['update', P, 'step-1', '--task', '0', 'done'], code: 'bad_option', says: "'done'" },
  { args: ['update', P, 'step-1', '--task', '2', 'completed'], code: 'unknown_item', says: 'has 2 tasks' },
  { args: ['update', P, 'step-1', '--task', '0', 'completed', '--test', '5', 'completed'], code: 'unknown_item' },
  { args: ['update', P, 'step-1', '--task', 'x', 'completed'], code: 'bad_option' },
  { args: ['update', P, 'step-1', '--task', '0'], code: 'missing_value' },
  { args: ['update', P, 'step-1', '--item', '99999', 'completed'], code: 'unknown_item' },
  { args: ['update', P, 'nope', '--all', 'completed'], code: 'unknown_step' },
  { args: ['update', 'plans/bad.md', 'step-1', '--all', 'completed'], code: 'invalid_plan' },
  { args: ['artifact', P, 'step-1', '--summary', 'no kind'], code: 'bad_option', says: '--kind' },
  { args: ['artifact', P, 'step-1', '--kind', 'note'], code: 'missing_value', says: '--summary' },
  { args: ['artifact', P, 'step-1', '--kind', 'Not A Kind', '--summary', 'x'], code: 'bad_option' },
  { args: ['artifact', P, 'step-1', '--kind', 'note', '--summary', '   '], code: 'missing_value' },
  { args: ['artifact', P, 'nope', '--kind', 'note', '--summary', 'x'], code: 'unknown_step' },
  { args: ['complete', P], code: 'missing_argument' },
  { args: ['complete', P, 'step-1', '--commit', 'zz'], code: 'unknown_commit', says: '--commit zz: no such commit' },
  { args: ['complete', P, 'step-1', '--commit', 'deadbeef'], code: 'unknown_commit', says: 'deadbeef' },
  { args: ['complete', P, 'step-1', '--commit=-q'], code: 'bad_option', says: "'-q'" },
  { args: ['init', 'plans/empty.md'], code: 'invalid_plan', says: 'plans/empty.md:1: plan has no steps' },
  { args: ['complete', P, 'step-1', '--force', ''], code: 'missing_value' },
  { args: ['complete', P, 'step-1', '--token', 'x'], code: 'bad_option' },
  { args: ['complete', P, 'nope', '--force', 'why'], code: 'unknown_step' },
  { args: ['complete', 'plans/bad.md', 'step-1', '--force', 'why'], code: 'invalid_plan' },
  { args: ['reset', P], code: 'missing_argument' },
  { args: ['reset', P, 'nope'], code: 'unknown_step' },
  { args: ['reset', P, 'step-1', '--bogus'], code: 'unknown_option' },
  { args: ['reset', 'plans/other.md', 'step-1'], code: 'unknown_plan' },
  { args: ['ready', 'plans/other.md'], code: 'unknown_plan' },
  { args: ['ready', P, 'extra'], code: 'unexpected_argument' },
  { args: ['show', 'plans/other.md'], code: 'unknown_plan' },
  { args: ['show', '--bogus'], code: 'unknown_option' },
  { args: ['show', P, 'extra'], code: 'unexpected_argument' },
  { args: ['events', '--since', 'abc'], code: 'bad_option' },
  { args: ['events', '--limit', '-1'], code: 'bad_option' },
  { args: ['events', 'plans/other.md'], code: 'unknown_plan' },
  { args: ['events', '--bogus'], code: 'unknown_option' },
  { args: ['frobnicate'], code: 'unknown_command', says: 'frobnicate' },
];

// The 10 s lock test overlaps the bad-input cases: they use different repositories.
describe('bad input and unusable databases', { concurrency: true }, () => {
  describe('bad input: exit 2, one line, nothing written', { concurrency: 1 }, () => {
    let repo: Repo;
    let dbPath: string;
    before(async () => {
      // Arrange: an initialised plan whose step-1 is claimed by the main worktree (so holder checks pass).
      repo = makeRepo({ files: FILES });
      assertOk(await runCli(repo.root, ['init', P, '--json']));
      const c = assertOk<ClaimResult>(await runCli(repo.root, ['claim', P, '--json']));
      assert.ok(c.claimed);
      dbPath = join(repo.root, '.springfield', 'state.db');
    });
    after(() => repo.cleanup());

    for (const c of CASES) {
      test(`${c.args.join(' ')}${
        c.env
          ? ` (${Object.entries(c.env)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')})`
          : ''
      } → ${c.code}`, async () => {
        // Arrange
        const before = fingerprint(dbPath);

        // Act
        const text = await runCli(repo.root, c.args, c.env);
        const json = await runCli(repo.root, [...c.args, '--json'], c.env);

        // Assert
        assertFails(text, 2, c.code);
        assert.equal(text.stdout, '', 'without --json nothing goes to stdout');
        assert.notEqual(json.stdout, '', 'with --json the error document goes to stdout');
        const error = assertFails(json, 2, c.code);
        if (c.says) assert.ok(error.message.includes(c.says), `message should mention ${c.says}: ${error.message}`);
        assert.deepEqual(fingerprint(dbPath), before, 'the database must be unchanged');
      });
    }

    test('control: a successful write does change the fingerprint', async () => {
      const before = fingerprint(dbPath);
      assertOk(await runCli(repo.root, ['update', P, 'step-1', '--task', '0', 'in_progress', '--json']));
      assert.notDeepEqual(fingerprint(dbPath), before);
    });
  });

  describe('an unusable database: exit 3, one line, file unchanged', { concurrency: 1 }, () => {
    let repo: Repo;
    let dbPath: string;
    before(async () => {
      repo = makeRepo({ files: FILES });
      assertOk(await runCli(repo.root, ['init', P, '--json']));
      dbPath = join(repo.root, '.springfield', 'state.db');
    });
    after(() => repo.cleanup());

    const attempts = (db: string) => [
      ['show', '--db', db],
      ['claim', P, '--db', db],
      ['init', 'plans/other.md', '--db', db],
      ['ready', P, '--db', db],
    ];

    test('a database written by a newer Springfield is refused, never modified', async () => {
      // Arrange
      fingerprint(dbPath);
      const newer = join(repo.tmp, 'newer.db');
      copyFileSync(dbPath, newer);
      const db = new Database(newer);
      db.pragma('user_version = 999');
      db.close();
      const bytes = sha256(newer);

      for (const args of attempts(newer)) {
        // Act
        const text = await runCli(repo.root, args);
        const json = await runCli(repo.root, [...args, '--json']);

        // Assert
        assertFails(text, 3, 'schema_too_new');
        const error = assertFails(json, 3, 'schema_too_new');
        assert.match(error.message, /newer/);
        assert.match(error.message, /999/);
      }
      assert.equal(sha256(newer), bytes);
      assert.ok(!existsSync(`${newer}-wal`) || statSync(`${newer}-wal`).size === 0);
    });

    test('a corrupt database file is refused, never modified', async () => {
      // Arrange
      const corrupt = join(repo.tmp, 'corrupt.db');
      writeFileSync(corrupt, randomBytes(8192));
      const bytes = sha256(corrupt);

      for (const args of attempts(corrupt)) {
        // Act
        const text = await runCli(repo.root, args);
        const json = await runCli(repo.root, [...args, '--json']);

        // Assert
        assertFails(text, 3, 'database_corrupt');
        const error = assertFails(json, 3, 'database_corrupt');
        assert.ok(error.message.includes(corrupt), error.message);
      }
      assert.equal(sha256(corrupt), bytes);
      assert.equal(existsSync(`${corrupt}-wal`), false);
    });

    test(
      'a database locked by another process: writers give up with database_locked, readers still read',
      { timeout: 120_000 },
      async () => {
        // Arrange: a separate OS process holds BEGIN EXCLUSIVE until told to let go.
        const before = fingerprint(dbPath);
        const sqlitePath = createRequire(import.meta.url).resolve('better-sqlite3');
        const holder = spawn(
          process.execPath,
          [
            '-e',
            `
        const Database = require(process.argv[1]);
        const db = new Database(process.argv[2]);
        db.exec('BEGIN EXCLUSIVE');
        process.stdout.write('locked\\n');
        process.stdin.once('data', () => { db.exec('ROLLBACK'); db.close(); process.exit(0); });
      `,
            sqlitePath,
            dbPath,
          ],
          { env: cleanEnv(), stdio: ['pipe', 'pipe', 'inherit'] },
        );
        const exited = once(holder, 'exit');
        holder.stdin.on('error', () => {}); // it may already have exited
        try {
          const first = await Promise.race([
            once(holder.stdout, 'data').then(([d]) => String(d)),
            exited.then(([code]) => `holder exited early with ${String(code)}`),
          ]);
          assert.equal(first, 'locked\n');

          // Act
          const read = await runCli(repo.root, ['show', P, '--json']);
          const started = Date.now();
          const write = await runCliAsync(repo.root, ['claim', P, '--json']);
          const waited = Date.now() - started;

          // Assert
          const { plans } = assertOk<{ plans: PlanView[] }>(read);
          assert.equal(plans.length, 1, 'WAL readers are not blocked by a writer');
          const error = assertFails(write, 3, 'database_locked');
          assert.ok(error.message.includes(dbPath), error.message);
          assert.ok(
            waited >= 5000,
            `the busy timeout must be at least 5 s (docs/architecture.md), gave up after ${waited} ms`,
          );
        } finally {
          holder.stdin.end('done\n');
          await exited;
        }
        assert.deepEqual(fingerprint(dbPath), before);
      },
    );
  });
});

test('with no database yet, refused bad input creates none', async () => {
  const repo = makeRepo({ files: FILES });
  try {
    for (const args of [
      ['init', 'plans/bad.md'],
      ['claim', P, '--lease', 'abc'],
      ['show', P],
      ['ready', P],
      ['events', P],
    ]) {
      assert.equal((await runCli(repo.root, args)).code, 2, args.join(' '));
      assert.equal(existsSync(join(repo.root, '.springfield')), false, `${args.join(' ')} created .springfield/`);
    }
  } finally {
    repo.cleanup();
  }
});

test('a failed claim or start on an uninitialised plan creates no database', async () => {
  const repo = makeRepo({ files: FILES });
  try {
    for (const args of [
      ['claim', P],
      ['start', P, 'step-1'],
    ]) {
      assert.equal((await runCli(repo.root, args)).code, 2);
      assert.equal(existsSync(join(repo.root, '.springfield')), false, `${args.join(' ')} created .springfield/`);
    }
  } finally {
    repo.cleanup();
  }
});

test('an out-of-range --lease is bad input (exit 2), not an internal error', async () => {
  const repo = makeRepo({ files: FILES });
  try {
    assertOk(await runCli(repo.root, ['init', P, '--json']));
    assertFails(await runCli(repo.root, ['claim', P, '--lease', '9999999999999', '--json']), 2, 'bad_option');
  } finally {
    repo.cleanup();
  }
});
