// Issue 27 as a person sees it in a real VS Code (code-server + Chromium), the sidebar at 300 px: two
// epics under way whose branches both change src/db/user.ts (real git branches, committed in their
// worktrees) show a conflict ahead on their rows, naming the other epic and the file; a third epic
// whose runs spent $20.40 against a $20 budget is paused — its row says so with the spend, its card
// shows the spend against the budget and the message, the day's spend is a figure, and Needs you
// offers Raise budget…. Beside them, the scripted two-epic history of test/helpers/statsHistory.ts,
// dated two days before (so today's spend stays this repository's), shows in the dashboard's Stats view
// as three charts with the numbers behind them, each reachable from the keyboard; none of the three
// epics above has a merged step or a review, so the charts are the history's alone. The repository is
// prepared with the CLI and the store, as the scheduler would leave it; screenshots under test-results/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ensureCodeServer } from '../../scripts/codeServer.ts';
import { CLI } from '../../scripts/demoRepo.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { openStore } from '../../src/core/store/index.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import { script } from '../helpers/statsHistory.ts';
import { clearOfUtcMidnight } from '../helpers/utcDay.ts';
import { openEditor, type EditorSession } from './harness.ts';
import {
  cli,
  epicsTitleAction,
  git,
  openSpringfield,
  root,
  clickRow,
  row,
  rowShows,
  screenshot,
  webview,
  UI_MS,
} from './person.ts';

const plan = (title: string) =>
  `# Plan: ${title}\n\n## Step 1: Change the user store {#step-1}\n**Tasks:**\n- [ ] Do it\n`;
const EPICS = [
  ['Add caching', 'caching'],
  ['Rename users', 'users'],
  ['Search index', 'search'],
] as const;

