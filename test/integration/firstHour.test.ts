// A person's first hour, in a real VS Code (code-server + Chromium) set up as a user has it: the
// extension installed, no test driver, so notifications show as toasts. From an empty repository:
// create an epic, write its plan from the template, propose, approve, start and claim, all in the UI.
// The epic is built in its own worktree (docs/lifecycle.md, "Where work happens"): the claim is made
// there, the person is offered to open it, and a step action tried in this window says where to go;
// the person opens it here, then Complete step… with open items, the walkthrough's ticks, and a
// takeover of an expired lease happen in the window on the epic's worktree.
// Every step is checked in the store through the CLI, with a screenshot under test-results/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ensureCodeServer } from '../../scripts/codeServer.ts';
import { CLI } from '../../scripts/demoRepo.ts';
import { extensionHostErrors } from '../../scripts/extensionHostLog.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { openEditor, workbenchOpensAt, type EditorSession } from './harness.ts';
import {
  cli,
  clickNotification,
  dismissNotification,
  contextAction,
  epicsTitleAction,
  git,
  notification,
  openSpringfield,
  palette,
  root,
  row,
  rowShows,
  screenshot,
  toast,
  webview,
  UI_MS,
} from './person.ts';

const TITLE = 'Add a caching layer';
const BRIEF = 'Reads are slow. Acceptance: repeated reads hit the cache; writes invalidate.';
const PLAN = 'plans/add-a-caching-layer.md';

interface Epic {
  id: string;
  title: string;
  brief: string;
  status: string;
  planner: string;
}
interface Step {
  anchor: string;
  status: string;
  claimed_by: string | null;
  agent: string | null;
  items: { text: string; status: string }[];
}

function steps(repo: string): Step[] {
  return (
    cli<{ plans: { plan_path: string; steps: Step[] }[] }>(repo, ['show']).plans.find((p) => p.plan_path === PLAN)
      ?.steps ?? []
  );
}

