// The dashboard as a person sees it, at 20 steps, in a real VS Code (code-server + Chromium), dark and
// then light once the person switches the theme: the whole graph fits the panel's width (arrows,
// status fills), the figures sit on one line each, leases name their epic and plan, the timeline reads
// in words and filters, and the cards open the epic in the tree and its plan. Screenshots under
// test-results/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { cleanEnv, ensureCodeServer } from '../../scripts/codeServer.ts';
import { CLI } from '../../scripts/demoRepo.ts';
import { openEditor, type EditorSession } from './harness.ts';
import {
  cli,
  epicsTitleAction,
  git,
  openSpringfield,
  palette,
  root,
  row,
  screenshot,
  webview,
  UI_MS,
} from './person.ts';

const PLAN = 'plans/search.md';
const TITLES = [
  'Tokeniser',
  'Unicode folding',
  'Stop words',
  'Stemming',
  'Inverted index',
  'Field weights',
  'Phrase queries',
  'Prefix search',
  'Fuzzy matching',
  'Synonyms',
  'Ranking',
  'Highlighting',
  'Pagination',
  'Facets',
  'Query parser',
  'Search API',
  'Rate limits',
  'Search page',
  'Load test',
  'Launch notes',
];
const DEPS: Readonly<Record<number, readonly number[]>> = {
  2: [1],
  3: [1],
  4: [1],
  5: [2, 3],
  6: [4],
  7: [5],
  8: [5],
  9: [5],
  10: [6],
  11: [7, 8],
  12: [9, 10],
  13: [11],
  14: [11],
  15: [12],
  16: [13, 14],
  17: [15],
  18: [16],
  19: [16, 17],
  20: [18, 19],
};
const EDGES = Object.values(DEPS).reduce((n, d) => n + d.length, 0);

