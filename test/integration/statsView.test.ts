// The dashboard's Stats view in a real VS Code (code-server + Chromium): the scripted two-epic history
// (test/helpers/statsHistory.ts, dated yesterday) shows as three charts with the numbers behind them,
// each chart reachable from the keyboard. Screenshot under test-results/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { ensureCodeServer } from '../../scripts/codeServer.ts';
import { CLI } from '../../scripts/demoRepo.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { openStore } from '../../src/core/store/index.ts';
import { script } from '../helpers/statsHistory.ts';
import { openEditor, type EditorSession } from './harness.ts';
import { epicsTitleAction, git, openSpringfield, root, row, screenshot, webview } from './person.ts';

describe('The Stats view (code-server + Chromium)', () => {
  let base: string;
  let session: EditorSession;
  let page: Page;
  let frame: FrameLocator;

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-stats-')));
      const repo = join(base, 'shop');
      mkdirSync(join(repo, '.springfield'), { recursive: true });
      writeFileSync(join(repo, 'README.md'), '# shop\n');
      writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'config', 'user.email', 'person@example.com');
      git(repo, 'config', 'user.name', 'A person');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-qm', 'Start');
      const clock = new ManualClock(Date.now() - 86_400_000);
      const store = openStore({ location: join(repo, '.springfield', 'state.db'), ifMissing: 'create', clock });
      await script(store, clock);
      await store.close();
      await ensureCodeServer();
      session = await openEditor({ extensionPath: root, workspace: repo, theme: 'dark' });
      page = session.page;
      await openSpringfield(page, 60);
      await row(page, 'Guide').waitFor({ timeout: 60_000 });
      await epicsTitleAction(page, 'Open dashboard');
      frame = webview(page);
      await frame.locator('.stats .chart').first().waitFor({ timeout: 60_000 });
    },
    { timeout: 10 * 60_000 },
  );
  after(async () => {
    await session?.close();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test('three charts with their numbers; each is focusable and says what it shows', { timeout: 60_000 }, async () => {
    const charts = frame.locator('.stats .chart');
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
  });
});
