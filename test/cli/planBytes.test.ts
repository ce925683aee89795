import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { SqlConnection } from '../../src/core/store/sqlite/sqlite.ts';
import { RefusedError } from '../../src/core/errors.ts';
import { planFileSource, SETTLED_MS, statKey } from '../../src/core/plan/source.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import type { Store } from '../../src/core/store/store.ts';
import type { ClaimResult } from '../../src/core/store/types.ts';
import { closeSqlite, sqliteOf } from '../helpers/sqlite.ts';
import { assertClaimed, assertFails, assertOk, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runJson, showSteps } from '../helpers/cliInProcess.ts';
import { P, PLAN, showStepSuite } from '../helpers/showStepSuite.ts';

// docs/cli-cost.md: a step command skips the parse when the plan file's bytes are the ones the store
// last saw with its structure. These tests hold drift detection exact around that shortcut.

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

/** claim, update and complete each refused for drift, naming step-3's changed title. */
async function assertDriftRefused(repo: Repo): Promise<void> {
  for (const args of [
    ['claim', P],
    ['update', P, 'step-1', '--all', 'open'],
    ['complete', P, 'step-1'],
  ]) {
    const error = assertFails(await runJson(repo.root, args), 1, 'plan_drift');
    assert.ok(error.message.includes('step-3 title changed'), error.message);
  }
}

function storedBytes(repo: Repo): Buffer | null {
  return inStore(
    repo,
    (db) => db.prepare('SELECT source FROM plan_files WHERE plan_path = ?').pluck().get(P) as Buffer | null,
  );
}

