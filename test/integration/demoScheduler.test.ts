// The demo as a person sees it (`npm run demo`'s editor: the demo repository with stand-in agents
// configured, the extension installed, no test driver, dark theme): one press of Start scheduler
// builds two epics in parallel terminals, verifies, has Bart review and merges them; Lisa plans the
// epic without a plan and the person is told it waits for approval; the trees, the status bar and
// toasts follow. Checked in the store through the CLI and in the tree, with screenshots.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ensureCodeServer } from '../../scripts/codeServer.ts';
import { buildDemoRepo, CLI, type DemoRepo } from '../../scripts/demoRepo.ts';
import { prepareSchedulerDemo, type SchedulerDemo } from '../../scripts/demoScheduler.ts';
import { openEditor, type EditorSession } from './harness.ts';
import {
  allNotifications,
  cli,
  eventually,
  git,
  inNotificationCenter,
  notification,
  openSpringfield,
  palette,
  root,
  row,
  rowShows,
  screenshot,
  sfHere,
  webview,
  UI_MS,
} from './person.ts';

/**
 * Ralph's wrapper: the first builder run waits (at most 60 s) until a builder of another epic has
 * started, then both run the stand-in. So "two epics at once" holds however slow the machine, and
 * fails only if the scheduler never starts the second epic while the first is being built. Once two
 * epics have met, no run waits.
 */
const MEET = String.raw`
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const [dir, ...agent] = process.argv.slice(2);
const met = () => fs.readdirSync(dir).length >= 2;
if (!met()) {
  fs.writeFileSync(path.join(dir, process.env.SPRINGFIELD_EPIC), '');
  const deadline = Date.now() + 60000;
  while (!met() && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
}
const r = spawnSync(agent[0], agent.slice(1), { stdio: 'inherit' });
process.exit(r.status ?? 1);
`;

interface Run {
  id: number;
  epic_id: string;
  role: string;
  status: string;
  started_at: string;
  ended_at: string | null;
  exit_code: number | null;
}

function runs(repo: string): Run[] {
  return cli<{ runs: Run[] }>(repo, ['runs']).runs;
}

function status(repo: string, epic: string): string {
  return cli<{ status: string }>(repo, ['epic', 'show', epic]).status;
}

/** Two runs of different epics that were under way at the same moment. */
function overlapping(all: readonly Run[]): [Run, Run] | undefined {
  const end = (r: Run) => (r.ended_at ? Date.parse(r.ended_at) : Infinity);
  for (const a of all)
    for (const b of all) {
      if (
        a.id < b.id &&
        a.epic_id !== b.epic_id &&
        Date.parse(a.started_at) < end(b) &&
        Date.parse(b.started_at) < end(a)
      )
        return [a, b];
    }
  return undefined;
}

