// `npm run test:electron`: the in-host suite in a downloaded desktop VS Code (@vscode/test-electron).
// It needs the internet to download VS Code; machines without it run the same suite through
// code-server instead (test/integration/extensionHost.test.ts, part of `npm test`).
import { runTests } from '@vscode/test-electron';
import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDemoRepo } from '../../scripts/demoRepo.ts';
import { messageOf } from '../../src/shared/errorMessage.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const work = mkdtempSync(join(tmpdir(), 'sf-electron-'));
try {
  const suite = join(work, 'suite.cjs');
  await build({
    entryPoints: [join(root, 'test', 'integration', 'suite', 'extension.suite.ts')],
    outfile: suite,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    external: ['vscode', 'better-sqlite3'],
    logLevel: 'warning',
  });
  const base = join(work, 'repo');
  mkdirSync(base);
  const demo = buildDemoRepo(base);
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE;
  const code = await runTests({
    version: '1.101.0',
    extensionDevelopmentPath: root,
    extensionTestsPath: suite,
    launchArgs: [demo.root, '--disable-extensions', '--disable-workspace-trust'],
    extensionTestsEnv: { SPRINGFIELD_TEST_WORKSPACE: demo.root },
  });
  process.exitCode = code;
} catch (error) {
  process.stderr.write(
    `test:electron: ${messageOf(error)} (this needs the internet to download VS Code; use npm test here)\n`,
  );
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
