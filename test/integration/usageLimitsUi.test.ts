// A preset's usage limit as a person sees it in a real VS Code (code-server + Chromium): with Claude
// Code playing every role and opencode as Ralph's fallback (`springfield agents use`), and Claude's
// limit recorded on this host, the status bar says "Claude limited until HH:MM" and its tooltip names
// each role and the preset it runs on meanwhile (docs/agents.md, "Usage limits").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ensureCodeServer } from '../../scripts/codeServer.ts';
import { CLI } from '../../scripts/demoRepo.ts';
import { clock, recordLimit } from '../../src/core/index.ts';
import { testStateHome } from '../helpers/gitRepo.ts';
import { openEditor, type EditorSession } from './harness.ts';
import { cli, git, openSpringfield, root, screenshot, UI_MS } from './person.ts';

describe('Usage limits in the status bar (code-server + Chromium)', () => {
  let base: string;
  let session: EditorSession;
  let page: Page;
  let until: string;

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-limits-ui-')));
      const repo = join(base, 'notes');
      mkdirSync(repo);
      writeFileSync(join(repo, 'README.md'), '# notes\n');
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'config', 'user.email', 'person@example.com');
      git(repo, 'config', 'user.name', 'A person');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-qm', 'Notes');
      cli(repo, ['epic', 'create', 'Write the docs']);
      cli(repo, ['agents', 'use', 'claude']);
      cli(repo, ['agents', 'use', 'claude', '--role', 'ralph', '--fallback', 'opencode']);
      // The state folder the CLI above used is the editor's too: Claude met its limit on this host.
      const state = testStateHome();
      until = new Date(Date.now() + 2 * 3600_000).toISOString();
      recordLimit({ XDG_STATE_HOME: state }, 'claude', { message: 'usage limit reached', resetAt: until }, null);
      await ensureCodeServer();
      session = await openEditor({ extensionPath: root, workspace: repo, env: { XDG_STATE_HOME: state } });
      page = session.page;
      await openSpringfield(page, 260);
    },
    { timeout: 15 * 60_000 },
  );

  after(async () => {
    await session?.close();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test('the status bar says until when Claude is limited; its tooltip, what each role runs on', async () => {
    // "HH:MM", with the date before it when the reset falls on another day than the editor's now.
    const at = `(?:\\d{4}-\\d\\d-\\d\\d )?${clock(until, new Date(until))}`;
    const item = page.locator('.part.statusbar .statusbar-item', { hasText: new RegExp(`Claude limited until ${at}`) });
    await item.waitFor({ timeout: 30_000 });
    await item.hover();
    const hover = page.locator('.workbench-hover-container, .monaco-hover', {
      hasText: 'Ralph: claude limited until',
    });
    await hover.first().waitFor({ timeout: UI_MS });
    const shown = await hover.first().innerText();
    assert.match(shown, new RegExp(`Lisa: claude limited until ${at}; no fallback free, waits`));
    assert.match(shown, new RegExp(`Ralph: claude limited until ${at}; runs on opencode meanwhile`));
    await screenshot(page, 'ui-usage-limit-status-bar');
  });
});
