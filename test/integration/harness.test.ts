// Proves the integration harness against a throwaway extension: a suite that gets past its checks
// that the extension loaded and activated and the workspace is open, then fails at its command's
// answer, is reported as failed with that assertion in the logs; openEditor shows the extension and
// runs its command. That a passing suite exits 0 having run to its end is checked by every in-host
// test of its own suite on Springfield (trustAndPath, extensionHost, agentTools, postgresEditor).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { ensureCodeServer } from '../../scripts/codeServer.ts';
import { openEditor, runExtensionSuite } from './harness.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const EXTENSION_ID = 'springfield-test.harness-probe';

const EXTENSION_JS = `
const vscode = require('vscode');
exports.activate = (context) => {
  const item = vscode.window.createStatusBarItem('harnessProbe.status', vscode.StatusBarAlignment.Left, 1000);
  item.name = 'Harness probe';
  item.text = '$(beaker) Harness probe ready';
  item.show();
  context.subscriptions.push(item, vscode.commands.registerCommand('harnessProbe.hello', (name = 'person') => {
    item.text = '$(beaker) Hello ' + name;
    return 'hello ' + name;
  }));
};
`;

function suiteJs(expected: string): string {
  return `
const assert = require('node:assert/strict');
const vscode = require('vscode');
exports.run = async () => {
  const extension = vscode.extensions.getExtension(${JSON.stringify(EXTENSION_ID)});
  assert.ok(extension, 'the development extension is loaded');
  assert.equal(extension.isActive, true, 'the extension activated on startup');
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  assert.equal(require('node:fs').existsSync(require('node:path').join(folder, 'README.md')), true, 'the workspace is open');
  const answer = await vscode.commands.executeCommand('harnessProbe.hello', 'suite');
  assert.equal(answer, ${JSON.stringify(expected)}, 'deliberate-marker: command answer');
  console.log('harness-probe suite finished');
};
`;
}

interface Fixture {
  base: string;
  extensionPath: string;
  workspace: string;
}

function makeFixture(): Fixture {
  const base = mkdtempSync(join(tmpdir(), 'springfield-harness-'));
  const extensionPath = join(base, 'extension');
  const workspace = join(base, 'workspace');
  mkdirSync(extensionPath);
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'README.md'), '# Harness workspace\n');
  writeFileSync(
    join(extensionPath, 'package.json'),
    JSON.stringify(
      {
        name: 'harness-probe',
        publisher: 'springfield-test',
        version: '0.0.1',
        engines: { vscode: '^1.101.0' },
        main: './extension.js',
        activationEvents: ['*'],
        contributes: { commands: [{ command: 'harnessProbe.hello', title: 'Harness Probe: Say Hello' }] },
      },
      null,
      2,
    ),
  );
  writeFileSync(join(extensionPath, 'extension.js'), EXTENSION_JS);
  writeFileSync(join(extensionPath, 'failingSuite.js'), suiteJs('this answer is wrong'));
  return { base, extensionPath, workspace };
}

async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(root, 'test-results', name);
  mkdirSync(dirname(path), { recursive: true });
  await page.screenshot({ path });
  assert.ok(statSync(path).size > 10_000, `${name} written`);
}

describe('integration harness (real VS Code via code-server)', () => {
  let fixture: Fixture;

  before(
    async () => {
      fixture = makeFixture();
      await ensureCodeServer();
    },
    { timeout: 15 * 60_000 },
  );

  after(() => rmSync(fixture.base, { recursive: true, force: true }));

  test('a failing suite exits non-zero and its assertion reaches the logs', { timeout: 600_000 }, async () => {
    const result = await runExtensionSuite({
      extensionPath: fixture.extensionPath,
      suitePath: join(fixture.extensionPath, 'failingSuite.js'),
      workspace: fixture.workspace,
    });
    assert.notEqual(result.code, 0);
    assert.ok(
      result.logs.some((line) => line.includes('deliberate-marker')),
      result.logs.join('\n'),
    );
    assert.ok(!result.logs.some((line) => line.includes('harness-probe suite finished')));
  });

  test(
    'openEditor shows the extension in the status bar and runs its command from the palette',
    { timeout: 180_000 },
    async () => {
      const session = await openEditor({ extensionPath: fixture.extensionPath, workspace: fixture.workspace });
      try {
        const { page } = session;
        const item = page.locator('.statusbar-item', { hasText: 'Harness probe ready' });
        await item.waitFor({ state: 'visible', timeout: 60_000 });
        await screenshot(page, 'harness.png');
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ state: 'visible' });
        await input.fill('>Harness Probe: Say Hello');
        await page
          .locator('.quick-input-list .monaco-list-row', { hasText: 'Say Hello' })
          .first()
          .waitFor({ state: 'visible' });
        await page.keyboard.press('Enter');
        await page
          .locator('.statusbar-item', { hasText: 'Hello person' })
          .waitFor({ state: 'visible', timeout: 30_000 });
        await screenshot(page, 'harness-command.png');
        const sockets = readdirSync(join(session.serverHome, 'run')).filter((f) => /^vscode-ipc-.*\.sock$/.test(f));
        assert.ok(sockets.length > 0, "code-server's sockets are in its own folder, not in /tmp");
      } finally {
        await session.close();
      }
      assert.equal(existsSync(session.serverHome), false, 'closing the editor removes its folder, sockets and all');
    },
  );
});
