// Runs test/integration/suite/extension.suite.ts inside a real extension host (code-server) against
// the demo repository plus one loose plan, so that exactly one plan has a ready step (extensionSuite.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI } from '../../scripts/demoRepo.ts';
import { ensureCodeServer } from '../../scripts/codeServer.ts';
import { prepareExtensionSuite } from './extensionSuite.ts';
import { runExtensionSuite } from './harness.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
describe('extension host integration suite (real VS Code via code-server)', () => {
  let base: string;
  let workspace: string;
  let suitePath: string;

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = mkdtempSync(join(tmpdir(), 'springfield-exthost-'));
      ({ workspace, suitePath } = await prepareExtensionSuite(base));
      await ensureCodeServer();
    },
    { timeout: 15 * 60_000 },
  );

  after(() => {
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test(
    'activation, contributions, commands against a temp repository, rows match the store',
    { timeout: 600_000 },
    async () => {
      const started = Date.now();
      const result = await runExtensionSuite({
        extensionPath: root,
        suitePath,
        workspace,
      });
      const suiteLines = result.logs.filter((l) => l.includes('springfield-suite'));
      if (result.code !== 0)
        process.stderr.write(
          `extension host logs:\n${result.logs.filter((l) => !l.startsWith('[workbench.trace]')).join('\n')}\n`,
        );
      assert.equal(result.code, 0, 'the suite passed inside the extension host (logs above)');
      assert.ok(
        suiteLines.some((l) => l.includes('springfield-suite finished')),
        `the suite ran to its end:\n${suiteLines.join('\n')}`,
      );
      process.stderr.write(`${suiteLines.join('\n')}\nextension host suite took ${Date.now() - started} ms\n`);
    },
  );
});