function inStore<T>(repo: Repo, fn: (db: Database.Database) => T): T {
  const db = new Database(join(repo.root, '.springfield', 'state.db'));
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** Waits until the file's times are SETTLED_MS old: from then on its stat may vouch for its bytes. */
async function settle(file: string): Promise<void> {
  const st = statSync(file, { bigint: true });
  const changed = Number((st.ctimeNs > st.mtimeNs ? st.ctimeNs : st.mtimeNs) / 1_000_000n);
  const wait = changed + SETTLED_MS + 50 - Date.now();
  if (wait > 0) await sleep(wait);
}

interface StatRecord {
  readonly file: string;
  readonly stat: string;
  readonly plan_hash: string;
}

function statRecords(db: SqlConnection): StatRecord[] {
  return db.prepare('SELECT file, stat, plan_hash FROM plan_file_stats ORDER BY file').all() as StatRecord[];
}

describe('drift is exact when the plan file keeps its size and time', () => {
  let repo: Repo;
  before(async () => {
    repo = makeRepo({ files: { [P]: PLAN } });
    assertOk(await runJson(repo.root, ['init', P]));
  });
  after(() => repo.cleanup());

  test('init records the file bytes with the structure', () => {
    assert.deepEqual(storedBytes(repo), readFileSync(join(repo.root, P)));
  });

  test('a structure-equal edit (a ticked box) is accepted, and its bytes are recorded', async () => {
    editKeepingSizeAndTime(join(repo.root, P), '- [ ] Write docs', '- [x] Write docs');
    const c = assertClaimed(await runJson(repo.root, ['claim', P]));
    assert.equal(c.step_anchor, 'step-1');
    assert.deepEqual(storedBytes(repo), readFileSync(join(repo.root, P)));
    assertOk(await runJson(repo.root, ['update', P, 'step-1', '--all', 'completed']));
  });

  test('a structural edit of the same size with the time put back is refused by claim, update and complete', async () => {
    const recorded = storedBytes(repo);
    editKeepingSizeAndTime(join(repo.root, P), '## Step 3: Docs {#step-3}', '## Step 3: Doxs {#step-3}');
    await assertDriftRefused(repo);
    assert.deepEqual(storedBytes(repo), recorded, 'refused calls record nothing');
    assert.equal((await showSteps(repo.root, P)).get('step-1')?.status, 'claimed');
  });

  test('after init --force, the bytes of the old structure are drift again', async () => {
    const file = join(repo.root, P);
    const edited = readFileSync(file);
    assertOk(await runJson(repo.root, ['init', P, '--force']));
    assert.deepEqual(storedBytes(repo), edited);
    editKeepingSizeAndTime(file, '## Step 3: Doxs {#step-3}', '## Step 3: Docs {#step-3}');
    const error = assertFails(await runJson(repo.root, ['claim', P]), 1, 'plan_drift');
    assert.ok(error.message.includes('step-3 title changed: "Doxs" → "Docs"'), error.message);
  });
});

describe('the store skips the parse only for bytes it has seen with the structure', () => {
  let dir: string;
  let file: string;
  let store: Store;
  const actor = { worktree: '/wt/a', agent: null };
  /** A source whose plan cannot be parsed without the test noticing. */
  const unparsed = (): { source: ReturnType<typeof planFileSource>; parsed: () => boolean } => {
    const real = planFileSource(file, P, P);
    let parsed = false;
    return {
      source: {
        planPath: P,
        bytes: () => real.bytes(),
        plan: () => {
          parsed = true;
          return real.plan();
        },
      },
      parsed: () => parsed,
    };
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'springfield-bytes-'));
    file = join(dir, 'plan.md');
    writeFileSync(file, PLAN);
    store = sqliteStore(join(dir, 'state.db'));
  });
  after(() => {
    closeSqlite(store);
    void store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('recorded bytes: claimed without parsing; other bytes: parsed, then recorded', async () => {
    await store.initPlan(planFileSource(file, P, P), actor);
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

describe('an unchanged plan file is not read again (docs/cli-cost.md, "Unchanged plan files")', () => {
  let dir: string;
  let file: string;
  let store: Store;
  const actor = { worktree: '/wt/a', agent: null };
  /** A source over the real file that counts each read of its file and each use of its bytes or its plan. */
  const watched = (): { source: PlanSource; uses: () => number } => {
    const real = planFileSource(file, P, P);
    const realFile = real.file;
    assert.ok(realFile);
    let uses = 0;
    const counted = <T>(value: T): T => {
      uses++;
      return value;
    };
    return {
      source: {
        planPath: P,
        file: {
          path: realFile.path,
          stat: realFile.stat,
          readIfChanged: (recorded) => {
            const read = realFile.readIfChanged(recorded);
            return read === undefined ? undefined : counted(read);
          },
        },
        bytes: () => counted(real.bytes()),
        plan: () => counted(real.plan()),
      },
      uses: () => uses,
    };
  };
  const records = (): StatRecord[] => statRecords(sqliteOf(store));
  const planHash = (): string => String(sqliteOf(store).prepare('SELECT plan_hash FROM plans').pluck().get());
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'springfield-stat-'));
    file = join(dir, 'plan.md');
    writeFileSync(file, PLAN);
    store = sqliteStore(join(dir, 'state.db'));
    await store.initPlan(planFileSource(file, P, P), actor);
    await settle(file);
  });
  after(() => {
    closeSqlite(store);
    void store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a settled file whose bytes match is recorded with its stat and the plan hash; the next claim reads nothing', async () => {
    assert.deepEqual(records(), [], 'init records no stat');
    const first = watched();
    assert.equal((await store.claimNext(first.source, actor)).claimed, true);
    assert.ok(first.uses() > 0, 'the first claim reads the bytes');
    assert.deepEqual(records(), [{ file, stat: statKey(statSync(file, { bigint: true })), plan_hash: planHash() }]);

    const second = watched();
    assert.equal((await store.claimNext(second.source, actor)).claimed, true);
    assert.equal(second.uses(), 0, 'neither the bytes nor the plan were asked for');
  });

  test('a file changed since is read again; a change younger than SETTLED_MS is not recorded until it settles', async () => {
    const recorded = records();
    writeFileSync(file, PLAN.replace('- [ ] Write docs', '- [x] Write docs'));
    const fresh = watched();
    await store.claimNext(fresh.source, actor);
    assert.ok(fresh.uses() > 0, 'a new stat: the bytes are read');
    assert.deepEqual(records(), recorded, 'too recent to vouch for');
    const again = watched();
    await store.claimNext(again.source, actor);
    assert.ok(again.uses() > 0, 'still read while it is too recent');

    await settle(file);
    const settled = watched();
    await store.claimNext(settled.source, actor);
    assert.ok(settled.uses() > 0);
    assert.deepEqual(records(), [{ file, stat: statKey(statSync(file, { bigint: true })), plan_hash: planHash() }]);
    const after = watched();
    await store.claimNext(after.source, actor);
    assert.equal(after.uses(), 0);
  });

  test('a record whose hash is no longer the plan’s is not trusted: re-initialised elsewhere, this unchanged file is drift', async () => {
    const before = records();
    assert.equal(before.length, 1);
    const elsewhere = join(dir, 'elsewhere.md');
    writeFileSync(elsewhere, PLAN.replace('## Step 3: Docs {#step-3}', '## Step 3: Guides {#step-3}'));
    await store.initPlan(planFileSource(elsewhere, P, P), { worktree: '/wt/b', agent: null }, { force: true });
    assert.equal(before[0]?.stat, statKey(statSync(file, { bigint: true })), 'this file is unchanged');

    const w = watched();
    await assert.rejects(
      () => store.claimNext(w.source, actor),
      (err: unknown) =>
        err instanceof RefusedError && err.code === 'plan_drift' && err.message.includes('step-3 title changed'),
    );
    assert.ok(w.uses() > 0, 'the file was read and parsed to name the drift');
    assert.deepEqual(records(), before, 'a refused call records nothing');
  });
});

