// Packaging: `npm run package` builds this machine's platform VSIX (scripts/package.ts --target, as
// the Marketplace and Open VSX would serve it here); it installs into code-server with
// --install-extension, carrying only this platform's better-sqlite3 build, and activates with no
// build step: the Springfield view shows the store, read through that build.
// The contents of every package are checked without an editor by test/cli/vsixPackage.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cleanEnv, ensureCodeServer, node24, startCodeServer } from '../../scripts/codeServer.ts';
import { buildDemoRepo } from '../../scripts/demoRepo.ts';
import { hostTarget, platformVsix, VSIX_TARGETS } from '../../scripts/vsixTargets.ts';
import { clickSpringfieldIcon, launchBrowser, openWorkbench } from './harness.ts';
import { sfHere } from './person.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const target = hostTarget();

test(
  `the ${target ?? 'platform'} VSIX installs into code-server and shows the epics`,
  { timeout: 300_000, skip: target ? false : `no VSIX is built for ${process.platform}-${process.arch}` },
  async (t) => {
    assert.ok(target);
    const work = mkdtempSync(join(tmpdir(), 'sf-vsix-'));
    t.after(() => rmSync(work, { recursive: true, force: true }));
    execFileSync(process.execPath, [join(root, 'scripts', 'package.ts'), '--target', target, '--out', work], {
      cwd: root,
      stdio: 'pipe',
    });
    const vsix = platformVsix(work, target);

    const extensionsDir = join(work, 'extensions');
    const home = join(work, 'home');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'config.yaml'), 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n');
    const entry = await ensureCodeServer();
    const out = execFileSync(
      node24(),
      [
        entry,
        '--config',
        join(home, 'config.yaml'),
        '--user-data-dir',
        join(home, 'data'),
        '--extensions-dir',
        extensionsDir,
        '--install-extension',
        vsix,
      ],
      { encoding: 'utf8', env: cleanEnv({ XDG_DATA_HOME: join(home, 'xdg'), XDG_CONFIG_HOME: join(home, 'xdg') }) },
    );
    assert.match(out, /was successfully installed/);
    const installed = readdirSync(extensionsDir).filter((d) => d.startsWith('springfield.'));
    assert.equal(installed.length, 1, installed.join(', '));
    const prebuilds = join(extensionsDir, installed[0] ?? '', 'node_modules', 'better-sqlite3', 'prebuilds');
    const own = VSIX_TARGETS.find((p) => p.target === target)?.prebuild;
    assert.deepEqual(readdirSync(prebuilds), [`${own}.node`], "only this platform's build is installed");

    const base = join(work, 'repo');
    mkdirSync(base);
    const demo = buildDemoRepo(base, sfHere);
    const server = await startCodeServer({ folder: demo.root, extensionsDir });
    const browser = await launchBrowser();
    try {
      const { page } = browser;
      await openWorkbench(page, server.url);
      await clickSpringfieldIcon(page);
      const row = page.locator('.monaco-list-row', { hasText: 'Add a caching layer' }).first();
      await row.waitFor({ state: 'visible', timeout: 30_000 });
      mkdirSync(join(root, 'test-results'), { recursive: true });
      await page.screenshot({ path: join(root, 'test-results', 'vsix-installed.png') });
    } finally {
      await browser.close();
      await server.stop();
    }
  },
);
