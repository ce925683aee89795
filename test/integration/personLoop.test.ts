// Issue 25's editor defects as a person meets them, in a real VS Code (code-server + Chromium) at
// 1,100 px: the demo's stand-in agents took two epics to done (the CLI's scheduler, before the editor
// opens), so the dashboard has merges, retrospectives and verification runs of `node --test`. The
// dashboard does not scroll sideways, its buttons wear the theme's button colours, the Verification
// column names the program without its path, the timeline reads a merge without a gap where the hash
// was and a retrospective as a list, and scrolls with the page. The approval panel of a merged epic
// says it is done with its boxes ticked; one left open while its epic is approved, built and merged
// follows it to done. Screenshots under test-results/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { cleanEnv, ensureCodeServer } from '../../scripts/codeServer.ts';
import { buildDemoRepo, CLI, type DemoRepo } from '../../scripts/demoRepo.ts';
import { prepareSchedulerDemo, type SchedulerDemo } from '../../scripts/demoScheduler.ts';
import { openEditor, type EditorSession } from './harness.ts';
import {
  cli,
  contextAction,
  epicsTitleAction,
  eventually,
  openSpringfield,
  root,
  row,
  rowShows,
  screenshot,
  sfHere,
  toast,
  webview,
  UI_MS,
} from './person.ts';

/** The CLI's scheduler with the demo's allowed config, until nothing is left for it to do. */
function orchestrate(repo: string, state: string): void {
  execFileSync(process.execPath, [CLI, 'orchestrate', '--watch', '--until-idle', '--interval', '1'], {
    cwd: repo,
    env: cleanEnv({ XDG_STATE_HOME: state }),
    stdio: 'ignore',
    timeout: 180_000,
  });
}

type InFrame = {
  document: {
    documentElement: { scrollWidth: number; clientWidth: number };
    body: { append(e: unknown): void };
    createElement(t: string): { style: { background: string }; remove(): void };
  };
  getComputedStyle(e: unknown): { backgroundColor: string; color: string; fontFamily: string; overflowY: string };
};

