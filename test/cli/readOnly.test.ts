import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  assertFails,
  assertOk,
  CLI_PATH,
  cleanEnv,
  ensureCli,
  makeRepo,
  runJson,
  type CliResult,
  type Repo,
} from '../helpers/gitRepo.ts';

const P = 'plans/p.md';
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

/** Why the CLI cannot be run as another user here (not root; or the checkout sits in a folder only its owner may enter), or false. */
function cannotRunAsNobody(): string | false {
  if (!asRoot) return 'needs root to run the CLI as another user';
  ensureCli();
  const r = spawnSync(process.execPath, [CLI_PATH, '--version'], {
    uid: NOBODY,
    gid: NOBODY,
    encoding: 'utf8',
    cwd: '/',
  });
  if (r.error || r.status !== 0)
    return `another user cannot run ${CLI_PATH} here (${r.error?.message ?? r.stderr.trim()}): the checkout is in a private folder`;
  return false;
}

/** Runs the CLI as another user (uid 65534), who may read the repository but write none of it. */
function asNobody(cwd: string, args: readonly string[]): CliResult {
  const r = spawnSync(process.execPath, [CLI_PATH, ...args, '--json'], {
    cwd,
    uid: NOBODY,
    gid: NOBODY,
    encoding: 'utf8',
    env: cleanEnv({ HOME: '/nonexistent', NODE_DISABLE_COMPILE_CACHE: '1' }),
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, json: <T>() => JSON.parse(r.stdout) as T };
}

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

// Read-only commands open the database read-only, so someone who may read it but not write it (another
// user, a read-only mount, a checkout owned by someone else) can still look.
describe('read-only commands on a database this user cannot write', { skip: cannotRunAsNobody() }, () => {
  let repo: Repo;
  let db: string;
  before(() => {
    ensureCli();
    repo = makeRepo({ files: { [P]: '# Plan: Ro\n\n## Step 1: One\n- [ ] a\n\n## Step 2: Two\n- [ ] b\n' } });
    assertOk(runJson(repo.root, ['init', P]));
    assertOk(runJson(repo.root, ['epic', 'create', 'Look only']));
    chmodSync(repo.tmp, 0o755);
    db = join(repo.root, '.springfield', 'state.db');
    assert.deepEqual(readdirSync(join(repo.root, '.springfield')), ['state.db'], 'no writer is open: no -wal or -shm');
  });
  after(() => repo.cleanup());

  const reads = [['show'], ['show', P], ['ready', P], ['events', P], ['epic', 'list'], ['signals'], ['runs']];

  test('in a folder they cannot write either (a read-only mount): every read command works and nothing is written', () => {
    const before = sha(db);
    for (const args of reads) {
      const r = asNobody(repo.root, args);
      assert.equal(r.code, 0, `${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
      assert.equal(r.stderr, '');
    }
    assert.equal(asNobody(repo.root, ['show', P]).json<{ plans: { steps: unknown[] }[] }>().plans[0]?.steps.length, 2);
    assert.equal(sha(db), before);
    assert.deepEqual(readdirSync(join(repo.root, '.springfield')), ['state.db']);
  });

  test('in a folder they can write (a database file they may only read): read commands work', () => {
    chmodSync(join(repo.root, '.springfield'), 0o777);
    try {
      const before = sha(db);
      for (const args of reads) assert.equal(asNobody(repo.root, args).code, 0, args.join(' '));
      assert.equal(sha(db), before);
    } finally {
      chmodSync(join(repo.root, '.springfield'), 0o755);
    }
  });

  test('a write command says in one line that it cannot write, exit 3', () => {
    const r = asNobody(repo.root, ['claim', P]);
    const error = assertFails(r, 3, 'database_unavailable');
    assert.match(error.message, /state\.db/);
    assert.ok(!existsSync(`${db}-journal`));
  });
});
