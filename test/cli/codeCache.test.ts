import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheDir } from '../../src/cli/fastPath/codeCache.ts';
import { assertOk, ensureCli, makeRepo, runCli, type CliResult, type Repo } from '../helpers/gitRepo.ts';

const PLAN =
  '# Plan: Cache\n\n## Step 1: One {#one}\n\n**Tasks:**\n- [ ] a\n\n## Step 2: Two {#two}\n\n**Tasks:**\n- [ ] b\n';

let repo: Repo;
let cacheRoot: string;
before(() => {
  ensureCli();
  repo = makeRepo({ files: { 'plans/p.md': PLAN } });
  cacheRoot = mkdtempSync(join(tmpdir(), 'sf-code-cache-'));
  ok(runCli(repo.root, ['init', 'plans/p.md']));
});
after(() => {
  repo.cleanup();
  rmSync(cacheRoot, { recursive: true, force: true });
});

/** Runs the CLI with Node's compile cache (and so Springfield's) in a directory of its own. */
function run(dir: string, args: readonly string[], env: Record<string, string | undefined> = {}): CliResult {
  return runCli(repo.root, args, { NODE_COMPILE_CACHE: dir, NODE_DISABLE_COMPILE_CACHE: undefined, ...env });
}

/** A text command's success: exit 0, nothing on stderr. */
function ok(r: CliResult): void {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  assert.equal(r.stderr, '');
}

const USER_DIR = process.getuid ? `springfield-${process.getuid()}` : 'springfield';

/** Springfield's cache files under a compile cache directory (one folder per runtime). */
function cacheFiles(dir: string): string[] {
  const ours = join(dir, USER_DIR);
  if (!existsSync(ours)) return [];
  return readdirSync(ours).flatMap((runtime) => readdirSync(join(ours, runtime)).map((f) => join(ours, runtime, f)));
}

function freshDir(name: string): string {
  return join(cacheRoot, name);
}

test('a step command writes a code cache once, private to the user, and later runs use it unchanged', () => {
  const dir = freshDir('once');
  const first = run(dir, ['show', '--json']);
  assertOk(first);
  const files = cacheFiles(dir);
  assert.equal(files.length, 1, `one cache file: ${files.join(', ')}`);
  const file = files[0] as string;
  assert.match(file, /-show-\d+-\d+\.cache$/, 'named by command and by the bundle version');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(statSync(join(file, '..')).mode & 0o777, 0o700);
  assert.equal(statSync(join(file, '..', '..')).mode & 0o777, 0o700, 'the per-user directory is private');
  assert.deepEqual(
    readdirSync(join(file, '..')).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file left behind',
  );
  assert.equal(join(file, '..'), cacheDir({ NODE_COMPILE_CACHE: dir }), 'in the directory cacheDir names');
  const written = readFileSync(file);
  const mtime = statSync(file).mtimeMs;

  const second = run(dir, ['show', '--json']);
  assert.equal(second.stdout, first.stdout, 'same output with the cache');
  assert.equal(statSync(file).mtimeMs, mtime, 'an accepted cache is not rewritten');
  assert.deepEqual(readFileSync(file), written);

  assertOk(run(dir, ['ready', 'plans/p.md', '--json']));
  assert.equal(cacheFiles(dir).length, 2, 'each command keeps its own');
});

test('a corrupt cache is rejected by V8 and replaced; the command runs as if there were none', () => {
  const dir = freshDir('corrupt');
  const clean = assertOk<{ plans: unknown[] }>(run(dir, ['show', '--json']));
  const file = cacheFiles(dir)[0] as string;
  const garbage = Buffer.alloc(4096, 0x5a);
  writeFileSync(file, garbage);

  const again = assertOk<{ plans: unknown[] }>(run(dir, ['show', '--json']));
  assert.deepEqual(again, clean);
  assert.notDeepEqual(readFileSync(file), garbage, 'rewritten after V8 rejected it');
  assertOk(run(dir, ['show', '--json']));
});

test('a failed run writes no cache; NODE_DISABLE_COMPILE_CACHE=1 turns it off', () => {
  const failed = freshDir('failed');
  const r = run(failed, ['claim', 'plans/missing.md']);
  assert.equal(r.code, 2, r.stderr);
  assert.deepEqual(cacheFiles(failed), []);

  const disabled = freshDir('disabled');
  ok(run(disabled, ['show'], { NODE_DISABLE_COMPILE_CACHE: '1' }));
  assert.deepEqual(cacheFiles(disabled), []);
});

