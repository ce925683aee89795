// `npm run test:electron`: the in-host suite in a downloaded desktop VS Code (@vscode/test-electron).
// It needs the internet to download VS Code; machines without it run the same suite through
// code-server instead (test/integration/extensionHost.test.ts, part of `npm test`).
import { runTests } from '@vscode/test-electron';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { messageOf } from '../../src/shared/errorMessage.ts';
import { prepareExtensionSuite } from '../integration/extensionSuite.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const work = mkdtempSync(join(tmpdir(), 'sf-electron-'));
try {
  // The same repository and fixture as extensionHost.test.ts's (the suite reads them).
  const { workspace, suitePath } = await prepareExtensionSuite(work);
  // runTests starts VS Code with this process's environment: with ELECTRON_RUN_AS_NODE (set when this
  // runs from an extension host) it would start as plain Node.
  delete process.env.ELECTRON_RUN_AS_NODE;
  const code = await runTests({
    version: '1.101.0',
    extensionDevelopmentPath: root,
    extensionTestsPath: suitePath,
    launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust'],
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
