// Issue 26's editor side, as a person takes it in a real VS Code (code-server + Chromium, the
// extension installed as a user has it): an epic started in its own worktree, whose app is a tiny
// node server on $SPRINGFIELD_PORT. Run app on the epic's row first says config.json has no "run"
// commands; with one, it asks to allow config.json, opens the terminal `App · <title>` and shows the
// app's address as a link (the server answers there). The worktree shows in the Source Control view
// by itself. Worktrees… (the Epics view's "…" menu) lists the worktree with its ports and the app's
// address, and Stop app from there stops it. An app started from a terminal shows on the epic's menu
// (Stop app), and Run app once it ends. Open worktree… offers where to open it. Once the epic is
// deferred, Prune worktrees… shows what would go in a modal and removes the worktree, keeping its branch.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Page } from 'playwright-core';
import { cleanEnv, ensureCodeServer } from '../../scripts/codeServer.ts';
import { CLI, TYPO_PLAN } from '../../scripts/demoRepo.ts';
import { openEditor, type EditorSession } from './harness.ts';
import {
  cli,
  clickMenuItem,
  contextAction,
  eventually,
  git,
  menuUntil,
  openSpringfield,
  palette,
  root,
  row,
  screenshot,
  toast,
  UI_MS,
} from './person.ts';

const TITLE = 'Greeting service';
const SERVER =
  "import { createServer } from 'node:http';\ncreateServer((req, res) => res.end(`hello from ${process.env.SPRINGFIELD_EPIC}`)).listen(Number(process.env.SPRINGFIELD_PORT), '127.0.0.1');\n";

interface Worktree {
  path: string;
  epic_id: string;
  ports: string | null;
  port: number | null;
  app: { pid: number; url: string | null } | null;
}

/** What the app answers at `url`, or null when nothing listens. */
async function answer(url: string): Promise<string | null> {
  try {
    return await (await fetch(url, { signal: AbortSignal.timeout(3000) })).text();
  } catch {
    return null;
  }
}

/** The terminal tab (or the lone terminal's title) named `name` in the panel. */
function terminalTab(page: Page, name: string) {
  return page.locator('.part.panel .terminal-tabs-entry, .part.panel .single-terminal-tab', { hasText: name }).first();
}

