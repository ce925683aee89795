// Conflicts that resolve themselves, in real git repositories: an epic's branch in its own worktree
// rebased onto a main that moved (rebaseOntoMain, as the merge queue and the refresh before a step do).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { RebaseConflict, rebaseOntoMain, type Resolving } from '../../src/core/orchestrate/merge.ts';
import { runCommand } from '../../src/core/orchestrate/verify.ts';

type Files = Record<string, string>;

/** main with `base`; the epic's worktree commits `epic`, then main commits `main`. */
function repos(t: { after: (fn: () => void) => void }, base: Files, epic: Files, main: Files) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'sf-resolve-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const root = join(dir, 'repo');
  const wt = join(dir, 'wt');
  mkdirSync(root);
  const git = (cwd: string, ...a: string[]) => execFileSync('git', a, { cwd, encoding: 'utf8' }).trim();
  const write = (cwd: string, files: Files) => {
    for (const [f, text] of Object.entries(files)) {
      mkdirSync(dirname(join(cwd, f)), { recursive: true });
      writeFileSync(join(cwd, f), text);
    }
  };
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'config', 'user.email', 't@example.com');
  git(root, 'config', 'user.name', 't');
  write(root, base);
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'base');
  git(root, 'worktree', 'add', '-q', '-b', 'springfield/sf-0002', wt);
  write(wt, epic);
  git(wt, 'add', '-A');
  git(wt, 'commit', '-qm', 'the epic');
  write(root, main);
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'another epic merged');
  const epicHead = git(wt, 'rev-parse', 'HEAD');
  return { root, wt, git: (...a: string[]) => git(wt, ...a), epicHead };
}

const noCommands: Resolving = { regenerate: [], run: () => Promise.resolve('nothing may run') };

function runner(cwd: string): Resolving['run'] {
  return async (argv) => {
    const r = await runCommand(argv, cwd, process.env, 60_000);
    return r.verdict === 'pass' ? null : `${r.command} exited ${r.exit_code}`;
  };
}

const REGISTRY = "export const registry = [\n  'alpha',\n  'beta',\n];\n";

test('both sides adding entries to one list and lines to one changelog: both kept, main first, none doubled', async (t) => {
  const { root, wt, git } = repos(
    t,
    { 'src/registry.js': REGISTRY, 'CHANGELOG.md': '# Changes\n\n- first\n' },
    {
      'src/registry.js': REGISTRY.replace("  'beta',\n", "  'beta',\n  'delta',\n"),
      'CHANGELOG.md': '# Changes\n\n- delta\n- first\n',
    },
    {
      'src/registry.js': REGISTRY.replace("  'beta',\n", "  'beta',\n  'gamma',\n  'delta',\n"),
      'CHANGELOG.md': '# Changes\n\n- gamma\n- first\n',
    },
  );
  const r = await rebaseOntoMain(root, wt, noCommands);
  assert.equal(r.moved, true);
  assert.deepEqual(r.resolutions.map((x) => [x.file, x.how]).sort(), [
    ['CHANGELOG.md', 'additive'],
    ['src/registry.js', 'additive'],
  ]);
  assert.equal(
    readFileSync(join(wt, 'src/registry.js'), 'utf8'),
    REGISTRY.replace("  'beta',\n", "  'beta',\n  'gamma',\n  'delta',\n"),
  );
  assert.equal(readFileSync(join(wt, 'CHANGELOG.md'), 'utf8'), '# Changes\n\n- gamma\n- delta\n- first\n');
  assert.equal(git('status', '--porcelain'), '', 'committed, nothing left over');
  assert.equal(git('rev-parse', 'HEAD~1'), git('rev-parse', 'main'), 'the epic now sits on main');
});