describe('The person in the loop: dashboard and approval panel after merges (code-server + Chromium, 1,100 px)', () => {
  let base: string;
  let state: string;
  let demo: DemoRepo;
  let work: SchedulerDemo;
  let session: EditorSession;
  let page: Page;

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-loop-')));
      demo = buildDemoRepo(base, sfHere);
      state = join(base, 'state');
      work = prepareSchedulerDemo(demo, state, 0, { anyMachine: true });
      orchestrate(demo.root, state);
      for (const epic of [work.orders, work.wishlist])
        assert.equal(
          cli<{ status: string }>(demo.root, ['epic', 'show', epic]).status,
          'done',
          `${epic} merged before the editor opens`,
        );
      await ensureCodeServer();
      session = await openEditor({
        extensionPath: root,
        workspace: demo.root,
        theme: 'dark',
        width: 1100,
        height: 900,
        env: { XDG_STATE_HOME: state },
      });
      page = session.page;
      await openSpringfield(page, 0);
      await row(page, 'Order history').waitFor({ timeout: 60_000 });
    },
    { timeout: 10 * 60_000 },
  );

  after(async () => {
    await session?.close();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test(
    'The dashboard at 1,100 px: no sideways scroll, theme buttons, the command without its path, a merge and a retrospective in words',
    { timeout: 120_000 },
    async () => {
      await epicsTitleAction(page, 'Open dashboard');
      const frame = webview(page);
      await frame.locator('.card', { hasText: work.orders }).waitFor({ timeout: 60_000 });
      const verification = frame.locator('.panel', { has: frame.locator('h2', { hasText: /^Verification$/ }) });
      await verification.locator('td.command').first().waitFor({ timeout: UI_MS });
      const overflow = await frame.locator('body').evaluate(() => {
        const d = (globalThis as unknown as InFrame).document.documentElement;
        return d.scrollWidth - d.clientWidth;
      });
      assert.ok(overflow <= 0, `no sideways scroll at 1,100 px (scrollWidth exceeds clientWidth by ${overflow} px)`);

      // Every button wears the theme's button colours and font, as VS Code's own buttons do.
      const buttons = await frame.locator('button').evaluateAll((els) => {
        const w = globalThis as unknown as InFrame;
        // A theme variable's colour as the page computes it (a probe element painted with it).
        const colour = (v: string): string => {
          const probe = w.document.createElement('div');
          probe.style.background = `var(${v})`;
          w.document.body.append(probe);
          const c = w.getComputedStyle(probe).backgroundColor;
          probe.remove();
          return c;
        };
        const theme = {
          primary: [colour('--vscode-button-background'), colour('--vscode-button-foreground')],
          secondary: [colour('--vscode-button-secondaryBackground'), colour('--vscode-button-secondaryForeground')],
        };
        const font = w.getComputedStyle(w.document.body).fontFamily;
        return els.map((b) => {
          const cs = w.getComputedStyle(b);
          const [bg, fg] =
            theme[(b as unknown as { className: string }).className.includes('primary') ? 'primary' : 'secondary'];
          return {
            text: (b as unknown as { textContent: string }).textContent,
            ok: cs.backgroundColor === bg && cs.color === fg && cs.fontFamily === font,
            got: [cs.backgroundColor, cs.color, cs.fontFamily],
            want: [bg, fg, font],
          };
        });
      });
      assert.ok(buttons.length >= 4, `buttons on the dashboard (${buttons.length})`);
      assert.deepEqual(
        buttons.filter((b) => !b.ok),
        [],
        'every button styled from the theme',
      );

      // The verification command by its program's name; the full command, path and all, on hover.
      const command = verification.locator('td.command').first();
      assert.equal((await command.innerText()).trim(), 'node --test');
      assert.match((await command.getAttribute('title')) ?? '', /\/node --test$/);
      assert.doesNotMatch(await verification.innerText(), /\//, 'no path in the Verification column');

      // The timeline: a merge without the gap its hash left, a retrospective as a list; the page scrolls, not the list.
      const merged = frame
        .locator('.events > li', { hasText: 'merged it into the main branch' })
        .filter({ hasText: 'Order history' })
        .first();
      assert.match(await merged.innerText(), /scheduler merged it into the main branch: done — one squash commit/);
      const text = await frame.locator('.timeline').innerText();
      assert.doesNotMatch(text, /as\s+with|squash-merged as|- Sessions|; -/, 'no stripped hash, no flattened markdown');
      const retro = frame
        .locator('.events > li', { hasText: 'wrote the retrospective' })
        .filter({ hasText: 'Order history' })
        .first();
      // The minutes as the scheduler recorded them: 0 on a quiet machine, more on a busy one.
      const recorded = cli<{ events: { action: string; data: unknown }[] }>(demo.root, [
        'events',
        '--epic',
        work.orders,
      ]).events.find((e) => e.action === 'retrospective')?.data as { approval_to_merge_minutes?: unknown } | undefined;
      const minutes = recorded?.approval_to_merge_minutes;
      assert.ok(typeof minutes === 'number' && minutes < 60, `the retrospective's minutes: ${String(minutes)}`);
      assert.deepEqual(await retro.locator('ul.lines li').allInnerTexts(), [
        'Agent sessions: Bart 1, Ralph 3 (4 in all)',
        'Plan versions: 1 · build iterations: 1',
        'Failed runs: none · failed verifications: none',
        `From approval to merge: ${minutes} min`,
      ]);
      assert.equal(
        await frame
          .locator('.events')
          .evaluate((e) => (globalThis as unknown as InFrame).getComputedStyle(e).overflowY),
        'visible',
        'the timeline does not scroll inside the page',
      );
      await screenshot(page, 'loop-dashboard-1100px');
      await retro.scrollIntoViewIfNeeded();
      await screenshot(page, 'loop-dashboard-timeline');
      await page.keyboard.press('Control+W');
    },
  );

  test('The approval panel of a merged epic says it is done, its boxes ticked', { timeout: 60_000 }, async () => {
    const frame = await openApproval(page, 'Order history', work.orders);
    await frame.locator('.progress', { hasText: 'Done: merged into the main branch' }).waitFor({ timeout: UI_MS });
    assert.match(await frame.locator('.progress').innerText(), /3 of 3 steps completed/);
    await checkDone(frame);
    await screenshot(page, 'loop-approval-done');
    await page.keyboard.press('Control+W');
  });

  test('An approval panel left open follows its epic from approved to merged', { timeout: 240_000 }, async () => {
    const frame = await openApproval(page, 'Gift cards', work.giftCards);
    await frame.locator('#approve').click();
    await frame.locator('.result.ok', { hasText: 'when the epic starts' }).waitFor({ timeout: UI_MS });
    await frame.locator('#start-epic').waitFor({ timeout: UI_MS });
    // The demo's "Fix typo in greeting" waits for the person's review and changed src/greeting.ts, which
    // Gift cards' plan declares: files-aware scheduling would rightly hold Gift cards behind it. The
    // person sets it aside first, so this test follows Gift cards alone.
    cli(demo.root, ['epic', 'defer', demo.epics.typo, '--reason', 'reviewed later']);
    orchestrate(demo.root, state);
    assert.equal(
      cli<{ status: string }>(demo.root, ['epic', 'show', work.giftCards]).status,
      'done',
      'the scheduler took Gift cards to done',
    );
    await frame.locator('.progress', { hasText: 'Done: merged into the main branch' }).waitFor({ timeout: 60_000 });
    await checkDone(frame);
    assert.equal(await frame.locator('.result').count(), 0, 'the note about the approval went once the epic moved on');
    assert.equal(await frame.locator('#start-epic').count(), 0, 'no Start epic on a merged epic');
    await screenshot(page, 'loop-approval-followed');
    await page.keyboard.press('Control+W');
  });

  test(
    'New plan… on an epic the person said they would write: Ask Lisa to write it, Run scheduler once, and her plan waits for approval',
    { timeout: 240_000 },
    async () => {
      const id = cli<{ id: string }>(demo.root, [
        'epic',
        'create',
        'Loyalty points',
        '--brief',
        'Points per order. Acceptance: the balance shows at checkout.',
        '--planner',
        'person',
      ]).id;
      await rowShows(page, 'Loyalty points', ['waits for your plan'], 60_000);
      const choices = page
        .locator('.quick-input-widget', { hasText: 'who writes it?' })
        .locator('.quick-input-list .monaco-list-row');
      await contextAction(page, row(page, 'Loyalty points'), 'New plan…', choices.first());
      const offered = await choices.allInnerTexts();
      assert.match(
        offered[0] ?? '',
        /Write it myself/,
        `the person said they would write it: their way first (${JSON.stringify(offered)})`,
      );
      assert.match(offered[1] ?? '', /Ask Lisa to write it[\s\S]*the scheduler starts her/, JSON.stringify(offered));
      await screenshot(page, 'loop-new-plan-who-writes');
      // The pick closes when something else takes the focus (a toast, an agent's terminal): opened again then.
      const lisa = choices.filter({ hasText: 'Ask Lisa to write it' });
      for (let attempt = 1; ; attempt++) {
        if (!(await lisa.isVisible())) await contextAction(page, row(page, 'Loyalty points'), 'New plan…', lisa);
        try {
          await lisa.click({ timeout: 15_000 });
          break;
        } catch (err) {
          if (attempt >= 3) throw err;
          console.log(`[pick] "Ask Lisa to write it" closed before the click (try ${attempt}): opening it again`);
        }
      }
      await eventually(
        "the epic is Lisa's to plan",
        () => cli<{ planner: string }>(demo.root, ['epic', 'show', id]).planner === 'lisa',
      );
      assert.equal(
        cli<{ versions: unknown[] }>(demo.root, ['plan', 'show', id]).versions.length,
        0,
        'nothing ran unasked',
      );
      await toast(page, /Lisa writes the plan for “Loyalty points” when the scheduler runs/)
        .getByRole('button', { name: 'Run scheduler once' })
        .click({ timeout: UI_MS });
      await rowShows(page, 'Loyalty points', ['plan awaiting approval'], 120_000);
      const versions = cli<{ versions: { status: string; proposed_agent: string | null }[] }>(demo.root, [
        'plan',
        'show',
        id,
      ]).versions;
      assert.deepEqual(
        versions.map((v) => v.status),
        ['proposed'],
      );
      await screenshot(page, 'loop-lisa-wrote-it');
    },
  );
});

/** Opens an epic's approval panel from its row's context menu. */
async function openApproval(page: Page, title: string, epicId: string): Promise<FrameLocator> {
  const frame = webview(page);
  await contextAction(
    page,
    row(page, title),
    'Review plan',
    frame.locator('h1', { hasText: `Plan for ${epicId}` }),
    20_000,
  );
  return frame;
}

/** What a merged epic's panel shows: done in the header, every box ticked, nothing about starting it. */
async function checkDone(frame: FrameLocator): Promise<void> {
  assert.match(await frame.locator('header').innerText(), /epic done/);
  const items = await frame.locator('.plan li').allInnerTexts();
  assert.ok(items.length > 0 && items.every((t) => t.startsWith('☑')), `every box ticked: ${JSON.stringify(items)}`);
  const steps = await frame.locator('.step-status').allInnerTexts();
  assert.ok(
    steps.length > 0 && steps.every((t) => t === 'completed'),
    `every step completed: ${JSON.stringify(steps)}`,
  );
  assert.doesNotMatch(await frame.locator('body').innerText(), /when the epic starts|Next: start the work/);
}
