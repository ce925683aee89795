import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheDir } from '../../src/cli/codeCache.ts';
import { assertOk, ensureCli, makeRepo, runCli, type CliResult, type Repo } from '../helpers/gitRepo.ts';

const PLAN = '# Plan: Cache\n\n## Step 1: One {#one}\n\n**Tasks:**\n- [ ] a\n\n## Step 2: Two {#two}\n\n**Tasks:**\n- [ ] b\n';

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
  assert.deepEqual(readdirSync(join(file, '..')).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left behind');
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

test("a cache file owned by another user is never read (it would run as this user's code)", { skip: process.getuid?.() !== 0 && 'needs root to hand a file to another user' }, () => {
  const dir = freshDir('foreign');
  ok(run(dir, ['show']));
  const file = cacheFiles(dir)[0] as string;
  chownSync(file, 65534, 65534);

  ok(run(dir, ['show']));
  assert.equal(statSync(file).uid, 0, 'not used: replaced by one of our own');
});

test('the cache directory follows Node: NODE_COMPILE_CACHE, else node-compile-cache in the temporary directory, one folder per user; none when disabled', { skip: process.platform === 'win32' && 'POSIX temporary directory rules' }, () => {
  const runtime = `${USER_DIR}/${process.version}-${process.arch}`;
  assert.equal(cacheDir({ NODE_COMPILE_CACHE: '/c' }), `/c/${runtime}`);
  assert.equal(cacheDir({ TMPDIR: '/scratch/' }), `/scratch/node-compile-cache/${runtime}`);
  assert.equal(cacheDir({ TMP: '/t' }), `/t/node-compile-cache/${runtime}`);
  assert.equal(cacheDir({}), `/tmp/node-compile-cache/${runtime}`);
  assert.equal(cacheDir({ NODE_COMPILE_CACHE: '/c', NODE_DISABLE_COMPILE_CACHE: '1' }), undefined);
});

/** Everything under `dir`, recursively (paths relative to it). */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

test('a cache directory planted as a link (old or new name) is never written through', { skip: process.platform === 'win32' && 'POSIX links' }, () => {
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
});

test("a cache directory another user owns (or may write) in the shared temporary directory is not written into", { skip: process.getuid?.() !== 0 && 'needs root to hand a directory to another user' }, () => {
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

  for (const name of ['springfield', USER_DIR]) assert.deepEqual(tree(join(dir, name)), [`${process.version}-${process.arch}`], `${name}: nothing written`);

  const mine = freshDir('writable-by-others');
  mkdirSync(join(mine, USER_DIR), { recursive: true });
  chmodSync(join(mine, USER_DIR), 0o777);
  ok(run(mine, ['show']));
  assert.deepEqual(cacheFiles(mine), [], 'our own directory, but others may write it: no cache');
});
