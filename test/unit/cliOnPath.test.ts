// The editor's "Install 'springfield' command in PATH" and its removal (src/extension/cliOnPath.ts),
// on real files in a temporary home: the wrapper, the link into ~/.local/bin or ~/bin, what is not
// ours left alone, folders others could have planted refused. The in-host run of the command is
// test/integration/trustAndPath.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { SpringfieldError } from '../../src/core/index.ts';
import { installCliLink, uninstallCliLink, wrapperScript, writeCliWrappers } from '../../src/extension/cliOnPath.ts';

/** A home with a storage folder, and a stand-in CLI that prints its arguments and ELECTRON_RUN_AS_NODE. */
function setUp(t: TestContext) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'sf-cli-on-path-')));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const home = join(base, 'home');
  mkdirSync(home);
  const cli = join(base, 'ext', 'dist', 'cli.cjs');
  mkdirSync(join(base, 'ext', 'dist'), { recursive: true });
  writeFileSync(
    cli,
    'process.stdout.write(JSON.stringify({ argv: process.argv.slice(2), electron: process.env.ELECTRON_RUN_AS_NODE }))\n',
  );
  const bin = join(base, 'storage', 'bin');
  mkdirSync(join(base, 'storage'));
  const wrapper = writeCliWrappers(bin, process.execPath, cli, 'linux');
  return { base, home, cli, bin, wrapper };
}

/** A SpringfieldError with this code and a one-line message. */
const refused = (code: string) => (err: unknown) =>
  err instanceof SpringfieldError && err.code === code && !err.message.includes('\n');

/** Whether anything, a dangling link included, is at `path`. */
function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

test('the wrapper runs the CLI with the editor runtime as Node, and says in one line when either is gone', (t) => {
  const { base, bin, wrapper } = setUp(t);
  assert.equal(wrapper, join(bin, 'springfield'));
  assert.equal(statSync(wrapper).mode & 0o111, 0o111, 'executable');
  const r = spawnSync(wrapper, ['--version', "it's"], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { argv: ['--version', "it's"], electron: '1' });

  const gone = join(base, 'old', 'cli.cjs');
  writeFileSync(wrapper, wrapperScript(process.execPath, gone));
  const stale = spawnSync(wrapper, ['--version'], { encoding: 'utf8' });
  assert.equal(stale.status, 3);
  assert.equal(stale.stdout, '');
  assert.match(stale.stderr, /^springfield: .*old\/cli\.cjs .* is gone .*npm install -g @springfield-agents\/cli\n$/);
});

test('the wrapper is replaced, never written through a planted link, and left as is when unchanged', (t) => {
  const { base, cli, bin, wrapper } = setUp(t);
  const before = statSync(wrapper);
  writeCliWrappers(bin, process.execPath, cli, 'linux');
  assert.equal(statSync(wrapper).mtimeMs, before.mtimeMs, 'unchanged text: not rewritten');

  const victim = join(base, 'victim');
  writeFileSync(victim, 'precious\n');
  rmSync(wrapper);
  symlinkSync(victim, wrapper);
  writeCliWrappers(bin, process.execPath, cli, 'linux');
  assert.equal(readFileSync(victim, 'utf8'), 'precious\n', 'the link target is untouched');
  assert.ok(lstatSync(wrapper).isFile(), 'the link was replaced by the wrapper');

  const linkedBin = join(base, 'linked-bin');
  symlinkSync(join(base, 'storage'), linkedBin);
  assert.throws(() => writeCliWrappers(linkedBin, process.execPath, cli, 'linux'), refused('unsafe_directory'));
});

test('install links the wrapper into ~/.local/bin when it is on PATH, and the command runs through the link', (t) => {
  const { home, wrapper } = setUp(t);
  const local = join(home, '.local', 'bin');
  const r = installCliLink({ wrapper, home, path: `/usr/bin:${local}/:/bin`, platform: 'linux' });
  assert.equal(r.outcome, 'installed');
  assert.equal(r.link, join(local, 'springfield'));
  assert.equal(r.onPath, true);
  assert.equal(readlinkSync(r.link), wrapper);
  assert.match(r.message, /^Installed the springfield command: .*Open a new terminal/);
  const run = spawnSync('springfield', ['ready'], { encoding: 'utf8', env: { PATH: `${local}:/usr/bin:/bin` } });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout).argv, ['ready']);

  const again = installCliLink({ wrapper, home, path: `${local}:/bin`, platform: 'linux' });
  assert.equal(again.outcome, 'present');
  assert.match(again.message, /already the springfield command of this editor/);
});