describe("An epic's worktree from the editor: Run app, Source Control, Worktrees…, Stop app (code-server + Chromium)", () => {
  let base: string;
  let repo: string;
  let session: EditorSession;
  let page: Page;
  let epicId: string;
  let worktree: string;
  let url: string;

  const worktrees = (): Worktree[] => cli<{ worktrees: Worktree[] }>(repo, ['worktrees']).worktrees;
  const epicRow = () => row(page, TITLE);

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-worktrees-')));
      repo = join(base, 'greeter');
      mkdirSync(join(repo, 'plans'), { recursive: true });
      writeFileSync(join(repo, 'plans', 'greeting.md'), TYPO_PLAN);
      writeFileSync(join(repo, 'server.mjs'), SERVER);
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'config', 'user.email', 'person@example.com');
      git(repo, 'config', 'user.name', 'A person');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-qm', 'A greeting server');
      epicId = cli<{ id: string }>(repo, ['epic', 'create', TITLE, '--brief', 'Greets.', '--plan-md']).id;
      cli(repo, ['plan', 'propose', epicId, 'plans/greeting.md'], 'lisa');
      cli(repo, ['plan', 'approve', epicId]);
      worktree = cli<{ worktree_path: string }>(repo, ['epic', 'start', epicId]).worktree_path;
      assert.ok(existsSync(join(worktree, 'server.mjs')), `the epic's worktree ${worktree} has the server`);
      await ensureCodeServer();
      session = await openEditor({
        extensionPath: root,
        workspace: repo,
        theme: 'dark',
        settings: { 'terminal.integrated.gpuAcceleration': 'off' },
      });
      page = session.page;
      await openSpringfield(page);
      await epicRow().waitFor({ timeout: 60_000 });
    },
    { timeout: 15 * 60_000 },
  );

  after(async () => {
    // The app is stopped with the editor's tests either way; a server left running would hold its port.
    if (worktree && existsSync(worktree)) execStop(repo, epicId);
    await session?.close();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test('Run app without "run" commands in config.json says so, with the fix', { timeout: 60_000 }, async () => {
    const message = toast(page, 'has no "run" commands');
    await contextAction(page, epicRow(), 'Run app', message);
    assert.match(
      await message.innerText(),
      new RegExp(
        `${epicId}'s app cannot start: \\S+config\\.json has no "run" commands\\. Add e\\.g\\. "run": \\[\\["npm", "run", "dev"\\]\\]`,
      ),
    );
    await screenshot(page, 'worktrees-no-run');
    await palette(page, 'Notifications: Clear All Notifications');
  });

  test(
    "Run app: allow config.json, the terminal `App · <title>` runs the server on the worktree's port, and the message links to it",
    { timeout: 120_000 },
    async () => {
      writeFileSync(
        join(repo, '.springfield', 'config.json'),
        JSON.stringify({ run: [[process.execPath, 'server.mjs']] }, null, 2) + '\n',
      );
      const dialog = page.locator('.monaco-dialog-box');
      await contextAction(page, epicRow(), 'Run app', dialog);
      assert.match(await dialog.innerText(), /wants to run commands[\s\S]*run\[0\]: \S+ server\.mjs/);
      await dialog.getByRole('button', { name: 'Allow' }).click();
      await terminalTab(page, `App · ${TITLE}`).waitFor({ timeout: 30_000 });
      const message = toast(page, `${epicId}'s app (${TITLE}) runs at`);
      await message.waitFor({ timeout: 45_000 });
      const text = await message.innerText();
      const m = /runs at (http:\/\/localhost:(\d+)\/), in the terminal "App · Greeting service"/.exec(text);
      assert.ok(m, `the message names the app's address: ${text}`);
      url = m[1] as string;
      const link = message.locator('a', { hasText: url });
      assert.equal(await link.count(), 1, 'the address is a link');
      await message.getByRole('button', { name: 'Open in browser' }).waitFor();
      await message.getByRole('button', { name: 'Stop app' }).waitFor();
      const listed = worktrees().find((w) => w.epic_id === epicId);
      assert.equal(listed?.port, Number(m[2]), "the app's port is the first of the worktree's block");
      assert.equal(listed?.app?.url, url);
      let body: string | null = null;
      for (const deadline = Date.now() + 20_000; body === null && Date.now() < deadline; await page.waitForTimeout(300))
        body = await answer(url);
      assert.equal(body, `hello from ${epicId}`, "the epic's server answers on its port");
      await screenshot(page, 'worktrees-run-app');
    },
  );

  test("the epic's worktree shows in the Source Control view by itself", { timeout: 60_000 }, async () => {
    await page.locator('.activitybar li.action-item:has(> [aria-label^="Source Control"])').first().click();
    const repos = page.locator('.part.sidebar .monaco-list-row', { hasText: epicId });
    await repos.first().waitFor({ timeout: 30_000 });
    await screenshot(page, 'worktrees-source-control');
    await openSpringfield(page, 0);
  });

  test(
    "Worktrees… lists the epic's worktree with its ports and app; Stop app from there stops it",
    { timeout: 90_000 },
    async () => {
      const listed = worktrees().find((w) => w.epic_id === epicId);
      assert.ok(listed?.ports, `the worktree has ports: ${JSON.stringify(listed)}`);
      const header = page.locator('.part.sidebar .pane-header', { hasText: 'Epics' });
      await header.hover();
      await header.locator('[aria-label="More Actions..."]').click();
      await clickMenuItem(page, page.locator('.context-view .action-label', { hasText: 'Worktrees…' }));
      const item = page.locator('.quick-input-list .monaco-list-row', { hasText: TITLE });
      await item.waitFor({ timeout: 30_000 });
      const text = await item.innerText();
      for (const fact of ['in progress', 'clean', `ports ${listed.ports}`, `app ${url}`, worktree])
        assert.ok(text.includes(fact), `the row shows ${fact}: ${text}`);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Prune worktrees…' }).waitFor();
      await screenshot(page, 'worktrees-list');
      await item.click();
      const stop = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Stop app' });
      await stop.waitFor({ timeout: UI_MS });
      for (const action of [
        'Open in new window',
        'Open in this window',
        'Reveal in file manager',
        'Add to Source Control',
      ]) {
        await page.locator('.quick-input-list .monaco-list-row', { hasText: action }).waitFor();
      }
      await screenshot(page, 'worktrees-actions');
      await stop.click();
      await toast(page, `stopped ${epicId}'s app (${TITLE})`).waitFor({ timeout: 30_000 });
      assert.equal(await answer(url), null, 'nothing answers at the address any more');
      // The app's terminal ends cleanly ("stopped"), so VS Code shows no "terminal process terminated" error.
      await page.waitForTimeout(2000);
      assert.equal(await toast(page, /terminated with exit code/).count(), 0, 'no terminal error toast');
      await screenshot(page, 'worktrees-stopped');
      await palette(page, 'Notifications: Clear All Notifications');
      assert.equal(worktrees().find((w) => w.epic_id === epicId)?.app, null);
    },
  );

  test(
    "an app started from a terminal, not the editor: the epic's menu offers Stop app within seconds, and Run app once it ends",
    { timeout: 180_000 },
    async () => {
      // The CLI's own allowance (a terminal is not the editor's session), kept in the test's folder.
      const state = { XDG_STATE_HOME: join(base, 'state') };
      cli(repo, ['allow'], '', state);
      const app = spawn(process.execPath, [CLI, 'app', epicId], { cwd: repo, env: cleanEnv(state), stdio: 'ignore' });
      const ended = once(app, 'exit');
      const recorded = () => JSON.stringify(worktrees().find((w) => w.epic_id === epicId)?.app ?? null);
      try {
        // The wait for the record is the CLI's start-up; the menu's is the editor's reading it (every 2 s).
        await eventually('springfield app records its app', () => recorded() !== 'null', 60_000);
        const running = await menuUntil(
          page,
          TITLE,
          (m) => m.includes('Stop app'),
          30_000,
          async () => `the app: ${recorded()}`,
        );
        assert.ok(!running.includes('Run app'), `Stop app, not Run app: ${JSON.stringify(running)}`);
        await screenshot(page, 'worktrees-terminal-app-menu');
      } finally {
        execStop(repo, epicId);
      }
      await ended;
      const stopped = await menuUntil(
        page,
        TITLE,
        (m) => m.includes('Run app'),
        30_000,
        async () => `the app: ${recorded()}`,
      );
      assert.ok(!stopped.includes('Stop app'), `Run app, not Stop app: ${JSON.stringify(stopped)}`);
    },
  );

  test(
    'Open worktree… on the epic offers a new window, this window, reveal and Source Control',
    { timeout: 60_000 },
    async () => {
      const first = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open in new window' });
      await contextAction(page, epicRow(), 'Open worktree…', first).catch(async (err: unknown) => {
        await screenshot(page, 'worktrees-open-failed');
        throw err;
      });
      const labels = await page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
      const expected = ['Open in new window', 'Open in this window', 'Reveal in file manager', 'Add to Source Control'];
      assert.equal(labels.length, expected.length, JSON.stringify(labels));
      expected.forEach((label, i) =>
        assert.ok(labels[i]?.trim().startsWith(label), `${label} is item ${i + 1}: ${JSON.stringify(labels)}`),
      );
      await screenshot(page, 'worktrees-open');
      await page.keyboard.press('Escape');
    },
  );

  test(
    'Prune worktrees… once the epic is deferred: what would go in a modal, then the worktree is gone and its branch kept',
    { timeout: 90_000 },
    async () => {
      cli(repo, ['epic', 'defer', epicId, '--reason', 'set aside']);
      await palette(page, 'Springfield: Worktrees…');
      const prune = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Prune worktrees…' });
      await page
        .locator('.quick-input-list .monaco-list-row', { hasText: 'prunable: its epic is deferred' })
        .waitFor({ timeout: 30_000 });
      await prune.click();
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      const text = await dialog.innerText();
      assert.match(
        text,
        /Remove 1 worktree\?[\s\S]*Would go:[\s\S]*sf-[0-9a-f]+: its epic is deferred; branch kept/,
        text,
      );
      assert.ok(text.includes(worktree), `the dialog names ${worktree}: ${text}`);
      await screenshot(page, 'worktrees-prune');
      await dialog.getByRole('button', { name: 'Prune' }).click();
      await toast(page, 'Removed 1 worktree.').waitFor({ timeout: 30_000 });
      assert.equal(existsSync(worktree), false, 'the worktree is gone');
      assert.deepEqual(worktrees(), []);
      assert.equal(
        git(repo, 'branch', '--list', `springfield/${epicId}`, '--format=%(refname:short)'),
        `springfield/${epicId}`,
        "a deferred epic's branch is kept",
      );
      // The store forgets the removed worktree, so the row stops naming it; Source Control closed it before it went.
      assert.equal(cli<{ worktree_path: string | null }>(repo, ['epic', 'show', epicId]).worktree_path, null);
      await page.waitForFunction(
        ([label, gone]) =>
          [...(globalThis as unknown as InPage).document.querySelectorAll('.part.sidebar .monaco-list-row')]
            .map((r) => r.getAttribute('aria-label') ?? '')
            .some((text) => text.startsWith(label) && text.includes('deferred') && !text.includes(gone)),
        [TITLE, `in ${basename(worktree)}`] as const,
        { timeout: 10_000 },
      );
      await page.locator('.activitybar li.action-item:has(> [aria-label^="Source Control"])').first().click();
      await page
        .locator('.part.sidebar .monaco-list-row', { hasText: epicId })
        .first()
        .waitFor({ state: 'detached', timeout: 30_000 });
      await page.waitForTimeout(2000);
      assert.equal(await toast(page, /Repository not initialized|git/i).count(), 0, 'the git extension says nothing');
      await screenshot(page, 'worktrees-pruned-source-control');
      await openSpringfield(page, 0);
    },
  );
});

type InPage = { document: { querySelectorAll(s: string): Iterable<{ getAttribute(n: string): string | null }> } };

/** Stops the epic's app through the CLI, quietly (cleanup). */
function execStop(repo: string, epicId: string): void {
  try {
    cli(repo, ['app', epicId, '--stop']);
  } catch {
    // nothing ran
  }
}
