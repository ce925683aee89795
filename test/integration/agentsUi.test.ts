// A person at a real VS Code (code-server + Debian Chromium) configures the agents from the Agents
// view: the quick pick lists the presets and the demo agents, the choice (with the preset a role
// falls back to while it is limited) lands in .springfield/config.json (other settings kept), and "config.json template" opens the file; with no
// verification configured, the repository's test command is proposed and written once confirmed. And
// a preset's usage limit: with Claude Code playing every role and opencode as Ralph's fallback, and
// Claude's limit met on this host, the status bar says "Claude limited until HH:MM" and its tooltip
// names each role and the preset it runs on meanwhile (docs/agents.md, "Usage limits").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Page } from 'playwright-core';
import { ensureCodeServer } from '../../scripts/codeServer.ts';
import { clock, findPreset, recordLimit } from '../../src/core/index.ts';
import { ensureCli, makeRepo, PROJECT_ROOT, type Repo, testStateHome } from '../helpers/gitRepo.ts';
import { clickSpringfieldIcon, openEditor, type EditorSession } from './harness.ts';
import { cli, UI_MS } from './person.ts';

async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(PROJECT_ROOT, 'test-results', `${name}.png`);
  mkdirSync(dirname(path), { recursive: true });
  await page.screenshot({ path });
  assert.ok(statSync(path).size > 10_000, `${path} written`);
}

async function configure(page: Page): Promise<void> {
  const header = page.locator('.part.sidebar .pane-header', { hasText: 'Agents' });
  await header.hover();
  await header.locator('[aria-label="Configure agents…"]').click();
  await page.locator('.quick-input-widget').waitFor({ state: 'visible', timeout: UI_MS });
}

/** Opens the notification center from the status bar and waits for `text` there; a failure says what config.json holds and what the center lists. */
async function saidInCenter(page: Page, text: string | RegExp, config: string): Promise<void> {
  await page.locator('.statusbar [aria-label*="Notifications"]').first().click();
  const center = page.locator('.notifications-center');
  await center
    .getByText(text)
    .first()
    .waitFor({ timeout: UI_MS })
    .catch(async (err: unknown) => {
      await screenshot(page, 'ui-configure-no-notification');
      const listed = await center.innerText().catch(() => '(the center is not open)');
      assert.fail(
        `no notification ${String(text)} within ${UI_MS} ms; config.json: ${readFileSync(config, 'utf8')}; the center lists: ${listed}; ${String(err)}`,
      );
    });
}

/** The page's `document`, as far as `pick` reads it (the tests are typed without the DOM). */
type InPage = {
  document: {
    elementFromPoint(x: number, y: number): { closest(s: string): { textContent: string | null } | null } | null;
  };
};

/**
 * Chooses a quick-pick row as a person does, with the pointer. A row's label, description and detail
 * each have a hover of their own, shown under a resting pointer and placed over the row's other line;
 * the pointer rests where the last pick was made, over the next pick's rows, and such a hover would
 * take the click for as long as the pointer stays. So the pointer leaves the list first, the pick
 * waits until no hover covers the point it clicks (a hover elsewhere, such as the activity bar's
 * "Springfield" left from opening the view, takes no click and may stay), and the row is clicked at
 * its first line's left end, where none of its hovers is placed.
 */
async function pick(page: Page, text: string | RegExp): Promise<void> {
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
  await row.waitFor({ timeout: UI_MS });
  const view = page.viewportSize() ?? { width: 1280, height: 800 };
  await page.mouse.move(view.width * 0.75, view.height * 0.8);
  const at = { x: 12, y: 10 };
  let covering: string | undefined;
  for (const deadline = Date.now() + UI_MS; ; await page.waitForTimeout(100)) {
    const box = await row.boundingBox();
    assert.ok(box, `the row ${String(text)} is on screen`);
    covering = await page.evaluate(
      ({ x, y }) => {
        const { document } = globalThis as unknown as InPage;
        const hover = document.elementFromPoint(x, y)?.closest('.workbench-hover-container');
        return hover ? (hover.textContent ?? '') : undefined;
      },
      { x: box.x + at.x, y: box.y + at.y },
    );
    if (covering === undefined || Date.now() > deadline) break;
  }
  assert.equal(
    covering,
    undefined,
    `a hover ("${covering}") still covers the row ${String(text)} after ${UI_MS / 1000} s`,
  );
  await row.click({ position: at });
}