describe('The demo: Start scheduler takes epics to done with stand-in agents (code-server + Chromium)', () => {
  let base: string;
  let demo: DemoRepo;
  let work: SchedulerDemo;
  let session: EditorSession;
  let page: Page;

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-demo-editor-')));
      demo = buildDemoRepo(base, sfHere);
      // As npm run demo does: the config allowed in the demo's own state, which the editor is started with.
      const state = join(base, 'state');
      const meet = join(base, 'meet');
      mkdirSync(meet);
      writeFileSync(join(base, 'meet.cjs'), MEET);
      work = prepareSchedulerDemo(demo, state, 0.3, {
        anyMachine: true,
        ralphPrefix: [process.execPath, join(base, 'meet.cjs'), meet],
      });
      await ensureCodeServer();
      session = await openEditor({
        extensionPath: root,
        workspace: demo.root,
        theme: 'dark',
        width: 1600,
        height: 1000,
        env: { XDG_STATE_HOME: state },
        settings: { 'terminal.integrated.gpuAcceleration': 'off' },
      });
      page = session.page;
      await openSpringfield(page, 300);
      await row(page, 'Order history').waitFor({ timeout: 60_000 });
    },
    { timeout: 15 * 60_000 },
  );

  after(async () => {
    await session?.close();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test(
    'Start scheduler: Ralph builds two epics at once, each in a terminal of its own',
    { timeout: 120_000 },
    async () => {
      const header = page.locator('.part.sidebar .pane-header', { hasText: 'Agents' });
      await header.hover();
      await header.locator('[aria-label="Start scheduler"]').click();
      await page.locator('.part.statusbar').getByText('Scheduler running', { exact: true }).waitFor({ timeout: UI_MS });
      assert.equal(await page.locator('.monaco-dialog-box').count(), 0, 'the demo allowed its config: no question');
      await eventually(
        'two epics built at the same time',
        () => overlapping(runs(demo.root).filter((r) => r.role === 'ralph')) !== undefined,
        60_000,
      );
      // Terminals are named by role and epic title, short enough to read in the tab list.
      await page
        .locator('.part.panel .terminal-tabs-entry', { hasText: 'Ralph · Order history' })
        .first()
        .waitFor({ timeout: UI_MS });
      await page
        .locator('.part.panel .terminal-tabs-entry', { hasText: 'Ralph · Wishlist' })
        .first()
        .waitFor({ timeout: UI_MS });
      await screenshot(page, 'demo-scheduler-parallel');
    },
  );

  test(
    'Order history goes to done: built step by step, verified, reviewed by Bart, merged into main',
    { timeout: 240_000 },
    async () => {
      await eventually('Order history done', () => status(demo.root, work.orders) === 'done', 180_000);
      const own = runs(demo.root).filter((r) => r.epic_id === work.orders);
      assert.deepEqual(
        own.filter((r) => r.status !== 'succeeded'),
        [],
        'every run of the epic succeeded',
      );
      assert.deepEqual(
        own.map((r) => r.role).sort(),
        ['bart', 'ralph', 'ralph', 'ralph'],
        'three builds (one per step) and one review',
      );
      const events = cli<{ events: { entity: string; action: string; reason: string | null }[] }>(demo.root, [
        'events',
        '--epic',
        work.orders,
        '--limit',
        '500',
      ]).events;
      assert.ok(
        events.some(
          (e) => e.entity === 'epic' && e.action === 'steps_completed' && /verification passed/.test(e.reason ?? ''),
        ),
        'completed once the configured verification passed',
      );
      assert.match(
        git(demo.root, 'log', '--format=%s', 'main'),
        new RegExp(`^Order history \\(${work.orders}\\)$`, 'm'),
        'squash-merged into main',
      );
      await rowShows(page, 'Order history', ['merged'], 60_000);
      // Ralph's three runs went to one terminal, the epic's; Bart's to one of his own.
      const tabs = await page.locator('.part.panel .terminal-tabs-entry').allInnerTexts();
      assert.deepEqual(
        ['Ralph · Order history', 'Bart · Order history'].map((n) => tabs.filter((t) => t.includes(n)).length),
        [1, 1],
        `one terminal per epic and role: ${JSON.stringify(tabs)}`,
      );
      await notification(page, new RegExp(`${work.orders} “Order history” is done: reviewed and merged`), 20_000).catch(
        async () =>
          assert.fail(
            `no "done" toast; toasts: ${JSON.stringify(await page.locator('.notifications-toasts .notification-toast').allInnerTexts())}`,
          ),
      );
      await screenshot(page, 'demo-scheduler-done');
    },
  );

  test(
    'Lisa plans Gift cards and the person is told the plan waits for approval; the Agents view and the dashboard follow',
    { timeout: 180_000 },
    async () => {
      await eventually('Wishlist done', () => status(demo.root, work.wishlist) === 'done', 120_000);
      // It came early (Lisa plans while Ralph builds) and its toast has faded: the notification center keeps
      // it, below those that came after.
      await inNotificationCenter(page, 'The plan for “Gift cards” waits for your approval (version 1).', 20_000).catch(
        async () => assert.fail(`no approval notice; notifications: ${JSON.stringify(await allNotifications(page))}`),
      );
      // Told once: by Needs you (the scheduler's own notices tell only that an epic is done).
      const told = (await allNotifications(page)).filter((t) => /Gift cards.*waits for your approval/.test(t));
      assert.equal(told.length, 1, `the plan told once: ${JSON.stringify(told)}`);
      await screenshot(page, 'demo-scheduler-notifications');
      await page.keyboard.press('Escape');
      await rowShows(page, 'Gift cards', ['plan awaiting approval'], 60_000);
      await row(page, 'Bart · Order history').filter({ hasText: 'succeeded' }).first().waitFor({ timeout: UI_MS });
      await palette(page, 'Springfield: Open dashboard');
      await webview(page).locator('.card', { hasText: work.orders }).first().waitFor({ timeout: 60_000 });
      await screenshot(page, 'demo-scheduler-dashboard');
      const header = page.locator('.part.sidebar .pane-header', { hasText: 'Agents' });
      await header.hover();
      await header.locator('[aria-label="Stop scheduler"]').click();
      await page
        .locator('.part.statusbar')
        .getByText('Scheduler running', { exact: true })
        .waitFor({ state: 'detached', timeout: UI_MS });
    },
  );
});