describe('From an empty repository to a claimed step, all in the editor', () => {
  let base: string;
  let repo: string;
  let session: EditorSession;
  let page: Page;
  let epic: Epic;
  /** The epic's own worktree, where its steps are claimed and built. */
  let worktree: string;

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-first-')));
      repo = join(base, 'notes-app');
      mkdirSync(join(repo, 'src'), { recursive: true });
      writeFileSync(join(repo, 'README.md'), '# notes-app\n\nA small app.\n');
      writeFileSync(join(repo, 'src', 'store.ts'), 'export const notes = new Map<string, string>();\n');
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'config', 'user.email', 'person@example.com');
      git(repo, 'config', 'user.name', 'A person');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-qm', 'An app without Springfield');
      await ensureCodeServer();
      session = await openEditor({ extensionPath: root, workspace: repo, theme: 'dark' });
      page = session.page;
      await openSpringfield(page);
    },
    { timeout: 15 * 60_000 },
  );

  after(async () => {
    await session?.close();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test('the welcome view offers Create epic… and New plan…, in plain words', { timeout: 60_000 }, async () => {
    const welcome = page.locator('.part.sidebar .welcome-view-content').first();
    await welcome.getByRole('button', { name: 'Create epic…' }).waitFor({ timeout: 30_000 });
    await welcome.getByRole('button', { name: 'New plan…' }).waitFor();
    const text = await page.locator('.part.sidebar').innerText();
    assert.doesNotMatch(text, /`/, 'no raw Markdown backticks in the welcome texts');
    assert.match(text, /Initialise with a plan file/);
    await screenshot(page, 'first-welcome');
  });

  test(
    'Initialise, with no plan file in the repository, offers New plan… (README.md is not offered as a plan)',
    { timeout: 60_000 },
    async () => {
      await page
        .locator('.part.sidebar .welcome-view-content')
        .first()
        .getByRole('button', { name: 'Initialise with a plan file…' })
        .click();
      const rows = page.locator('.quick-input-list .monaco-list-row');
      await rows.first().waitFor({ timeout: UI_MS });
      const labels = await rows.allInnerTexts();
      assert.equal(labels.length, 1, `only New plan… is offered: ${JSON.stringify(labels)}`);
      assert.match(labels[0] ?? '', /New plan…[\s\S]*no plan file in this repository yet/);
      await screenshot(page, 'first-initialise-offers-new-plan');
      await page.keyboard.press('Escape');
      assert.equal(existsSync(join(repo, '.springfield')), false, 'nothing was written');
    },
  );

  test(
    'Create epic… asks a title, a brief and who writes its plan; a toast offers New plan…; .springfield/ is ignored by git',
    { timeout: 60_000 },
    async () => {
      await page
        .locator('.part.sidebar .welcome-view-content')
        .first()
        .getByRole('button', { name: 'Create epic…' })
        .click();
      const input = page.locator('.quick-input-widget input');
      await page.locator('.quick-input-widget', { hasText: 'New epic (1/3)' }).waitFor();
      await input.fill(TITLE);
      await page.keyboard.press('Enter');
      await page.locator('.quick-input-widget', { hasText: 'New epic (2/3)' }).waitFor();
      await input.fill(BRIEF);
      await page.keyboard.press('Enter');
      // Who writes its plan: with no agent for Lisa yet, the person comes first (docs/lifecycle.md, "Who plans").
      const who = page
        .locator('.quick-input-widget', { hasText: 'New epic (3/3): who writes its plan?' })
        .locator('.quick-input-list .monaco-list-row');
      await who.first().waitFor({ timeout: UI_MS });
      const offered = await who.allInnerTexts();
      assert.match(offered[0] ?? '', /I write it/, JSON.stringify(offered));
      assert.match(offered[1] ?? '', /Lisa writes it[\s\S]*no agent plays Lisa yet/, JSON.stringify(offered));
      await page.keyboard.press('Enter');
      const created = toast(page, /Created sf-[0-9a-f]+: Add a caching layer\. Next: write its plan\./);
      await created.waitFor({ timeout: UI_MS });
      const epics = cli<{ epics: Epic[] }>(repo, ['epic', 'list']).epics;
      assert.equal(epics.length, 1);
      epic = epics[0] as Epic;
      assert.deepEqual([epic.title, epic.status], [TITLE, 'planned']);
      assert.equal(cli<Epic>(repo, ['epic', 'show', epic.id]).brief, BRIEF);
      assert.equal(
        readFileSync(join(repo, '.gitignore'), 'utf8'),
        '.springfield/\n',
        'the first write ignored the state store',
      );
      assert.doesNotMatch(
        git(repo, 'status', '--porcelain', '--untracked-files=all'),
        /\.springfield/,
        'nothing of .springfield/ shows in git status',
      );
      // The person said they write it: the epic waits for their plan, and no scheduler would start Lisa on it.
      assert.equal(epic.planner, 'person');
      await rowShows(page, TITLE, ['waits for your plan']);
      await screenshot(page, 'first-epic-created');
    },
  );

  test(
    'New plan… asks who writes it (Lisa needs an agent first); Write it myself writes the template for the epic, which parses, opens it and offers to propose it',
    { timeout: 60_000 },
    async () => {
      await clickNotification(page, /Created sf-/, 'New plan…');
      const choices = page
        .locator('.quick-input-widget', { hasText: 'who writes it?' })
        .locator('.quick-input-list .monaco-list-row');
      await choices.first().waitFor({ timeout: UI_MS });
      const offered = await choices.allInnerTexts();
      assert.match(offered[0] ?? '', /Write it myself/, JSON.stringify(offered));
      assert.match(offered[1] ?? '', /Ask Lisa to write it[\s\S]*no agent plays Lisa yet/, JSON.stringify(offered));
      await screenshot(page, 'first-new-plan-who-writes');
      await page.keyboard.press('Enter');
      await page.locator('.tab', { hasText: 'add-a-caching-layer.md' }).waitFor({ timeout: UI_MS });
      const text = readFileSync(join(repo, PLAN), 'utf8');
      const plan = parsePlan(text, PLAN);
      assert.equal(plan.title, TITLE);
      assert.deepEqual(
        plan.steps.map((s) => s.anchor),
        ['step-1', 'step-2', 'step-3'],
      );
      assert.deepEqual(
        plan.steps.flatMap((s) => s.items.filter((i) => i.kind === 'test').map((i) => i.text)),
        ['repeated reads hit the cache', 'writes invalidate'],
      );
      assert.equal(plan.sections.Intent, BRIEF);
      await page.locator('.monaco-editor .view-line', { hasText: '## Step 1: Read the code' }).waitFor();
      await toast(page, `Wrote ${PLAN} for ${epic.id}`).waitFor();
      await screenshot(page, 'first-new-plan');
    },
  );

  test("Propose plan offers the epic's own plan first and opens the approval panel", { timeout: 180_000 }, async () => {
    await clickNotification(page, `Wrote ${PLAN}`, 'Propose plan');
    const first = page.locator('.quick-input-list .monaco-list-row').first();
    await first.waitFor({ timeout: UI_MS });
    assert.match(await first.innerText(), new RegExp(`${PLAN.replace(/[.]/g, '\\.')}[\\s\\S]*this epic's plan`));
    await screenshot(page, 'first-propose-pick');
    await page.keyboard.press('Enter');
    const frame = webview(page);
    await frame.locator('h1', { hasText: `Plan for ${epic.id} · ${TITLE}` }).waitFor({ timeout: 60_000 });
    await frame.getByText('proposed by you').waitFor();
    const shown = cli<{ version: { version: number; status: string; plan_path: string } }>(repo, [
      'plan',
      'show',
      epic.id,
    ]).version;
    assert.deepEqual([shown.version, shown.status, shown.plan_path], [1, 'proposed', PLAN]);
  });

  test(
    "Approve, then Start and claim the first step, from the panel: claimed in the epic's own worktree, which is offered",
    { timeout: 60_000 },
    async () => {
      const frame = webview(page);
      await frame.locator('#approve').click();
      await frame.locator('.result.ok', { hasText: `${epic.id} is ready` }).waitFor({ timeout: UI_MS });
      await frame.locator('#start-and-claim').waitFor();
      await frame.locator('#open-handoff', { hasText: `TODO-${epic.id}.md` }).waitFor();
      assert.equal(cli<Epic>(repo, ['epic', 'show', epic.id]).status, 'ready');
      await screenshot(page, 'first-approved');
      await frame.locator('#start-and-claim').click();
      await frame
        .locator('.result.ok', {
          hasText: `Started ${epic.id} in its own worktree ${epic.id} (branch springfield/${epic.id})`,
        })
        .waitFor({ timeout: UI_MS });
      await frame
        .locator('.result.ok', { hasText: 'Claimed Step 1: Read the code and write the first failing test' })
        .waitFor();
      worktree = join(`${repo}.springfield`, epic.id);
      const shown = cli<Epic & { worktree_path: string; branch: string }>(repo, ['epic', 'show', epic.id]);
      assert.deepEqual(
        [shown.status, shown.worktree_path, shown.branch],
        ['in_progress', worktree, `springfield/${epic.id}`],
      );
      assert.equal(git(worktree, 'rev-parse', '--abbrev-ref', 'HEAD'), `springfield/${epic.id}`);
      const first = steps(repo)[0];
      assert.deepEqual(
        [first?.anchor, first?.status, first?.claimed_by, first?.agent],
        ['step-1', 'claimed', worktree, null],
      );
      // From this window (the main checkout) the step is held in the epic's worktree, named by its folder.
      await rowShows(page, 'Read the code and write the first failing test', [`in ${epic.id} · 1h59m`]);
      assert.equal(
        await frame.locator('#start-and-claim').count(),
        0,
        'the start buttons go once the epic is in progress',
      );
      // Its toast, or its entry in the notification center once the toast has faded (a busy machine).
      const offer = await notification(page, 'Claimed Step 1: Read the code and write the first failing test');
      assert.match(await offer.innerText(), new RegExp(`Its epic is built in ${epic.id}: work there`));
      await offer.getByRole('button', { name: 'Open in new window' }).waitFor();
      await offer.getByRole('button', { name: 'Open here' }).waitFor();
      await screenshot(page, 'first-claimed');
      // The center, if it was opened, goes again: while it shows, VS Code shows no toasts.
      const center = page.locator('.notifications-center.visible');
      if ((await center.count()) > 0) {
        await page.keyboard.press('Escape');
        await center.waitFor({ state: 'detached', timeout: UI_MS });
      }
    },
  );

  test(
    "Complete step… in this window says the step is held in the epic's worktree and offers to open it",
    { timeout: 60_000 },
    async () => {
      const stepRow = row(page, 'Read the code and write');
      const refusal = toast(
        page,
        `Step 1 (Read the code and write the first failing test) is held in ${epic.id}, the worktree where ${epic.id} is built, not in this window's notes-app: complete it there.`,
      );
      await contextAction(page, stepRow, 'Complete step…', refusal);
      await refusal.getByRole('button', { name: 'Open in new window' }).waitFor();
      await refusal.getByRole('button', { name: 'Open here' }).waitFor();
      assert.doesNotMatch(
        await refusal.innerText(),
        /\/tmp\/|cannot complete/,
        'worded for a person: no paths, no store refusal',
      );
      await screenshot(page, 'first-complete-elsewhere');
      await dismissNotification(refusal);
      assert.equal(steps(repo)[0]?.status, 'claimed', 'nothing was completed');
    },
  );

  test('the handoff name in the panel opens the handoff file', { timeout: 30_000 }, async () => {
    await webview(page).locator('#open-handoff').click();
    await page.locator('.tab', { hasText: `TODO-${epic.id}.md` }).waitFor({ timeout: UI_MS });
  });

  test(
    "Open here, from the claim's notification, opens the epic's worktree in this window, where the step is the person's",
    { timeout: 300_000 },
    async () => {
      // The toast may have faded by now: the notification center keeps it, buttons and all.
      await clickNotification(page, 'Claimed Step 1: Read the code', 'Open here');
      await workbenchOpensAt(page, worktree);
      await openSpringfield(page);
      await rowShows(page, 'Read the code and write the first failing test', ['you · 1h'], 30_000);
      assert.equal(steps(worktree)[0]?.claimed_by, worktree, 'still held there');
      await screenshot(page, 'first-worktree-window');
    },
  );

  test(
    'Complete step… with open items lists them by their text, and its first button does not complete',
    { timeout: 60_000 },
    async () => {
      const stepRow = row(page, 'Read the code and write');
      const dialog = page.locator('.monaco-dialog-box');
      await contextAction(page, stepRow, 'Complete step…', dialog);
      const text = await dialog.innerText();
      assert.match(text, /Step 1 \(Read the code and write the first failing test\) still has 2 open items/);
      assert.match(text, /• Read the code this change touches and note what must keep working/);
      assert.match(text, /• repeated reads hit the cache/);
      assert.doesNotMatch(text, /task 0|--force|force/i, 'worded for a person');
      const focused = await page.evaluate(
        () =>
          (globalThis as unknown as { document: { activeElement: { textContent: string } | null } }).document
            .activeElement?.textContent ?? '',
      );
      assert.equal(focused, 'Show open items', 'the focused (Enter) button is the harmless one');
      await screenshot(page, 'first-complete-dialog');
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached' });
      await row(page, 'repeated reads hit the cache').waitFor();
      assert.equal(steps(repo)[0]?.status, 'claimed', 'nothing was completed');
    },
  );

  test('the walkthrough ticks the steps already done in this repository', { timeout: 60_000 }, async () => {
    await palette(page, 'Springfield: Get started');
    const steps = page.locator('.getting-started-step');
    await steps.filter({ hasText: 'Start the epic and claim a step' }).waitFor({ timeout: 20_000 });
    // A ticked step is a button with aria-checked="true" (and a "complete" check icon).
    await page.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
        ).document.querySelectorAll('.getting-started-step[aria-checked="true"]').length >= 4,
      undefined,
      { timeout: 10_000 },
    );
    for (const title of [
      'Create an epic',
      'Write its plan and propose it',
      'Review and approve the plan',
      'Start the epic and claim a step',
    ]) {
      assert.equal(await steps.filter({ hasText: title }).getAttribute('aria-checked'), 'true', `${title} is ticked`);
    }
    assert.notEqual(
      await steps.filter({ hasText: 'Or: bring a plan' }).getAttribute('aria-checked'),
      'true',
      'no loose plan here',
    );
    await screenshot(page, 'first-walkthrough');
    await page.keyboard.press('Control+W');
  });

  test(
    'Claim next step takes over an expired lease and says from whom; the row showed it expire',
    { timeout: 90_000 },
    async () => {
      // Through the CLI in the epic's worktree, as the person and an agent there would.
      cli(worktree, ['complete', PLAN, 'step-1', '--force', 'done by hand for the test']);
      cli(worktree, ['claim', PLAN, '--lease', '4'], 'ralph-b');
      await rowShows(page, 'Make the change', ['ralph-b · ', 's · ']);
      // No store write happens now: the live timer alone moves the row to "expired".
      await rowShows(page, 'Make the change', ['ralph-b · expired'], 60_000);
      await screenshot(page, 'first-lease-expired');
      await epicsTitleAction(page, 'Claim next step');
      const claimed = toast(
        page,
        /Claimed Step 2: Make the change \(taken over from ralph-b, lease expired \d+ s ago\)/,
      );
      await claimed.waitFor({ timeout: UI_MS });
      assert.equal(
        await claimed.getByRole('button', { name: 'Open here' }).count(),
        0,
        "this window is the epic's worktree: nothing else to open",
      );
      const second = steps(repo)[1];
      assert.deepEqual([second?.status, second?.claimed_by, second?.agent], ['claimed', worktree, null]);
      await rowShows(page, 'Make the change', ['you · 1h59m']);
      await screenshot(page, 'first-takeover');
    },
  );

  test('all the while, the extension host logged no error (a person reading its log sees none)', () => {
    const { errors, atShutdown } = extensionHostErrors(session.extensionHostLog());
    for (const noise of atShutdown) console.log(`[exthost] logged while its host terminated, not ours: ${noise}`);
    assert.deepEqual(errors, []);
  });
});