test('caches of other versions of the bundle are removed when a new one is written', () => {
  const dir = freshDir('stale');
  ok(run(dir, ['--version']));
  const file = cacheFiles(dir)[0] as string;
  const stale = file.replace(/-\d+-\d+\.cache$/, '-1-1.cache');
  const otherCommand = file.replace('-version-', '-events-').replace(/-\d+-\d+\.cache$/, '-1-1.cache');
  rmSync(file);
  writeFileSync(stale, 'old', { mode: 0o600 });
  writeFileSync(otherCommand, 'old', { mode: 0o600 });

  ok(run(dir, ['--version']));
  assert.equal(existsSync(stale), false, 'the same command, another version of the bundle: removed');
  assert.equal(existsSync(otherCommand), true, "another command's cache is not this run's to remove");
  assert.equal(existsSync(file), true);
});

test(
  "a cache file owned by another user is never read (it would run as this user's code)",
  { skip: process.getuid?.() !== 0 && 'needs root to hand a file to another user' },
  () => {
    const dir = freshDir('foreign');
    ok(run(dir, ['show']));
    const file = cacheFiles(dir)[0] as string;
    chownSync(file, 65534, 65534);

    ok(run(dir, ['show']));
    assert.equal(statSync(file).uid, 0, 'not used: replaced by one of our own');
  },
);

test(
  'the cache directory follows Node: NODE_COMPILE_CACHE, else node-compile-cache in the temporary directory, one folder per user; none when disabled',
  { skip: process.platform === 'win32' && 'POSIX temporary directory rules' },
  () => {
    const runtime = `${USER_DIR}/${process.version}-${process.arch}`;
    assert.equal(cacheDir({ NODE_COMPILE_CACHE: '/c' }), `/c/${runtime}`);
    assert.equal(cacheDir({ TMPDIR: '/scratch/' }), `/scratch/node-compile-cache/${runtime}`);
    assert.equal(cacheDir({ TMP: '/t' }), `/t/node-compile-cache/${runtime}`);
    assert.equal(cacheDir({}), `/tmp/node-compile-cache/${runtime}`);
    assert.equal(cacheDir({ NODE_COMPILE_CACHE: '/c', NODE_DISABLE_COMPILE_CACHE: '1' }), undefined);
  },
);

/** Everything under `dir`, recursively (paths relative to it). */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

test(
  'a cache directory planted as a link (old or new name) is never written through',
  { skip: process.platform === 'win32' && 'POSIX links' },
  () => {
    const dir = freshDir('planted-link');
    const victim = freshDir('victim');
    mkdirSync(dir, { recursive: true });
    mkdirSync(victim, { recursive: true });
    writeFileSync(join(victim, 'precious'), 'keep me');
    for (const name of ['springfield', USER_DIR]) symlinkSync(victim, join(dir, name));

    ok(run(dir, ['show']));
    ok(run(dir, ['show']));

    assert.deepEqual(tree(victim), ['precious'], 'nothing was written into the directory the links point at');
    assert.equal(readFileSync(join(victim, 'precious'), 'utf8'), 'keep me');
    assert.equal(lstatSync(join(dir, USER_DIR)).isSymbolicLink(), true, 'the link is left alone');
  },
);

test(
  'a cache directory another user owns (or may write) in the shared temporary directory is not written into',
  { skip: process.getuid?.() !== 0 && 'needs root to hand a directory to another user' },
  () => {
    const dir = freshDir('foreign-dir');
    for (const name of ['springfield', USER_DIR]) {
      const planted = join(dir, name, `${process.version}-${process.arch}`);
      mkdirSync(planted, { recursive: true, mode: 0o777 });
      for (const d of [join(dir, name), planted]) {
        chmodSync(d, 0o777);
        chownSync(d, 65534, 65534);
      }
    }

    ok(run(dir, ['show']));

    for (const name of ['springfield', USER_DIR])
      assert.deepEqual(tree(join(dir, name)), [`${process.version}-${process.arch}`], `${name}: nothing written`);

    const mine = freshDir('writable-by-others');
    mkdirSync(join(mine, USER_DIR), { recursive: true });
    chmodSync(join(mine, USER_DIR), 0o777);
    ok(run(mine, ['show']));
    assert.deepEqual(cacheFiles(mine), [], 'our own directory, but others may write it: no cache');
  },
);

/** Runs the CLI with no NODE_COMPILE_CACHE and the temporary directory `tmp`: the caches' default place is `tmp/node-compile-cache`. */
function runInTmp(tmp: string, args: readonly string[]): CliResult {
  return runCli(repo.root, args, {
    TMPDIR: tmp,
    TMP: undefined,
    TEMP: undefined,
    NODE_COMPILE_CACHE: undefined,
    NODE_DISABLE_COMPILE_CACHE: undefined,
  });
}

