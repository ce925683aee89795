// Agent faults in a real VS Code (code-server + Debian Chromium): the editor's scheduler stops a
// failing planner at the retry limit, the Epics tree says why and offers Retry, the person is told
// once per block, and Retry (from the tree and from the dashboard) starts the epic again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FrameLocator, Page } from 'playwright-core';
import { cleanEnv, ensureCodeServer } from '../../scripts/codeServer.ts';
import { clickSpringfieldIcon, openEditor, type EditorSession } from './harness.ts';
import {
  allNotifications,
  cli,
  clickMenuItem,
  eventually,
  palette,
  rightClickUntil,
  row,
  screenshot,
} from './person.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(root, 'dist', 'cli.cjs');
const PLAN = '# Plan: Docs\n\n## Step 1: Write {#step-1}\n**Tasks:**\n- [ ] Write it\n';

/** Lisa as a script: fails like a missing API key until `fixed-<epic>` exists, then proposes the plan. */
function planner(out: string): string {
  return `
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const epic = process.env.SPRINGFIELD_EPIC;
fs.appendFileSync(${JSON.stringify(join(out, 'runs.log'))}, epic + '\\n');
if (!fs.existsSync(${JSON.stringify(out)} + '/fixed-' + epic)) { console.error('model unavailable: ANTHROPIC_API_KEY is not set'); process.exit(1); }
execFileSync(process.execPath, [${JSON.stringify(CLI)}, 'plan', 'propose', epic, 'plans/' + epic + '.md'], { stdio: 'inherit' });
`;
}

interface Epic {
  status: string;
  status_reason: string | null;
}

/** Notifications that say an epic is blocked; `all` gets every notification's text, for the failure message. */
async function blockNotices(page: Page, epic: string, all: string[] = []): Promise<number> {
  all.push(...(await allNotifications(page)));
  return all.filter((t) => t.includes(`${epic} "`) && t.includes('is blocked')).length;
}

