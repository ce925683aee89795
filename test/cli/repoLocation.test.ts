import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EnvironmentError } from '../../src/core/errors.ts';
import { askGitForRepo, findRepoOnDisk, locateRepo } from '../../src/core/git/repo.ts';
import type { ClaimResult, InitResult, PlanView } from '../../src/core/store/types.ts';
import { assertFails, assertOk, cleanEnv, ensureCli, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';

const PLAN = [
  '# Plan: Six independent steps',
  '',
  ...[1, 2, 3, 4, 5, 6].flatMap((n) => [
    `## Step ${n}: Part ${n} {#step-${n}}`,
    '**Tasks:**',
    `- [ ] Build part ${n}`,
    '',
  ]),
].join('\n');

const FILES = { 'plans/p.md': PLAN, 'src/deep/keep.txt': 'x\n' };

before(() => ensureCli());

type Place = { readonly name: string; readonly cwd: string; readonly worktree: string; readonly plan: string };

describe('a repository with linked, nested and symlinked worktrees', () => {
  let repo: Repo;
  let places: Place[];

  before(() => {
    // Arrange: main worktree, linked worktrees a and b, a worktree nested inside a, a symlink to b.
    repo = makeRepo({ files: FILES, worktrees: ['a', 'b'] });
    const a = repo.worktree('a');
    const b = repo.worktree('b');
    const nested = repo.addWorktree('nested', join(a, 'inner'));
    const link = join(repo.tmp, 'link-to-b');
    symlinkSync(b, link);
    places = [
      { name: 'main worktree', cwd: repo.root, worktree: repo.root, plan: 'plans/p.md' },
      {
        name: 'subdirectory of main',
        cwd: join(repo.root, 'src', 'deep'),
        worktree: repo.root,
        plan: '../../plans/p.md',
      },
      { name: 'linked worktree', cwd: a, worktree: a, plan: 'plans/p.md' },
      { name: 'nested worktree', cwd: nested, worktree: nested, plan: 'plans/p.md' },
      { name: 'symlinked path to a worktree', cwd: link, worktree: b, plan: join(link, 'plans', 'p.md') },
      {
        name: 'subdirectory through the symlink',
        cwd: join(link, 'src', 'deep'),
        worktree: b,
        plan: '../../plans/p.md',
      },
    ];
  });
  after(() => repo.cleanup());

  test('locateRepo resolves the same real database path from every place', () => {
    // Arrange
    const expected = join(repo.root, '.springfield', 'state.db');

    for (const place of places) {
      // Act
      const loc = locateRepo(place.cwd, cleanEnv());

      // Assert
      assert.equal(loc.dbPath, expected, place.name);
      assert.equal(loc.mainRoot, repo.root, place.name);
      assert.equal(loc.commonDir, realpathSync(join(repo.root, '.git')), place.name);
      assert.equal(loc.worktreeRoot, place.worktree, `${place.name}: its own worktree root, real path`);
    }
  });

  test('reading .git from disk finds what git rev-parse finds, from every place', () => {
    for (const place of places) {
      const onDisk = findRepoOnDisk(place.cwd, cleanEnv());
      assert.ok(onDisk, `${place.name}: found without git`);
      assert.deepEqual(onDisk, askGitForRepo(place.cwd), place.name);
    }
  });

  test('the CLI reaches one database from every place: init from main, a claim from each place, one show lists them all', async () => {
    // Arrange
    const init = assertOk<InitResult>(await runCli(repo.root, ['init', 'plans/p.md', '--json']));
    assert.equal(init.steps_created, 6);

    // Act
    const claims: string[] = [];
    for (const place of places) {
      const c = assertOk<ClaimResult>(await runCli(place.cwd, ['claim', place.plan, '--json']));
      assert.ok(c.claimed, `${place.name} should claim a step`);
      assert.equal(c.plan_path, 'plans/p.md', `${place.name}: the plan is keyed repository-relative`);
      assert.equal(c.claimed_by, place.worktree, `${place.name}: the holder is the real worktree root`);
      claims.push(c.step_anchor);
    }

    // Assert
    assert.deepEqual(claims, ['step-1', 'step-2', 'step-3', 'step-4', 'step-5', 'step-6']);
    for (const place of places) {
      const { plans } = assertOk<{ plans: PlanView[] }>(await runCli(place.cwd, ['show', '--json']));
      assert.equal(plans.length, 1, place.name);
      assert.deepEqual(
        plans[0]?.steps.map((s) => [s.anchor, s.status, s.claimed_by]),
        places.map((p, i) => [`step-${i + 1}`, 'claimed', p.worktree]),
        place.name,
      );
    }
    const afterAll = assertOk<ClaimResult>(await runCli(repo.worktree('nested'), ['claim', 'plans/p.md', '--json']));
    assert.equal(afterAll.claimed, false);
  });

  test('only the main worktree holds a .springfield directory', () => {
    // Assert (after the previous test wrote through every place)
    assert.ok(existsSync(join(repo.root, '.springfield', 'state.db')));
    for (const name of ['a', 'b', 'nested']) {
      assert.equal(existsSync(join(repo.worktree(name), '.springfield')), false, name);
    }
    assert.equal(existsSync(join(repo.root, 'src', 'deep', '.springfield')), false);
  });
});

describe('a bare repository with linked worktrees', () => {
  let repo: Repo;
  before(() => {
    repo = makeRepo({ bare: true, files: FILES, worktrees: ['a', 'b'] });
  });
  after(() => repo.cleanup());

  test('locateRepo puts the database under the common dir', () => {
    // Act
    const fromA = locateRepo(repo.worktree('a'), cleanEnv());
    const fromB = locateRepo(repo.worktree('b'), cleanEnv());

    // Assert
    assert.equal(fromA.dbPath, join(repo.root, 'springfield', 'state.db'));
    assert.equal(fromA.commonDir, repo.root);
    assert.equal(fromA.mainRoot, null);
    assert.equal(fromA.worktreeRoot, repo.worktree('a'));
    assert.equal(fromB.dbPath, fromA.dbPath);
  });

  test('reading .git from disk finds what git finds in each worktree, and leaves the bare directory itself to git', () => {
    for (const wt of ['a', 'b'])
      assert.deepEqual(findRepoOnDisk(repo.worktree(wt), cleanEnv()), askGitForRepo(repo.worktree(wt)), wt);
    assert.equal(findRepoOnDisk(repo.root, cleanEnv()), undefined);
  });

  test('locateRepo from inside the bare repository directory itself', () => {
    const fromBare = locateRepo(repo.root, cleanEnv());
    assert.equal(fromBare.dbPath, join(repo.root, 'springfield', 'state.db'));
    assert.equal(fromBare.worktreeRoot, null);
  });

  test('the CLI in two worktrees shares <bare>/springfield/state.db', async () => {
    // Act
    assertOk(await runCli(repo.worktree('a'), ['init', 'plans/p.md', '--json']));
    const ca = assertOk<ClaimResult>(await runCli(repo.worktree('a'), ['claim', 'plans/p.md', '--json']));
    const cb = assertOk<ClaimResult>(await runCli(repo.worktree('b'), ['claim', 'plans/p.md', '--json']));

    // Assert
    assert.ok(existsSync(join(repo.root, 'springfield', 'state.db')));
    assert.equal(existsSync(join(repo.worktree('a'), '.springfield')), false);
    assert.ok(ca.claimed && cb.claimed);
    assert.deepEqual([ca.step_anchor, cb.step_anchor], ['step-1', 'step-2']);
    const { plans } = assertOk<{ plans: PlanView[] }>(await runCli(repo.worktree('b'), ['show', '--json']));
    assert.deepEqual(
      plans[0]?.steps.slice(0, 2).map((s) => s.claimed_by),
      [repo.worktree('a'), repo.worktree('b')],
    );
  });
});

describe('database overrides', () => {
  let repo: Repo;
  before(() => {
    repo = makeRepo({ files: FILES });
  });
  after(() => repo.cleanup());

  test('locateRepo honours SPRINGFIELD_DB, absolute or relative to the cwd', () => {
    // Act
    const absolute = locateRepo(repo.root, cleanEnv({ SPRINGFIELD_DB: '/somewhere/else.db' }));
    const relative = locateRepo(join(repo.root, 'src'), cleanEnv({ SPRINGFIELD_DB: 'x/state.db' }));

    // Assert
    assert.equal(absolute.dbPath, '/somewhere/else.db');
    assert.equal(relative.dbPath, join(repo.root, 'src', 'x', 'state.db'));
  });

  test('SPRINGFIELD_DB moves the CLI to another file, and --db wins over it', async () => {
    // Arrange
    const envDb = join(repo.tmp, 'env', 'state.db');
    const flagDb = join(repo.tmp, 'flag', 'state.db');

    // Act
    assertOk(await runCli(repo.root, ['init', 'plans/p.md', '--json'], { SPRINGFIELD_DB: envDb }));
    const viaFlag = assertOk<InitResult>(
      await runCli(repo.root, ['init', 'plans/p.md', '--json', '--db', '../flag/state.db'], { SPRINGFIELD_DB: envDb }),
    );

    // Assert
    assert.ok(existsSync(envDb));
    assert.ok(existsSync(flagDb), '--db is resolved against the cwd');
    assert.equal(viaFlag.already_initialized, false, '--db reached a fresh database, not the SPRINGFIELD_DB one');
    assert.equal(existsSync(join(repo.root, '.springfield', 'state.db')), false, 'the default location is untouched');
    const viaEnv = assertOk<{ plans: PlanView[] }>(
      await runCli(repo.root, ['show', '--json'], { SPRINGFIELD_DB: envDb }),
    );
    assert.equal(viaEnv.plans.length, 1);
  });
});

describe('outside any git repository', () => {
  let dir: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-nogit-')));
    mkdirSync(join(dir, 'plans'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const env = () => ({ GIT_CEILING_DIRECTORIES: dirname(dir) });

  test('locateRepo throws an EnvironmentError naming the directory', () => {
    assert.throws(
      () => locateRepo(dir, cleanEnv(env())),
      (err: unknown) => {
        assert.ok(err instanceof EnvironmentError);
        assert.equal(err.code, 'not_a_git_repository');
        assert.ok(err.message.includes(dir));
        return true;
      },
    );
  });

  for (const args of [['show'], ['init', 'plans/p.md'], ['claim', 'plans/p.md'], ['ready', 'plans/p.md']]) {
    test(`'${args.join(' ')}' exits 3 with one line naming the directory, and creates nothing`, async () => {
      // Act
      const text = await runCli(dir, args, env());
      const json = await runCli(dir, [...args, '--json'], env());

      // Assert
      assertFails(text, 3, 'not_a_git_repository');
      assert.equal(text.stdout, '');
      assert.ok(text.stderr.includes(dir), text.stderr);
      const error = assertFails(json, 3, 'not_a_git_repository');
      assert.ok(error.message.includes(dir));
      assert.deepEqual(readdirSync(dir), ['plans']);
    });
  }
});

describe('a submodule and a repository with a separate git dir', () => {
  let tmp: string;
  const git = (cwd: string, ...args: string[]): void => {
    const r = spawnSync('git', ['-c', 'protocol.file.allow=always', ...args], {
      cwd,
      env: cleanEnv(),
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  };
  before(() => {
    tmp = realpathSync(mkdtempSync(join(tmpdir(), 'sf-sub-')));
    const lib = makeRepo({ files: { 'lib.txt': 'lib\n' } });
    const app = makeRepo({ files: FILES });
    git(app.root, 'submodule', 'add', '-q', lib.root, 'vendor/lib');
    git(tmp, 'init', '-q', '--separate-git-dir', join(tmp, 'store.git'), join(tmp, 'work'));
    mkdirSync(join(tmp, 'work', 'src'));
    places = { app, lib, sub: join(app.root, 'vendor', 'lib'), work: join(tmp, 'work', 'src') };
  });
  let places: { app: Repo; lib: Repo; sub: string; work: string };
  after(() => {
    places.app.cleanup();
    places.lib.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('inside the submodule: its own git dir under the superproject (its config names the worktree), found on disk as git finds it', () => {
    const onDisk = findRepoOnDisk(places.sub, cleanEnv());
    const loc = locateRepo(places.sub, cleanEnv());

    assert.deepEqual(onDisk, askGitForRepo(places.sub));
    assert.equal(loc.commonDir, join(places.app.root, '.git', 'modules', 'vendor', 'lib'));
    assert.equal(loc.worktreeRoot, places.sub);
    assert.equal(loc.mainRoot, places.sub);
    assert.equal(loc.dbPath, join(places.sub, '.springfield', 'state.db'));
  });

  test('a worktree whose .git file points to a separate git dir', () => {
    const loc = locateRepo(places.work, cleanEnv());

    assert.deepEqual(findRepoOnDisk(places.work, cleanEnv()), askGitForRepo(places.work));
    assert.equal(loc.commonDir, join(tmp, 'store.git'));
    assert.equal(loc.worktreeRoot, join(tmp, 'work'));
  });
});

describe('a .springfield that is a symbolic link (a repository can commit one)', () => {
  let repo: Repo;
  let target: string;
  before(() => {
    repo = makeRepo({ files: FILES });
    target = join(repo.tmp, 'elsewhere');
    mkdirSync(target);
    symlinkSync(target, join(repo.root, '.springfield'));
  });
  after(() => repo.cleanup());

  test('every command refuses it in one line, exit 1, and nothing is written where it points', async () => {
    for (const args of [
      ['init', 'plans/p.md'],
      ['show', '--json'],
      ['epic', 'create', 'X'],
    ]) {
      const r = await runCli(repo.root, args);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.match(
        r.stderr,
        /\.springfield is a symbolic link \(to .*elsewhere\); .*remove the link, or set SPRINGFIELD_DB/,
      );
      assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
    }
    assert.deepEqual(readdirSync(target), []);
  });

  test('SPRINGFIELD_DB chosen by the person is used instead', async () => {
    const db = join(repo.tmp, 'mine', 'state.db');
    assertOk(await runCli(repo.root, ['init', 'plans/p.md', '--json'], { SPRINGFIELD_DB: db }));
    assert.ok(existsSync(db));
    assert.deepEqual(readdirSync(target), []);
  });
});
