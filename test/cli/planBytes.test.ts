import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { lazyPlanSource } from '../../src/core/plan/source.ts';
import { SqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import type { ClaimResult } from '../../src/core/store/types.ts';
import { closeSqlite, sqliteOf } from '../helpers/sqlite.ts';
import {
  assertClaimed,
  assertFails,
  assertOk,
  ensureCli,
  makeRepo,
  runJson,
  showSteps,
  type Repo,
} from '../helpers/gitRepo.ts';
import { P, PLAN, showStepSuite } from '../helpers/showStepSuite.ts';

// docs/cli-cost.md: a step command skips the parse when the plan file's bytes are the ones the store
// last saw with its structure. These tests hold drift detection exact around that shortcut.

before(() => ensureCli());

/** A whole second, so the modification time is put back exactly at any file system's resolution. */
const MTIME = 1_700_000_000;

/** Rewrites the plan in place with the same length and puts its modification time back to MTIME. */
function editKeepingSizeAndTime(file: string, from: string, to: string): void {
  assert.equal(from.length, to.length, 'the edit keeps the size');
  utimesSync(file, MTIME, MTIME);
  const before = statSync(file);
  const text = readFileSync(file, 'utf8');
  assert.ok(text.includes(from), `plan has no '${from}'`);
  writeFileSync(file, text.replace(from, to));
  utimesSync(file, MTIME, MTIME);
  const now = statSync(file);
  assert.equal(now.size, before.size);
  assert.equal(now.mtimeMs, before.mtimeMs);
  assert.equal(now.ino, before.ino, 'the same file, rewritten in place');
}

function storedBytes(repo: Repo): Buffer | null {
  const db = new Database(join(repo.root, '.springfield', 'state.db'), { readonly: true });
  try {
    return db.prepare('SELECT source FROM plan_files WHERE plan_path = ?').pluck().get(P) as Buffer | null;
  } finally {
    db.close();
  }
}

describe('drift is exact when the plan file keeps its size and time', () => {
  let repo: Repo;
  before(() => {
    repo = makeRepo({ files: { [P]: PLAN } });
    assertOk(runJson(repo.root, ['init', P]));
  });
  after(() => repo.cleanup());

  test('init records the file bytes with the structure', () => {
    assert.deepEqual(storedBytes(repo), readFileSync(join(repo.root, P)));
  });

  test('a structure-equal edit (a ticked box) is accepted, and its bytes are recorded', () => {
    editKeepingSizeAndTime(join(repo.root, P), '- [ ] Write docs', '- [x] Write docs');
    const c = assertClaimed(runJson(repo.root, ['claim', P]));
    assert.equal(c.step_anchor, 'step-1');
    assert.deepEqual(storedBytes(repo), readFileSync(join(repo.root, P)));
    assertOk(runJson(repo.root, ['update', P, 'step-1', '--all', 'completed']));
  });

  test('a structural edit of the same size with the time put back is refused by claim, update and complete', () => {
    const recorded = storedBytes(repo);
    editKeepingSizeAndTime(join(repo.root, P), '## Step 3: Docs {#step-3}', '## Step 3: Doxs {#step-3}');
    for (const args of [
      ['claim', P],
      ['update', P, 'step-1', '--all', 'open'],
      ['complete', P, 'step-1'],
    ]) {
      const error = assertFails(runJson(repo.root, args), 1, 'plan_drift');
      assert.ok(error.message.includes('step-3 title changed'), error.message);
    }
    assert.deepEqual(storedBytes(repo), recorded, 'refused calls record nothing');
    assert.equal(showSteps(repo.root, P).get('step-1')?.status, 'claimed');
  });

  test('after init --force, the bytes of the old structure are drift again', () => {
    const file = join(repo.root, P);
    const edited = readFileSync(file);
    assertOk(runJson(repo.root, ['init', P, '--force']));
    assert.deepEqual(storedBytes(repo), edited);
    editKeepingSizeAndTime(file, '## Step 3: Doxs {#step-3}', '## Step 3: Docs {#step-3}');
    const error = assertFails(runJson(repo.root, ['claim', P]), 1, 'plan_drift');
    assert.ok(error.message.includes('step-3 title changed: "Doxs" → "Docs"'), error.message);
  });
});

describe('the store skips the parse only for bytes it has seen with the structure', () => {
  let dir: string;
  let file: string;
  let store: SqliteStore;
  const actor = { worktree: '/wt/a', agent: null };
  /** A source whose plan cannot be parsed without the test noticing. */
  const unparsed = (): { source: ReturnType<typeof lazyPlanSource>; parsed: () => boolean } => {
    const real = lazyPlanSource(file, P, P);
    let parsed = false;
    return {
      source: {
        planPath: P,
        bytes: real.bytes,
        get plan() {
          parsed = true;
          return real.plan;
        },
      },
      parsed: () => parsed,
    };
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'springfield-bytes-'));
    file = join(dir, 'plan.md');
    writeFileSync(file, PLAN);
    store = new SqliteStore(join(dir, 'state.db'));
  });
  after(() => {
    closeSqlite(store);
    void store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('recorded bytes: claimed without parsing; other bytes: parsed, then recorded', async () => {
    await store.initPlan(lazyPlanSource(file, P, P), actor);
    const first = unparsed();
    const c: ClaimResult = await store.claimNext(first.source, actor);
    assert.equal(c.claimed, true);
    assert.equal(first.parsed(), false, 'the bytes init recorded are not parsed again');
    assert.deepEqual(
      c.claimed && c.substeps,
      ['step-1-1'],
      'substeps are claimed with their step without the parsed plan',
    );

    writeFileSync(file, PLAN.replace('- [ ] Write docs', '- [x] Write docs'));
    const second = unparsed();
    assert.equal((await store.claimNext(second.source, actor)).claimed, true);
    assert.equal(second.parsed(), true, 'new bytes are parsed and compared');
    const third = unparsed();
    await store.claimNext(third.source, actor);
    assert.equal(third.parsed(), false, 'and then recorded');
  });

  test('a database from before the bytes were kept parses, then records them', async () => {
    sqliteOf(store).prepare('UPDATE plan_files SET source = NULL').run();
    const s = unparsed();
    const r = await store.claimNext(s.source, actor);
    assert.equal(s.parsed(), true);
    assert.equal(r.claimed, false);
    assert.deepEqual(sqliteOf(store).prepare('SELECT source FROM plan_files').pluck().get(), readFileSync(file));
  });
});

showStepSuite('sqlite', () => ({}));