function planText(): string {
  return `# Plan: Product search\n\n## Approach\nA tokeniser, an inverted index and a ranking pass.\n\n${TITLES.map(
    (t, i) => {
      const n = i + 1;
      const deps = DEPS[n]?.map((d) => `#step-${d}`).join(', ') ?? 'none';
      return `## Step ${n}: ${t} {#step-${n}}\n**Depends on:** ${deps}\n**Tasks:**\n- [ ] Build ${t.toLowerCase()}\n- [ ] Review ${t.toLowerCase()}\n**Tests:**\n- [ ] Tests for ${t.toLowerCase()}\n`;
    },
  ).join('\n')}`;
}

/** A repository with a 20-step epic part done: completed steps, two live claims, one expired, a run that reported its cost; an epic waiting for approval; one set aside. */
function buildRepo(base: string): { repo: string; search: string; billing: string; analytics: string } {
  const repo = join(base, 'shop');
  mkdirSync(join(repo, 'plans'), { recursive: true });
  writeFileSync(join(repo, PLAN), planText());
  writeFileSync(
    join(repo, 'plans', 'billing.md'),
    '# Plan: Billing export\n\n## Step 1: CSV writer {#step-1}\n**Tasks:**\n- [ ] Write rows\n',
  );
  writeFileSync(join(repo, 'README.md'), '# shop\n');
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.email', 'person@example.com');
  git(repo, 'config', 'user.name', 'A person');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'Plans');
  const search = cli<{ id: string }>(repo, [
    'epic',
    'create',
    'Product search',
    '--brief',
    'Find products by name. Acceptance: results in 100 ms.',
  ]).id;
  cli(repo, ['plan', 'propose', search, PLAN], 'lisa');
  cli(repo, ['plan', 'approve', search]);
  // The agents build in the epic's own worktree, where its steps are claimed (docs/lifecycle.md, "Where work happens").
  const worktree = cli<{ worktree_path: string }>(repo, ['epic', 'start', search]).worktree_path;
  for (const agent of ['ralph-a', 'ralph-b', 'ralph-a', 'ralph-b', 'ralph-a', 'ralph-b', 'ralph-a']) {
    const c = cli<{ step_anchor: string }>(worktree, ['claim', PLAN], agent);
    cli(worktree, ['update', PLAN, c.step_anchor, '--all', 'completed'], agent);
    cli(worktree, ['complete', PLAN, c.step_anchor], agent);
  }
  cli(worktree, ['claim', PLAN, '--lease', '5400'], 'ralph-a');
  cli(worktree, ['claim', PLAN, '--lease', '420'], 'ralph-b');
  cli(worktree, ['claim', PLAN, '--lease', '1'], 'ralph-c');
  // Bart's run reports its usage as Claude Code does; the reader is named in the (allowed) config, which goes once the run is stored.
  const config = join(repo, '.springfield', 'config.json');
  writeFileSync(config, JSON.stringify({ usage: { bart: 'claude' } }));
  execFileSync(process.execPath, [CLI, 'allow'], { cwd: repo, env: cleanEnv(), stdio: 'ignore' });
  const report = JSON.stringify({
    type: 'result',
    total_cost_usd: 0.42,
    usage: { input_tokens: 1500, output_tokens: 300 },
  });
  execFileSync(
    process.execPath,
    [
      CLI,
      'run',
      '--role',
      'bart',
      '--epic',
      search,
      '--',
      process.execPath,
      '-e',
      `console.log(${JSON.stringify(report)})`,
    ],
    { cwd: worktree, env: cleanEnv({ SPRINGFIELD_AGENT: 'bart' }), stdio: 'ignore' },
  );
  rmSync(config);
  const billing = cli<{ id: string }>(repo, [
    'epic',
    'create',
    'Billing export',
    '--brief',
    'Export invoices as CSV.',
  ]).id;
  cli(repo, ['plan', 'propose', billing, 'plans/billing.md'], 'lisa');
  const analytics = cli<{ id: string }>(repo, [
    'epic',
    'create',
    'Search analytics',
    '--brief',
    'Count what people search for.',
  ]).id;
  cli(repo, ['epic', 'defer', analytics, '--reason', 'Not this quarter']);
  return { repo, search, billing, analytics };
}

type InFrame = { document: { documentElement: { scrollWidth: number; clientWidth: number } } };

async function openDashboard(page: Page): Promise<FrameLocator> {
  await epicsTitleAction(page, 'Open dashboard');
  const frame = webview(page);
  await frame.locator('svg.graph .node').first().waitFor({ timeout: 60_000 });
  return frame;
}

async function checkLayout(frame: FrameLocator): Promise<void> {
  assert.equal(await frame.locator('svg.graph .node').count(), 20, 'every step of the plan is drawn');
  assert.equal(await frame.locator('svg.graph path.edge[marker-end]').count(), EDGES, 'one arrow per dependency');
  const overflow = await frame.locator('body').evaluate(() => {
    const d = (globalThis as unknown as InFrame).document.documentElement;
    return d.scrollWidth - d.clientWidth;
  });
  assert.ok(overflow <= 0, `no horizontal scroll (scrollWidth exceeds clientWidth by ${overflow} px)`);
  const svgBox = await frame.locator('svg.graph').boundingBox();
  const panelBox = await frame.locator('.graph-panel').boundingBox();
  assert.ok(
    svgBox && panelBox && svgBox.x + svgBox.width <= panelBox.x + panelBox.width + 1,
    'the graph fits its panel',
  );
  const fills = await frame
    .locator('svg.graph .node rect')
    .evaluateAll((rects) => [
      ...new Set(
        rects.map(
          (r) => (globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } }).getComputedStyle(r).fill,
        ),
      ),
    ]);
  assert.ok(fills.length >= 4, `status fills differ (${fills.join(' | ')})`);
  const heights = await frame
    .locator('.figure')
    .evaluateAll((els) => els.map((e) => (e as unknown as { offsetHeight: number }).offsetHeight));
  assert.ok(Math.max(...heights) - Math.min(...heights) <= 2, `figure cards line up (heights ${heights.join(', ')})`);
  const labels = await frame
    .locator('.figure-label')
    .evaluateAll((els) =>
      els.map(
        (e) =>
          (e as unknown as { scrollHeight: number; clientHeight: number }).scrollHeight <=
          (e as unknown as { clientHeight: number }).clientHeight + 1,
      ),
    );
  assert.ok(labels.every(Boolean), 'no figure label wraps');
}

describe('The dashboard at 20 steps (code-server + Chromium)', () => {
  let base: string;
  let fixture: ReturnType<typeof buildRepo>;

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-dash-')));
      fixture = buildRepo(base);
      await ensureCodeServer();
    },
    { timeout: 10 * 60_000 },
  );

  after(() => {
    if (base) rmSync(base, { recursive: true, force: true });
  });

  // One editor for both themes: the person switches to the light theme after the dark tests.
  let session: EditorSession;
  let page: Page;
  before(
    async () => {
      session = await openEditor({ extensionPath: root, workspace: fixture.repo, theme: 'dark' });
      page = session.page;
      await openSpringfield(page, 60);
      await row(page, 'Product search').waitFor({ timeout: 60_000 });
    },
    { timeout: 5 * 60_000 },
  );
  after(async () => session?.close());

  describe('in the dark theme', () => {
    let frame: FrameLocator;
    before(async () => {
      frame = await openDashboard(page);
    });

    test('the graph fits the width with arrows and status fills; figures line up', { timeout: 60_000 }, async () => {
      await checkLayout(frame);
      assert.equal(await frame.locator('svg.graph .node.completed').count(), 7);
      assert.equal(await frame.locator('svg.graph .node.expired').count(), 1);
      assert.ok((await frame.locator('svg.graph .node.claimed').count()) >= 2);
      await frame.locator('.figure', { hasText: 'steps claimed' }).locator('.figure-value', { hasText: '3' }).waitFor();
      await screenshot(page, 'dashboard-20-steps-dark');
    });

    test(
      'leases name their step, epic and plan and count down; nothing shows a path, hash or ISO time',
      { timeout: 60_000 },
      async () => {
        const lease = frame.locator('.panel', { hasText: 'Claimed steps' }).locator('tr', { hasText: 'ralph-b' });
        // The epic and the plan by their titles; the epic's id and the plan's path on hover.
        assert.match(await lease.innerText(), /Step \d+ \w+[\s\S]*Product search[\s\S]*ralph-b[\s\S]*\d+m \d+s/);
        assert.equal(
          await lease.locator('td', { hasText: 'Product search' }).getAttribute('title'),
          `${fixture.search} · plans/search.md`,
        );
        const text = await frame.locator('body').innerText();
        assert.doesNotMatch(text, /\/tmp\/|springfield-dash-/, 'no absolute paths');
        assert.doesNotMatch(text, /\d{4}-\d{2}-\d{2}T\d{2}:/, 'no ISO timestamps');
        assert.doesNotMatch(text, /\b[0-9a-f]{12,}\b/, 'no hashes');
        await frame.locator('.events > li', { hasText: 'ralph-a claimed Step' }).first().waitFor();
        const tags = await frame.locator('.events .epic-tag').allInnerTexts();
        assert.ok(
          tags.length > 0 && tags.every((t) => !/^sf-[0-9a-f]+$/.test(t.trim())),
          `the timeline names epics by title: ${tags.join(', ')}`,
        );
        await frame.locator('.grid').scrollIntoViewIfNeeded();
        await screenshot(page, 'dashboard-leases-runs-dark');
      },
    );

    test('the timeline filters by epic, by who and by kind', { timeout: 60_000 }, async () => {
      const all = await frame.locator('.events > li').count();
      await frame.locator('select[aria-label="What"]').selectOption('plan');
      const plans = await frame.locator('.events > li').allInnerTexts();
      assert.ok(plans.length > 0 && plans.length < all, `kind filter narrows (${plans.length} of ${all})`);
      assert.ok(
        plans.some((t) => /lisa proposed version 1 of the plan/.test(t)),
        plans.join('\n'),
      );
      await frame.locator('select[aria-label="What"]').selectOption('');
      await frame.locator('select[aria-label="Who"]').selectOption('bart');
      const bart = await frame.locator('.events > li').allInnerTexts();
      assert.ok(bart.length > 0 && bart.every((t) => t.includes('bart')), bart.join('\n'));
      await frame.locator('select[aria-label="Who"]').selectOption('');
      await frame.locator('select[aria-label="Epic"]').selectOption(fixture.billing);
      const billing = await frame.locator('.events > li').allInnerTexts();
      // Each entry names its epic by title (its id is on hover).
      assert.ok(billing.length > 0 && billing.every((t) => t.includes('Billing export')), billing.join('\n'));
      await frame.locator('.timeline').scrollIntoViewIfNeeded();
      await screenshot(page, 'dashboard-timeline-filtered');
      await frame.locator('select[aria-label="Epic"]').selectOption('');
    });

    test(
      'a card shows what its epic cost; the debt register lists the epic set aside, with the reason',
      { timeout: 60_000 },
      async () => {
        const card = frame.locator('.card', { hasText: fixture.search });
        assert.deepEqual(await card.locator('.card-meta', { hasText: 'tokens' }).allInnerTexts(), [
          '$0.42 · 1,800 tokens',
        ]);
        assert.equal(
          await frame
            .locator('.card', { hasText: fixture.billing })
            .locator('.card-meta', { hasText: 'tokens' })
            .count(),
          0,
          'no cost line where no run reported one',
        );
        const debt = frame.locator('.panel', { hasText: 'Debt register' });
        assert.match(
          await debt.locator('tr', { hasText: fixture.analytics }).innerText(),
          /Search analytics\s+Not this quarter\s+\S+/,
        );
        assert.equal(await debt.locator('tr').count(), 1, 'only the deferred epic is in debt');
      },
    );

    test(
      'a card opens its epic in the tree, and its plan (or the plan waiting for approval)',
      { timeout: 180_000 },
      async () => {
        await frame.locator('.card', { hasText: fixture.search }).getByRole('button', { name: 'Show in tree' }).click();
        await page.waitForFunction(
          (label) =>
            [
              ...(
                globalThis as unknown as {
                  document: { querySelectorAll(s: string): Iterable<{ getAttribute(n: string): string | null }> };
                }
              ).document.querySelectorAll('.part.sidebar .monaco-list-row[aria-selected="true"]'),
            ].some((r) => (r.getAttribute('aria-label') ?? '').startsWith(label)),
          'Product search',
          { timeout: 60_000 },
        );
        await frame.locator('.card', { hasText: fixture.search }).getByRole('button', { name: 'Open plan' }).click();
        await page.locator('.tab', { hasText: 'search.md' }).waitFor({ timeout: 60_000 });
        await page.locator('.tab', { hasText: 'Springfield' }).first().click();
        await frame.locator('.card', { hasText: fixture.billing }).getByRole('button', { name: 'Review plan' }).click();
        await page.locator('.tab', { hasText: `Plan · ${fixture.billing}` }).waitFor({ timeout: 60_000 });
      },
    );
  });

  describe('in the light theme', () => {
    before(
      async () => {
        // The editors the dark tests opened go first, so the dashboard opens anew, in the light theme.
        await palette(page, 'View: Close All Editors');
        await page.locator('.part.editor .tab').first().waitFor({ state: 'detached', timeout: UI_MS });
        // Preferences: Color Theme, from its keys (Ctrl+K Ctrl+T), as a person picks one.
        await page.keyboard.press('Control+K');
        await page.keyboard.press('Control+T');
        const input = page.locator('.quick-input-widget input[placeholder^="Select Color Theme"]');
        await input.waitFor({ timeout: UI_MS });
        await input.fill('Light Modern');
        await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Light Modern' }).first().waitFor();
        await page.keyboard.press('Enter');
        await page.locator('.monaco-workbench.vs').waitFor({ timeout: UI_MS });
      },
      { timeout: 60_000 },
    );

    test("the same layout holds, in the theme's own colours", { timeout: 60_000 }, async () => {
      const frame = await openDashboard(page);
      await checkLayout(frame);
      const background = await frame
        .locator('body')
        .evaluate(
          (b) =>
            (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(b)
              .backgroundColor,
        );
      const [r, g, bl] = (background.match(/\d+/g) ?? []).map(Number);
      assert.ok((r ?? 0) + (g ?? 0) + (bl ?? 0) > 600, `a light background (${background})`);
      await screenshot(page, 'dashboard-20-steps-light');
    });
  });
});