describe('Agent faults in a real VS Code (code-server + Chromium)', () => {
  let base: string;
  let repo: string;
  let out: string;
  let treeEpic: string;
  let dashEpic: string;
  let session: EditorSession;
  let page: Page;
  const lisaRuns = (epic: string) =>
    existsSync(join(out, 'runs.log'))
      ? execFileSync('grep', ['-c', `^${epic}$`, join(out, 'runs.log')], { encoding: 'utf8' }).trim()
      : '0';

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-faults-')));
      repo = join(base, 'repo');
      out = join(base, 'out');
      mkdirSync(join(repo, 'plans'), { recursive: true });
      mkdirSync(out);
      writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
      const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, stdio: 'ignore', env: cleanEnv() });
      git('init', '-q', '-b', 'main');
      git('config', 'user.email', 'marge@example.com');
      git('config', 'user.name', 'Marge');
      treeEpic = cli<{ id: string }>(repo, ['epic', 'create', 'Retry from the tree']).id;
      dashEpic = cli<{ id: string }>(repo, ['epic', 'create', 'Retry from the dashboard']).id;
      for (const id of [treeEpic, dashEpic]) writeFileSync(join(repo, 'plans', `${id}.md`), PLAN);
      git('add', '-A');
      git('commit', '-qm', 'plans');
      const agent = join(base, 'lisa.cjs');
      writeFileSync(agent, planner(out));
      writeFileSync(
        join(repo, '.springfield', 'config.json'),
        JSON.stringify({
          roles: { lisa: [process.execPath, agent] },
          maxParallelAgents: 2,
          retryLimit: 2,
          retryBackoffSeconds: [0],
        }),
      );
      // The person allowed what they configured (else the scheduler asks first: docs/trust.md); the editor reads the same state.
      const state = { XDG_STATE_HOME: join(base, 'state') };
      execFileSync(process.execPath, [CLI, 'allow'], { cwd: repo, stdio: 'ignore', env: cleanEnv(state) });
      await ensureCodeServer();
      session = await openEditor({ extensionPath: root, workspace: repo, env: state });
      page = session.page;
      await clickSpringfieldIcon(page);
      await page
        .locator(`.part.sidebar .monaco-list-row[aria-label^=${JSON.stringify('Retry from the tree')}]`)
        .waitFor({ timeout: 60_000 });
    },
    { timeout: 15 * 60_000 },
  );

  after(async () => {
    if (out) for (const id of [treeEpic, dashEpic]) if (id) writeFileSync(join(out, `fixed-${id}`), '');
    await session?.close();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test(
    'a planner that keeps failing is stopped at the limit; the tree says why and offers Retry; the person is told once',
    { timeout: 300_000 },
    async () => {
      await palette(page, 'Springfield: Start scheduler');
      for (const id of [treeEpic, dashEpic])
        await eventually(`${id} blocked`, () => cli<Epic>(repo, ['epic', 'show', id]).status === 'blocked', 60_000);
      assert.match(
        cli<Epic>(repo, ['epic', 'show', treeEpic]).status_reason ?? '',
        /^agent_failed: Lisa failed 2 times in a row \(last: run \d+ failed: exit 1\); last output: model unavailable: ANTHROPIC_API_KEY is not set$/,
      );
      const epicRow = page.locator(
        `.part.sidebar .monaco-list-row[aria-label^=${JSON.stringify('Retry from the tree')}]`,
      );
      await epicRow.filter({ hasText: 'Lisa failed 2 times in a row' }).waitFor({ timeout: 60_000 });
      await page.waitForTimeout(5000); // more than two ticks of the 2 s loop
      assert.equal(lisaRuns(treeEpic), '2', 'nothing relaunched after the block');
      // Both blocks are told (the other epic's may reach the window a refresh later on a loaded machine), each once.
      let notices: string[] = [];
      for (const deadline = Date.now() + 60_000; ; await page.waitForTimeout(1000)) {
        notices = [];
        const tree = await blockNotices(page, treeEpic, notices);
        const dash = notices.filter((t) => t.includes(`${dashEpic} "`) && t.includes('is blocked')).length;
        if ((tree >= 1 && dash >= 1) || Date.now() > deadline) break;
      }
      const told = (epic: string) => notices.filter((t) => t.includes(`${epic} "`) && t.includes('is blocked')).length;
      assert.equal(told(treeEpic), 1, `told once, not on every tick; the notifications were:\n${notices.join('\n')}`);
      assert.equal(
        told(dashEpic),
        1,
        `the other blocked epic is told once too; the notifications were:\n${notices.join('\n')}`,
      );
      const agents = page.locator('.part.sidebar .monaco-list-row', { hasText: 'Lisa · Retry from the tree' });
      await agents.filter({ hasText: 'failed (exit 1)' }).first().waitFor({ timeout: 60_000 });
      await screenshot(page, 'faults-blocked');
    },
  );

  test('Retry in the tree starts the epic again after the person fixed the cause', { timeout: 240_000 }, async () => {
    writeFileSync(join(out, `fixed-${treeEpic}`), '');
    const epicRow = row(page, 'Retry from the tree');
    const item = page.locator('.context-view .action-item', { hasText: /^Retry$/ }).first();
    // The scheduler runs meanwhile: a live refresh of the row can lose a right-click.
    if (await rightClickUntil(page, epicRow.first(), item, 'Retry in the menu')) {
      const menu = await page
        .locator('.context-view')
        .innerText()
        .catch(() => '(no menu)');
      assert.fail(`no Retry in the context menu after 3 right-clicks: ${menu}`);
    }
    await screenshot(page, 'faults-retry-menu');
    await clickMenuItem(page, item);
    await eventually(
      'a plan proposed after the retry',
      () =>
        cli<{ plan_versions: { status: string }[] }>(repo, ['epic', 'show', treeEpic]).plan_versions.some(
          (v) => v.status === 'proposed',
        ),
      60_000,
    );
    assert.equal(cli<Epic>(repo, ['epic', 'show', treeEpic]).status, 'planned');
    await epicRow.filter({ hasText: 'plan awaiting approval' }).waitFor({ timeout: 60_000 });
  });

  test('Retry on the dashboard card does the same', { timeout: 240_000 }, async () => {
    writeFileSync(join(out, `fixed-${dashEpic}`), '');
    await palette(page, 'Springfield: Open dashboard');
    const frame: FrameLocator = page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
    const card = frame.locator('.card', { hasText: dashEpic });
    await card.locator('.note', { hasText: 'Blocked: Lisa failed 2 times in a row' }).waitFor({ timeout: 60_000 });
    await screenshot(page, 'faults-dashboard');
    await card.locator('button.retry').click();
    await eventually(
      'a plan proposed after the retry',
      () =>
        cli<{ plan_versions: { status: string }[] }>(repo, ['epic', 'show', dashEpic]).plan_versions.some(
          (v) => v.status === 'proposed',
        ),
      60_000,
    );
    await card.locator('button.retry').waitFor({ state: 'detached', timeout: 60_000 });
    await palette(page, 'Springfield: Stop scheduler');
  });
});