/** A command of the whole CLI (ES modules under Node's compile cache) and a step command (Springfield's code cache). */
const BOTH_KINDS: readonly (readonly string[])[] = [
  ['epic', 'list', '--json'],
  ['show', '--json'],
];

test(
  "the whole CLI's compile cache is kept in the private per-user folder, not in the shared node-compile-cache",
  { skip: process.platform === 'win32' && 'POSIX temporary directory rules' },
  () => {
    const tmp = freshDir('tmp-normal');
    mkdirSync(tmp, { recursive: true });
    for (const args of BOTH_KINDS) assertOk(runInTmp(tmp, args));
    const shared = join(tmp, 'node-compile-cache');
    assert.deepEqual(readdirSync(shared), [USER_DIR], 'nothing but the per-user folder in the shared one');
    assert.equal(statSync(shared).mode & 0o777, 0o700, 'made private when Springfield makes it');
    const nodeCaches = readdirSync(join(shared, USER_DIR)).filter((f) => f !== `${process.version}-${process.arch}`);
    assert.equal(nodeCaches.length, 1, `Node's compile cache beside Springfield's: ${nodeCaches.join(', ')}`);
    assert.ok(
      readdirSync(join(shared, USER_DIR, nodeCaches[0] as string)).length > 0,
      'the whole CLI still caches what it compiles',
    );
    assert.equal(
      readdirSync(join(shared, USER_DIR, `${process.version}-${process.arch}`)).length,
      1,
      'and the step command its code cache',
    );

    const nodeMade = freshDir('tmp-node-made');
    mkdirSync(join(nodeMade, 'node-compile-cache'), { recursive: true });
    chmodSync(join(nodeMade, 'node-compile-cache'), 0o755);
    for (const args of BOTH_KINDS) assertOk(runInTmp(nodeMade, args));
    assert.equal(
      readdirSync(join(nodeMade, 'node-compile-cache', USER_DIR)).length,
      2,
      'a node-compile-cache of ours that others may read (as Node makes it) is used',
    );
  },
);

test('NODE_COMPILE_CACHE is honoured as before: both caches live under it', () => {
  const dir = freshDir('node-compile-cache-set');
  for (const args of BOTH_KINDS) assertOk(run(dir, args));
  assert.ok(
    readdirSync(dir).some((f) => f.startsWith(`${process.version}-`)),
    `Node's own cache in NODE_COMPILE_CACHE: ${readdirSync(dir).join(', ')}`,
  );
  assert.equal(cacheFiles(dir).length, 1);
});

test(
  'a node-compile-cache planted in the temporary directory (writable by others, or a link) is never written through',
  { skip: process.platform === 'win32' && 'POSIX links and modes' },
  () => {
    const writable = freshDir('tmp-writable');
    mkdirSync(join(writable, 'node-compile-cache'), { recursive: true });
    chmodSync(join(writable, 'node-compile-cache'), 0o777);
    const linked = freshDir('tmp-linked');
    const victim = freshDir('tmp-victim');
    mkdirSync(linked, { recursive: true });
    mkdirSync(victim, { recursive: true });
    writeFileSync(join(victim, 'precious'), 'keep me');
    symlinkSync(victim, join(linked, 'node-compile-cache'));

    for (const args of BOTH_KINDS) {
      assertOk(runInTmp(writable, args));
      assertOk(runInTmp(linked, args));
    }
    assert.deepEqual(tree(join(writable, 'node-compile-cache')), [], 'nothing written into the world-writable folder');
    assert.deepEqual(tree(victim), ['precious'], 'nothing written through the link');
    assert.equal(lstatSync(join(linked, 'node-compile-cache')).isSymbolicLink(), true, 'the link is left alone');
  },
);

test(
  'a node-compile-cache another user owns in the temporary directory is never written into',
  { skip: process.getuid?.() !== 0 && 'needs root to hand a directory to another user' },
  () => {
    const tmp = freshDir('tmp-foreign');
    const planted = join(tmp, 'node-compile-cache');
    mkdirSync(planted, { recursive: true });
    chmodSync(planted, 0o755);
    chownSync(planted, 65534, 65534);
    for (const args of BOTH_KINDS) assertOk(runInTmp(tmp, args));
    assert.deepEqual(tree(planted), [], 'nothing written into it (as root, its mode would not have stopped us)');
  },
);