test('a true semantic conflict is never resolved: the rebase is aborted and the branch is as it was', async (t) => {
  const { root, wt, git, epicHead } = repos(
    t,
    { 'src/config.js': 'export const limit = 10;\n', 'CHANGELOG.md': '- first\n' },
    { 'src/config.js': 'export const limit = 20;\n', 'CHANGELOG.md': '- mine\n- first\n' },
    { 'src/config.js': 'export const limit = 30;\n', 'CHANGELOG.md': '- theirs\n- first\n' },
  );
  const err = await rebaseOntoMain(root, wt, noCommands).then(
    () => assert.fail('resolved a real conflict'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof RebaseConflict);
  assert.deepEqual(err.files, ['src/config.js'], 'only the real conflict is named');
  assert.match(err.message, /rebasing onto main conflicts in src\/config\.js/);
  assert.equal(git('rev-parse', 'HEAD'), epicHead);
  assert.equal(git('status', '--porcelain'), '');
  assert.equal(existsSync(join(root, '.git', 'worktrees', 'wt', 'rebase-merge')), false, 'no rebase left in progress');
});

test('one side editing a line the other inserted beside is not additive: a real conflict', async (t) => {
  const { root, wt } = repos(
    t,
    { 'src/registry.js': REGISTRY },
    { 'src/registry.js': REGISTRY.replace("  'beta',\n", "  'beta2',\n  'delta',\n") },
    { 'src/registry.js': REGISTRY.replace("  'beta',\n", "  'beta',\n  'gamma',\n") },
  );
  await assert.rejects(rebaseOntoMain(root, wt, noCommands), (e: unknown) => e instanceof RebaseConflict);
});

test('version fields take the higher version (package.json, Cargo.toml, pyproject.toml)', async (t) => {
  const pkg = (v: string) => `{\n  "name": "x",\n  "version": "${v}",\n  "private": true\n}\n`;
  const cargo = (v: string) => `[package]\nname = "x"\nversion = "${v}"\nedition = "2021"\n`;
  const py = (v: string) => `[project]\nname = "x"\nversion = "${v}"\n`;
  const { root, wt } = repos(
    t,
    { 'package.json': pkg('1.2.0'), 'Cargo.toml': cargo('0.9.0'), 'pyproject.toml': py('2.0.0') },
    { 'package.json': pkg('1.10.0'), 'Cargo.toml': cargo('0.9.1'), 'pyproject.toml': py('2.1.0rc1') },
    { 'package.json': pkg('1.3.0'), 'Cargo.toml': cargo('0.10.0'), 'pyproject.toml': py('2.1.0') },
  );
  const r = await rebaseOntoMain(root, wt, noCommands);
  assert.deepEqual(new Set(r.resolutions.map((x) => x.how)), new Set(['version']));
  assert.equal(readFileSync(join(wt, 'package.json'), 'utf8'), pkg('1.10.0'));
  assert.equal(readFileSync(join(wt, 'Cargo.toml'), 'utf8'), cargo('0.10.0'));
  assert.equal(readFileSync(join(wt, 'pyproject.toml'), 'utf8'), py('2.1.0'), 'a release is above its candidate');
});

// The regeneration command: records that it ran, and rewrites the lockfile from the manifest's dependencies.
const REGEN = `
const fs = require('node:fs');
const deps = JSON.parse(fs.readFileSync('package.json', 'utf8')).dependencies;
const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
lock.packages = Object.fromEntries(Object.entries(deps).map(([k, v]) => ['node_modules/' + k, { version: v }]));
fs.writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\\n');
fs.appendFileSync(process.env.REGEN_LOG, 'ran\\n');
`;

test("a lockfile takes the default branch's copy and is regenerated by the configured command", async (t) => {
  const manifest = (deps: string) => `{\n  "name": "x",\n  "dependencies": {\n${deps}    "a": "1.0.0"\n  }\n}\n`;
  const lock = (deps: Record<string, string>, from: string) =>
    JSON.stringify(
      {
        from,
        packages: Object.fromEntries(Object.entries(deps).map(([k, v]) => [`node_modules/${k}`, { version: v }])),
      },
      null,
      2,
    ) + '\n';
  const { root, wt, git } = repos(
    t,
    { 'package.json': manifest(''), 'package-lock.json': lock({ a: '1.0.0' }, 'base') },
    { 'package.json': manifest('    "c": "3.0.0",\n'), 'package-lock.json': lock({ a: '1.0.0', c: '3.0.0' }, 'epic') },
    { 'package.json': manifest('    "b": "2.0.0",\n'), 'package-lock.json': lock({ a: '1.0.0', b: '2.0.0' }, 'main') },
  );
  const script = join(dirname(root), 'regen.cjs');
  const logFile = join(dirname(root), 'regen.log');
  writeFileSync(script, REGEN);
  process.env.REGEN_LOG = logFile;
  t.after(() => delete process.env.REGEN_LOG);
  const r = await rebaseOntoMain(root, wt, {
    regenerate: [{ glob: 'package-lock.json', argv: [process.execPath, script] }],
    run: runner(wt),
  });
  assert.deepEqual(r.resolutions.map((x) => [x.file, x.how]).sort(), [
    ['package-lock.json', 'lockfile'],
    ['package.json', 'additive'],
  ]);
  const locked = JSON.parse(readFileSync(join(wt, 'package-lock.json'), 'utf8')) as { from: string; packages: object };
  assert.equal(locked.from, 'main', "main's lockfile was the one regenerated");
  assert.deepEqual(Object.keys(locked.packages).sort(), ['node_modules/a', 'node_modules/b', 'node_modules/c']);
  assert.equal(readFileSync(logFile, 'utf8'), 'ran\n');
  assert.equal(git('status', '--porcelain'), '');
});

test('a generated file matching a configured glob is regenerated by its command; a failing command is a real conflict', async (t) => {
  const gen = `require('node:fs').writeFileSync('gen/index.js', require('node:fs').readdirSync('src').sort().map((f) => "export * from '../src/" + f + "';").join('\\n') + '\\n');`;
  const files = (names: string[]): Files => ({
    ...Object.fromEntries(names.map((n) => [`src/${n}.js`, `export const ${n} = 1;\n`])),
    'gen/index.js': names.map((n) => `export * from '../src/${n}.js';`).join('\n') + '\n',
  });
  const setUp = () => repos(t, files(['a']), files(['a', 'c']), files(['a', 'b']));
  const ok = setUp();
  const script = join(dirname(ok.root), 'gen.cjs');
  writeFileSync(script, gen);
  const r = await rebaseOntoMain(ok.root, ok.wt, {
    regenerate: [{ glob: 'gen/**', argv: [process.execPath, script] }],
    run: runner(ok.wt),
  });
  assert.deepEqual(
    r.resolutions.map((x) => [x.file, x.how]),
    [['gen/index.js', 'regenerated']],
  );
  assert.equal(
    readFileSync(join(ok.wt, 'gen/index.js'), 'utf8'),
    ["export * from '../src/a.js';", "export * from '../src/b.js';", "export * from '../src/c.js';", ''].join('\n'),
  );

  const failing = setUp();
  const err = await rebaseOntoMain(failing.root, failing.wt, {
    regenerate: [{ glob: 'gen/**', argv: [process.execPath, '-e', 'process.exit(3)'] }],
    run: runner(failing.wt),
  }).then(
    () => assert.fail('a failed regeneration was taken as resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof RebaseConflict);
  assert.deepEqual(err.files, ['gen/index.js']);
  assert.match(err.message, /regenerating gen\/index\.js: .* exited 3/);
  assert.equal(failing.git('rev-parse', 'HEAD'), failing.epicHead, 'the branch is as it was');
});