describe('Configure agents… as a person uses it (code-server + Chromium)', () => {
  let repo: Repo;
  let session: EditorSession;
  let page: Page;
  let config: string;

  before(
    async () => {
      ensureCli();
      repo = makeRepo({ files: { '.gitignore': '.springfield/\n' } });
      config = join(repo.root, '.springfield', 'config.json');
      mkdirSync(dirname(config));
      writeFileSync(config, JSON.stringify({ verification: [['npm', 'test']], maxParallelAgents: 4 }));
      await ensureCodeServer();
      // The CLI's state folder is the editor's too: a usage limit met on this host shows in both.
      session = await openEditor({
        extensionPath: PROJECT_ROOT,
        workspace: repo.root,
        env: { XDG_STATE_HOME: testStateHome() },
      });
      page = session.page;
      await clickSpringfieldIcon(page);
      await page.locator('.part.sidebar .pane-header', { hasText: 'Agents' }).waitFor({ timeout: UI_MS });
    },
    { timeout: 15 * 60_000 },
  );

  after(async () => {
    await session?.close();
    repo?.cleanup();
  });

  test(
    'a preset picked for one role is written into config.json, keeping the other settings',
    { timeout: 6 * UI_MS },
    async () => {
      await configure(page);
      for (const name of [
        'Claude Code',
        'Codex CLI',
        'Gemini CLI',
        'GitHub Copilot CLI',
        'opencode',
        'Cursor Agent',
        'Aider',
        'Demo agents (no model; they follow the plan mechanically)',
        'config.json template',
      ]) {
        await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: UI_MS });
      }
      await screenshot(page, 'ui-configure-agents');
      await pick(page, 'Codex CLI');
      await pick(page, /^\s*Ralph \(builds\)/);
      // The second question: which preset Ralph runs on while Codex is limited (as `agents use --fallback`).
      await page
        .locator('.quick-input-widget', { hasText: 'Fall back to… (when Codex is limited)' })
        .waitFor({ timeout: UI_MS });
      await pick(page, /^\s*opencode/);
      await saidInCenter(
        page,
        /Codex CLI now plays Ralph \(builds\), then opencode while it is limited \(\.springfield\/config\.json\)\. codex is not on PATH yet: npm install -g @openai\/codex/,
        config,
      );
      await screenshot(page, 'ui-configure-agents-done');
      await page.keyboard.press('Escape');
      const written = JSON.parse(readFileSync(config, 'utf8')) as {
        roles: Record<string, string[]>;
        fallbacks: Record<string, string[][]>;
        verification: string[][];
        maxParallelAgents: number;
      };
      assert.deepEqual(Object.keys(written.roles), ['ralph']);
      assert.deepEqual(written.roles.ralph?.slice(0, 4), ['codex', 'exec', '--sandbox', 'danger-full-access']);
      assert.deepEqual(written.fallbacks, { ralph: [findPreset('opencode')?.roles.ralph] });
      assert.deepEqual([written.verification, written.maxParallelAgents], [[['npm', 'test']], 4]);
    },
  );

  test('"config.json template" opens the existing file instead of replacing it', { timeout: 6 * UI_MS }, async () => {
    const before = readFileSync(config, 'utf8');
    await configure(page);
    await pick(page, 'config.json template');
    await page.locator('.tabs-container .tab', { hasText: 'config.json' }).waitFor({ timeout: UI_MS });
    assert.equal(readFileSync(config, 'utf8'), before);
  });

  test(
    "the demo agents this extension ships play every role, run by the editor's own runtime",
    { timeout: 6 * UI_MS },
    async () => {
      await page.keyboard.press('Escape');
      await configure(page);
      await pick(page, 'Demo agents');
      await pick(page, /^\s*All roles/);
      await saidInCenter(
        page,
        'Demo agents now play Lisa (plans), Ralph (builds), Bart (reviews) (.springfield/config.json).',
        config,
      );
      await screenshot(page, 'ui-configure-demo-agents');
      await page.keyboard.press('Escape');
      const written = JSON.parse(readFileSync(config, 'utf8')) as {
        roles: Record<string, string[]>;
        usage?: Record<string, string>;
        verification: string[][];
      };
      for (const role of ['lisa', 'ralph', 'bart']) {
        const [runtime, script, context] = written.roles[role] ?? [];
        assert.ok(runtime && existsSync(runtime), `${role}: the editor's runtime ${runtime}`);
        assert.equal(
          realpathSync(script ?? ''),
          join(PROJECT_ROOT, 'dist', 'standInAgent.cjs'),
          `${role}: the extension's stand-in`,
        );
        assert.equal(context, '$SPRINGFIELD_CONTEXT_FILE');
      }
      assert.equal(written.usage, undefined, "Codex's usage reader went with it");
      assert.deepEqual(written.verification, [['npm', 'test']], 'the other settings are kept');
    },
  );

  test(
    "with no verification yet, the repository's test command (package.json's test script: npm test) is proposed, and written once confirmed",
    { timeout: 6 * UI_MS },
    async () => {
      writeFileSync(
        join(repo.root, 'package.json'),
        JSON.stringify({ name: 'shop', scripts: { test: 'node --test' } }),
      );
      const { verification: _, ...rest } = JSON.parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
      writeFileSync(config, JSON.stringify(rest, null, 2));
      await page.keyboard.press('Escape');
      await configure(page);
      await pick(page, 'Demo agents');
      await pick(page, /^\s*All roles/);
      const question = page.locator('.quick-input-widget', { hasText: 'verify each build with npm test?' });
      await question.waitFor({ timeout: UI_MS });
      const offered = await question.locator('.quick-input-list .monaco-list-row').allInnerTexts();
      assert.match(offered[0] ?? '', /Verify with npm test[\s\S]*package\.json's test script/, JSON.stringify(offered));
      assert.match(offered[1] ?? '', /No verification for now/, JSON.stringify(offered));
      await screenshot(page, 'ui-configure-verification');
      assert.equal(
        (JSON.parse(readFileSync(config, 'utf8')) as { verification?: unknown }).verification,
        undefined,
        'nothing written before the person answers',
      );
      await pick(page, 'Verify with npm test');
      await saidInCenter(page, /Each build is verified with npm test\./, config);
      await page.keyboard.press('Escape');
      assert.deepEqual((JSON.parse(readFileSync(config, 'utf8')) as { verification: string[][] }).verification, [
        ['npm', 'test'],
      ]);
    },
  );

  test(
    "Claude Code on every role, opencode as Ralph's fallback, Claude's limit met on this host: the status bar says until when, its tooltip what each role runs on",
    { timeout: 6 * UI_MS },
    async () => {
      await page.keyboard.press('Escape');
      cli(repo.root, ['agents', 'use', 'claude']);
      cli(repo.root, ['agents', 'use', 'claude', '--role', 'ralph', '--fallback', 'opencode']);
      const until = new Date(Date.now() + 2 * 3600_000).toISOString();
      recordLimit(
        { XDG_STATE_HOME: testStateHome() },
        'claude',
        { message: 'usage limit reached', resetAt: until },
        null,
      );
      // The scheduler records a limit when a run ends on it, a write to the store the editor follows;
      // here an epic's creation is that write.
      cli(repo.root, ['epic', 'create', 'Write the docs']);
      // "HH:MM", with the date before it when the reset falls on another day than the editor's now.
      const at = `(?:\\d{4}-\\d\\d-\\d\\d )?${clock(until, new Date(until))}`;
      const item = page.locator('.part.statusbar .statusbar-item', {
        hasText: new RegExp(`Claude limited until ${at}`),
      });
      await item.waitFor({ timeout: UI_MS });
      await item.hover();
      const hover = page.locator('.workbench-hover-container, .monaco-hover', {
        hasText: 'Ralph: claude limited until',
      });
      await hover.first().waitFor({ timeout: UI_MS });
      const shown = await hover.first().innerText();
      assert.match(shown, new RegExp(`Lisa: claude limited until ${at}; no fallback free, waits`));
      assert.match(shown, new RegExp(`Ralph: claude limited until ${at}; runs on opencode meanwhile`));
      await screenshot(page, 'ui-usage-limit-status-bar');
    },
  );
});