test('install prefers a ~/bin on PATH, else makes ~/.local/bin and says how to put it on PATH', (t) => {
  const { home, wrapper } = setUp(t);
  mkdirSync(join(home, 'bin'), { mode: 0o755 });
  const inBin = installCliLink({ wrapper, home, path: `/usr/bin:${join(home, 'bin')}`, platform: 'linux' });
  assert.equal(inBin.link, join(home, 'bin', 'springfield'));
  assert.equal(inBin.onPath, true);
  uninstallCliLink({ wrapper, home, path: undefined, platform: 'linux' });

  const off = installCliLink({ wrapper, home, path: '/usr/bin:/bin', platform: 'linux' });
  assert.equal(off.outcome, 'installed');
  assert.equal(off.onPath, false);
  assert.equal(off.link, join(home, '.local', 'bin', 'springfield'));
  assert.ok(existsSync(off.link));
  assert.match(
    off.message,
    /is not on your PATH\. To use it, add the folder to PATH .*export PATH=".*\/\.local\/bin:\$PATH"$/,
  );
});

test("a springfield that is not this editor's link is never replaced, and removal leaves it too", (t) => {
  const { base, home, wrapper } = setUp(t);
  const local = join(home, '.local', 'bin');
  mkdirSync(local, { recursive: true });
  const link = join(local, 'springfield');
  const setting = { wrapper, home, path: local, platform: 'linux' as const };

  writeFileSync(link, '#!/bin/sh\necho mine\n', { mode: 0o755 });
  assert.throws(
    () => installCliLink(setting),
    (err: unknown) =>
      refused('not_ours')(err) && /is not this editor's springfield command \(a file\)/.test((err as Error).message),
  );
  assert.equal(readFileSync(link, 'utf8'), '#!/bin/sh\necho mine\n');
  assert.match(
    uninstallCliLink(setting).message,
    /not installed .* Left alone, not this editor's: .*springfield \(a file\)/,
  );
  assert.ok(existsSync(link));
  rmSync(link);

  // A link planted to look like a command (another npm install, or a link to anywhere): refused as well, dangling or not.
  for (const target of [join(base, 'elsewhere', 'cli.cjs'), '/usr/bin/true']) {
    symlinkSync(target, link);
    assert.throws(() => installCliLink(setting), refused('not_ours'));
    assert.equal(readlinkSync(link), target);
    assert.equal(uninstallCliLink(setting).outcome, 'absent');
    assert.equal(readlinkSync(link), target, 'removal left it');
    rmSync(link);
  }

  installCliLink(setting);
  const removed = uninstallCliLink(setting);
  assert.equal(removed.outcome, 'removed');
  assert.deepEqual(removed.links, [link]);
  assert.equal(present(link), false);
  assert.equal(uninstallCliLink(setting).outcome, 'absent');
  assert.ok(existsSync(wrapper), "the wrapper stays for the editor's terminals");
});

test("a folder others may write, or another runtime's platform, is refused in one line", (t) => {
  const { base, home, wrapper } = setUp(t);
  const local = join(home, '.local', 'bin');
  mkdirSync(local, { recursive: true });
  chmodSync(local, 0o777);
  assert.throws(
    () => installCliLink({ wrapper, home, path: local, platform: 'linux' }),
    (err: unknown) =>
      refused('unsafe_directory')(err) && /may be written by other users \(mode 777\)/.test((err as Error).message),
  );
  assert.equal(present(join(local, 'springfield')), false);
  chmodSync(local, 0o755);

  // ~/.local/bin as a link of the user's own to a private folder (dotfile managers do this) is fine.
  rmSync(local, { recursive: true });
  const dotfiles = join(base, 'dotfiles-bin');
  mkdirSync(dotfiles, { mode: 0o755 });
  symlinkSync(dotfiles, local);
  assert.equal(installCliLink({ wrapper, home, path: local, platform: 'linux' }).outcome, 'installed');
  assert.equal(readlinkSync(join(dotfiles, 'springfield')), wrapper);

  assert.throws(
    () => installCliLink({ wrapper, home, path: local, platform: 'win32' }),
    (err: unknown) =>
      refused('unsupported_platform')(err) && /npm install -g @springfield-agents\/cli/.test((err as Error).message),
  );
});