describe("claim, update and complete trust an unchanged file's stat, and only that", () => {
  let repo: Repo;
  let file: string;
  before(async () => {
    repo = makeRepo({ files: { [P]: PLAN } });
    file = join(repo.root, P);
    assertOk(await runJson(repo.root, ['init', P]));
    await settle(file);
    assertClaimed(await runJson(repo.root, ['claim', P]));
  });
  after(() => repo.cleanup());

  test('the first claim of the settled file recorded its stat; unchanged, the bytes are not compared again', async () => {
    assert.deepEqual(
      inStore(repo, (db) => statRecords(db).map((r) => [r.file, r.stat])),
      [[file, statKey(statSync(file, { bigint: true }))]],
    );
    // Recorded bytes that match nothing: a call that compared bytes would parse and record the file's own.
    inStore(repo, (db) => db.prepare("UPDATE plan_files SET source = x'00'").run());
    assertOk(await runJson(repo.root, ['update', P, 'step-1', '--task', '0', 'completed']));
    assert.deepEqual(storedBytes(repo), Buffer.from([0]), 'the stat vouched: no bytes compared');

    // The same bytes with a new change time (touch): compared, found equal in structure, recorded.
    const now = new Date();
    utimesSync(file, now, now);
    assertOk(await runJson(repo.root, ['update', P, 'step-1', '--task', '0', 'open']));
    assert.deepEqual(storedBytes(repo), readFileSync(file));
  });

  test('a settled record does not hide a same-size structural edit with the modification time put back', async () => {
    // A whole second, so the edit below can put the recorded modification time back exactly.
    utimesSync(file, MTIME, MTIME);
    await settle(file);
    assertOk(await runJson(repo.root, ['heartbeat', P, 'step-1']));
    assertOk(await runJson(repo.root, ['update', P, 'step-1', '--task', '0', 'completed']));
    const recorded = inStore(repo, statRecords);
    assert.equal(recorded[0]?.stat, statKey(statSync(file, { bigint: true })), 'the record is the file as it is');

    editKeepingSizeAndTime(file, '## Step 3: Docs {#step-3}', '## Step 3: Doxs {#step-3}');
    const [before, now] = [recorded[0]?.stat ?? '', statKey(statSync(file, { bigint: true }))].map((k) => k.split(':'));
    assert.deepEqual(
      now?.slice(0, 4),
      before?.slice(0, 4),
      'device, inode, size and modification time are the recorded ones',
    );
    assert.notEqual(now?.[4], before?.[4], 'only the change time tells');
    await assertDriftRefused(repo);
    assert.deepEqual(inStore(repo, statRecords), recorded, 'refused calls record nothing');
  });
});

showStepSuite('sqlite', () => ({}));