describe('Conflicts ahead and a paused epic, at 300 px (code-server + Chromium)', () => {
  let base: string;
  let repo: string;
  let session: EditorSession;
  let page: Page;
  const ids: Record<string, string> = {};

  // The dashboard shows today's spend: no midnight within the hook and tests' bounds (16 minutes).
  before(() => clearOfUtcMidnight(16 * 60_000));
  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-show27-')));
      repo = join(base, 'shop');
      mkdirSync(join(repo, 'src', 'db'), { recursive: true });
      mkdirSync(join(repo, 'plans'));
      writeFileSync(join(repo, 'src', 'db', 'user.ts'), 'export const table = "user";\n');
      for (const [title, slug] of EPICS) writeFileSync(join(repo, 'plans', `${slug}.md`), plan(title));
      writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
      git(base, 'init', '-q', '-b', 'main', repo);
      git(repo, 'config', 'user.email', 'p@example.com');
      git(repo, 'config', 'user.name', 'Person');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-qm', 'Shop');
      mkdirSync(join(repo, '.springfield'), { recursive: true });
      writeFileSync(
        join(repo, '.springfield', 'config.json'),
        JSON.stringify({ budget: { epicUsd: 20, dailyUsd: 100 } }, null, 2),
      );
      for (const [title, slug] of EPICS) {
        const id = cli<{ id: string }>(repo, ['epic', 'create', title, '--brief', `${title}.`]).id;
        ids[slug] = id;
        cli(repo, ['plan', 'propose', id, `plans/${slug}.md`], 'lisa');
        cli(repo, ['plan', 'approve', id]);
        const wt = cli<{ worktree_path: string }>(repo, ['epic', 'start', id]).worktree_path;
        if (slug === 'search') continue;
        // Both branches rewrite the same line: merged one after the other, they conflict.
        writeFileSync(join(wt, 'src', 'db', 'user.ts'), `export const table = "${slug}";\n`);
        git(wt, 'commit', '-qam', `${title}: the user table`);
      }
      // What the scheduler leaves when a run's reported cost passes the epic's budget (docs/budgets.md).
      const store = sqliteStore(join(repo, '.springfield', 'state.db'), {});
      const actor = { worktree: repo, agent: 'scheduler' };
      const run = await store.startRun(
        {
          epicId: ids.search as string,
          planPath: null,
          stepAnchor: null,
          role: 'ralph',
          iteration: 1,
          worktree: repo,
          agentId: 'ralph',
          command: ['ralph'],
          pid: 1,
        },
        actor,
      );
      await store.finishRun(
        run.id,
        {
          exitCode: 0,
          signal: null,
          usage: {
            costUsd: 20.4,
            inputTokens: 9000,
            outputTokens: 1200,
            cacheReadTokens: null,
            cacheWriteTokens: null,
            premiumRequests: null,
          },
        },
        actor,
      );
      await store.applyEpicEvent(ids.search as string, 'budget_exhausted', actor, 'budget_exhausted: $20.40 of $20');
      store.close();
      const clock = new ManualClock(Date.now() - 2 * 86_400_000);
      const history = openStore({ location: join(repo, '.springfield', 'state.db'), ifMissing: 'create', clock });
      await script(history, clock);
      await history.close();
      assert.equal(cli<{ status: string }>(repo, ['epic', 'show', ids.search as string]).status, 'blocked');
      assert.deepEqual(
        cli<{ conflicts_ahead: { with: string }[] }>(repo, ['epic', 'show', ids.users as string]).conflicts_ahead.map(
          (c) => c.with,
        ),
        [ids.caching],
        'the CLI predicts it too',
      );

      await ensureCodeServer();
      session = await openEditor({ extensionPath: root, workspace: repo, theme: 'dark', width: 1280, height: 800 });
      page = session.page;
      await openSpringfield(page, 0);
      // The sidebar at 300 px, as a person's default layout has it.
      const bar = await page.locator('.part.sidebar').boundingBox();
      if (bar) {
        const x = bar.x + bar.width + 1;
        const y = bar.y + bar.height / 2;
        await page.mouse.move(x, y);
        await page.mouse.down();
        await page.mouse.move(x + (300 - bar.width), y, { steps: 5 });
        await page.mouse.up();
      }
      await row(page, 'Search index').waitFor({ timeout: 60_000 });
    },
    { timeout: 10 * 60_000 },
  );

  after(async () => {
    await session?.close();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test(
    'the rows: a conflict ahead names the other epic and the file; the paused epic shows its spend',
    { timeout: 120_000 },
    async () => {
      const width = (await page.locator('.part.sidebar').boundingBox())?.width ?? 0;
      assert.ok(Math.abs(width - 300) <= 8, `the sidebar is 300 px wide (${width})`);
      await rowShows(page, 'Rename users', ['conflict ahead with Add caching in user.ts'], 60_000);
      await rowShows(page, 'Add caching', ['conflict ahead with Rename users in user.ts']);
      await rowShows(page, 'Search index', ['paused: $20.40 of $20']);
      // The one fact leads the description, so at 300 px it is what shows (the end of a row is what is cut).
      const shown = await row(page, 'Rename users')
        .locator('.label-description')
        .first()
        .evaluate((el) => {
          const e = el as unknown as { textContent: string | null; getBoundingClientRect(): { right: number } };
          return { text: e.textContent ?? '', right: e.getBoundingClientRect().right };
        });
      assert.match(shown.text, /^conflict ahead with Add caching in user\.ts/);
      await screenshot(page, 'show27-rows-300px');
      const needs = page.locator('.part.sidebar .monaco-list-row', { hasText: 'Raise budget' });
      await needs.first().waitFor({ timeout: UI_MS });
    },
  );

  test(
    "the dashboard: spend against budget on the card, paused with the message, today's spend, the conflict on the card",
    { timeout: 120_000 },
    async () => {
      await epicsTitleAction(page, 'Open dashboard');
      const frame = webview(page);
      const card = (title: string) => frame.locator('.card', { has: frame.locator('.card-title', { hasText: title }) });
      const paused = card('Search index');
      await paused.locator('.spend', { hasText: '$20.40 of $20' }).waitFor({ timeout: 30_000 });
      assert.equal(await paused.locator('.pill').innerText(), 'paused', 'the card says paused, as the tree does');
      assert.match(await paused.locator('.note.paused').innerText(), /^Paused: budget spent, \$20\.40 of \$20/);
      assert.match(
        (await paused.locator('.note.paused').getAttribute('title')) ?? '',
        /springfield epic budget sf-\w+ --usd N\), then springfield epic retry/,
      );
      await paused.locator('button', { hasText: 'Raise budget…' }).waitFor();
      await frame
        .locator('.figure', { hasText: 'spent today of $100' })
        .locator('.figure-value', { hasText: '$20.40' })
        .waitFor({ timeout: UI_MS });
      await card('Rename users')
        .locator('.conflict-ahead', { hasText: 'Conflict ahead with Add caching in src/db/user.ts' })
        .waitFor({ timeout: 30_000 });
      await card('Rename users').locator('.spend', { hasText: '$0 of $20' }).waitFor();
      await screenshot(page, 'show27-dashboard');
    },
  );

  test(
    "Raise budget… from Needs you: the epic's own budget is set, and it is retried",
    { timeout: 120_000 },
    async () => {
      await clickRow(page, row(page, 'Raise budget…').first());
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ timeout: UI_MS });
      assert.equal(await input.inputValue(), '31', 'a suggested limit above the $20.40 spent');
      await input.fill('20');
      await page
        .locator('.quick-input-widget', { hasText: 'more than it has already spent ($20.40)' })
        .waitFor({ timeout: UI_MS });
      await input.press('Enter');
      await page.waitForTimeout(500);
      assert.equal(
        cli<{ status: string }>(repo, ['epic', 'show', ids.search as string]).status,
        'blocked',
        'less than spent is not taken',
      );
      await input.fill('30');
      await screenshot(page, 'show27-raise-budget');
      await input.press('Enter');
      const id = ids.search as string;
      for (
        const deadline = Date.now() + 20_000;
        cli<{ status: string }>(repo, ['epic', 'show', id]).status === 'blocked';
        await page.waitForTimeout(300)
      ) {
        if (Date.now() > deadline) assert.fail(`${id} still blocked after Raise budget…`);
      }
      const shown = cli<{ status: string; budget: { usd: { spent: number; limit: number; limit_from: string } } }>(
        repo,
        ['epic', 'show', id],
      );
      assert.deepEqual(
        [shown.status, shown.budget.usd],
        ['in_progress', { spent: 20.4, limit: 30, limit_from: 'epic' }],
      );
      await rowShows(page, 'Search index', ['in progress']);
    },
  );
  test(
    'the Stats view: three charts with their numbers; each is focusable and says what it shows',
    { timeout: 120_000 },
    async () => {
      await row(page, 'Guide').waitFor({ timeout: UI_MS });
      await epicsTitleAction(page, 'Open dashboard');
      const frame = webview(page);
      const charts = frame.locator('.stats .chart');
      await charts.first().waitFor({ timeout: UI_MS });
      assert.equal(await charts.count(), 3);
      assert.deepEqual(await frame.locator('.stats .chart figcaption').allInnerTexts(), [
        'Cost per merged step, by preset and week',
        'First-pass review acceptance, by preset and kind of step',
        'Sessions per merged step, by preset (line: the seed’s steps + 2 per epic)',
      ]);
      assert.equal(
        await frame.locator('.stats .chart circle.chart-dot').count(),
        2,
        'one point per preset: both merged the same week',
      );
      assert.equal(
        await frame.locator('.stats .chart rect.chart-bar').count(),
        4,
        'two acceptance bars, two session bars',
      );
      const acceptance = charts.nth(1);
      await acceptance.focus();
      assert.equal(
        await acceptance.getAttribute('aria-label'),
        'First-pass review acceptance, by preset and kind of step: claude on docs 2/2, codex on code 0/1',
      );
      assert.equal(await frame.locator('.chart:focus').count(), 1, 'the chart holds the keyboard focus');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      assert.deepEqual(await acceptance.locator('tbody tr').allInnerTexts(), [
        'claude\tdocs\t2/2\t100%',
        'codex\tcode\t0/1\t0%',
      ]);
      const fill = await acceptance
        .locator('rect.chart-bar')
        .first()
        .evaluate(
          (r) => (globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } }).getComputedStyle(r).fill,
        );
      assert.notEqual(fill, 'rgb(0, 0, 0)', `the bar takes a theme chart colour (${fill})`);
      await frame.locator('.stats').scrollIntoViewIfNeeded();
      await screenshot(page, 'dashboard-stats-dark');
    },
  );
});
