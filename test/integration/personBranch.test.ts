// Issue 22's path, as a person takes it in a real VS Code (code-server + Chromium, the extension
// installed as a user has it, no test driver): from a repository without Springfield, whose main
// checkout holds the person's own uncommitted work (an untracked .gitignore they edited, an untracked
// notes file), Create epic → New plan → Propose → Approve → Start and claim the first step. The claim
// goes to the epic's own worktree and the person opens it in a new window, ticks step 1's items,
// commits a test there and completes the step. Back in the main window: Configure agents… (the
// config.json template, its roles set to the stand-in agent, scripts/standInAgent.ts) → Start
// scheduler → Allow. Ralph builds steps 2 and 3 in the epic's worktree, Bart reviews the branch's
// diff and the epic merges. What it proves (docs/lifecycle.md, "Where work happens"): every commit —
// the person's and the builders' — lands on springfield/<epic>, main gains exactly the merge, the
// person's files in the main checkout are as they left them, and Bart's signal points into the diff.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ensureCodeServer } from '../../scripts/codeServer.ts';
import { CLI } from '../../scripts/demoRepo.ts';
import { openEditor, workbenchOpensAt, type EditorSession } from './harness.ts';
import {
  cli,
  clickNotification,
  contextAction,
  eventually,
  git,
  notification,
  openSpringfield,
  palette,
  root,
  clickRow,
  row,
  rowShows,
  schedulerLog,
  screenshot,
  webview,
  UI_MS,
} from './person.ts';

const TITLE = 'Add a caching layer';
const BRIEF = 'Reads are slow. Acceptance: repeated reads hit the cache; writes invalidate.';
const PLAN = 'plans/add-a-caching-layer.md';
const STAND_IN = join(root, 'scripts', 'standInAgent.ts');
/** The person's own work in the main checkout, never committed: an edited .gitignore and a notes file. */
const GITIGNORE = '# my editor\n*.swp\n';
const NOTES = 'scratch/ideas.txt';
const NOTES_TEXT = 'Ideas of mine, not for any commit.\n';
/** The test the person writes and commits for step 1, in the epic's worktree. */
const PERSON_TEST = 'test/cache.test.mjs';

interface Epic {
  id: string;
  status: string;
  status_reason: string | null;
  worktree_path: string | null;
  branch: string | null;
}
interface Step {
  anchor: string;
  status: string;
  claimed_by: string | null;
  agent: string | null;
  commit_hash: string | null;
  items: { text: string; status: string }[];
}
interface Run {
  id: number;
  role: string;
  status: string;
  worktree: string | null;
  step_anchor: string | null;
  head_before: string | null;
  head_after: string | null;
}
interface Signal {
  type: string;
  created_by: string;
  locations: { file: string; line: number }[];
}

describe("A person's epic is built on its own branch: main and the person's checkout keep only the merge (code-server + Chromium)", () => {
  let base: string;
  let repo: string;
  let session: EditorSession;
  let page: Page;
  /** The window on the epic's worktree, opened from the claim's offer. */
  let there: Page;
  let epic: Epic;
  let worktree: string;
  let branch: string;
  /** main's tip before anything Springfield did. */
  let mainBefore: string;
  /** The person's step-1 commit, made in the epic's worktree. */
  let personCommit: string;

  const steps = (): Step[] =>
    cli<{ plans: { plan_path: string; steps: Step[] }[] }>(repo, ['show']).plans.find((p) => p.plan_path === PLAN)
      ?.steps ?? [];
  const epicNow = (): Epic => cli<Epic>(repo, ['epic', 'show', epic.id]);
  const runs = (): Run[] => cli<{ runs: Run[] }>(repo, ['runs', '--epic', epic.id]).runs;
  /** The person's files in the main checkout, as git and the disk see them. */
  const personsFiles = (): { status: string[]; gitignore: string; notes: string } => ({
    status: git(repo, 'status', '--porcelain', '--untracked-files=all')
      .split('\n')
      .filter((l) => /\.gitignore|scratch\//.test(l)),
    gitignore: readFileSync(join(repo, '.gitignore'), 'utf8'),
    notes: readFileSync(join(repo, NOTES), 'utf8'),
  });

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-branch-')));
      repo = join(base, 'notes-app');
      mkdirSync(join(repo, 'src'), { recursive: true });
      writeFileSync(join(repo, 'README.md'), '# notes-app\n\nA small app.\n');
      writeFileSync(join(repo, 'src', 'store.ts'), 'export const notes = new Map<string, string>();\n');
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'config', 'user.email', 'person@example.com');
      git(repo, 'config', 'user.name', 'A person');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-qm', 'An app without Springfield');
      mainBefore = git(repo, 'rev-parse', 'main');
      // The person's work in progress, before Springfield: never committed, by them or anyone.
      writeFileSync(join(repo, '.gitignore'), GITIGNORE);
      mkdirSync(join(repo, 'scratch'));
      writeFileSync(join(repo, NOTES), NOTES_TEXT);
      assert.deepEqual(personsFiles().status, ['?? .gitignore', `?? ${NOTES}`]);
      await ensureCodeServer();
      session = await openEditor({
        extensionPath: root,
        workspace: repo,
        theme: 'dark',
        settings: { 'terminal.integrated.gpuAcceleration': 'off' },
      });
      page = session.page;
      await openSpringfield(page);
    },
    { timeout: 15 * 60_000 },
  );

  after(async () => {
    await session?.close();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test('Create epic…, New plan…, Propose and Approve, in the main window', { timeout: 180_000 }, async () => {
    await page
      .locator('.part.sidebar .welcome-view-content')
      .first()
      .getByRole('button', { name: 'Create epic…' })
      .click({ timeout: 30_000 });
    const input = page.locator('.quick-input-widget input');
    await page.locator('.quick-input-widget', { hasText: 'New epic (1/3)' }).waitFor();
    await input.fill(TITLE);
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget', { hasText: 'New epic (2/3)' }).waitFor();
    await input.fill(BRIEF);
    await page.keyboard.press('Enter');
    await page
      .locator('.quick-input-widget', { hasText: 'New epic (3/3)' })
      .locator('.quick-input-list .monaco-list-row', { hasText: 'I write it' })
      .click({ timeout: UI_MS });
    await clickNotification(page, /Created sf-[0-9a-f]+: Add a caching layer/, 'New plan…');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Write it myself' }).click({ timeout: UI_MS });
    epic = cli<{ epics: Epic[] }>(repo, ['epic', 'list']).epics[0] as Epic;
    await page.locator('.tab', { hasText: 'add-a-caching-layer.md' }).waitFor({ timeout: UI_MS });
    await clickNotification(page, `Wrote ${PLAN}`, 'Propose plan');
    await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: UI_MS });
    await page.keyboard.press('Enter');
    const frame = webview(page);
    await frame.locator('h1', { hasText: `Plan for ${epic.id} · ${TITLE}` }).waitFor({ timeout: 60_000 });
    await frame.locator('#approve').click();
    await frame.locator('.result.ok', { hasText: `${epic.id} is ready` }).waitFor({ timeout: UI_MS });
    assert.equal(epicNow().status, 'ready');
    // Springfield's first write ignored its state store in the person's .gitignore, below their own lines.
    assert.equal(personsFiles().gitignore, `${GITIGNORE}.springfield/\n`);
  });

  test(
    "Start and claim: the step is claimed in the epic's own worktree, and the offer opens it in a new window",
    { timeout: 300_000 },
    async () => {
      const frame = webview(page);
      await frame.locator('#start-and-claim').click();
      await frame
        .locator('.result.ok', { hasText: 'Claimed Step 1: Read the code and write the first failing test' })
        .waitFor({ timeout: UI_MS });
      epic = epicNow();
      worktree = join(`${repo}.springfield`, epic.id);
      branch = `springfield/${epic.id}`;
      assert.deepEqual([epic.status, epic.worktree_path, epic.branch], ['in_progress', worktree, branch]);
      assert.equal(git(worktree, 'rev-parse', '--abbrev-ref', 'HEAD'), branch);
      assert.equal(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main', "the person's checkout stays on main");
      const first = steps()[0];
      assert.deepEqual([first?.status, first?.claimed_by, first?.agent], ['claimed', worktree, null]);
      const offer = await notification(page, 'Claimed Step 1: Read the code and write the first failing test');
      assert.match(
        await offer.innerText(),
        new RegExp(
          `Started ${epic.id} in its own worktree ${epic.id} \\(branch ${branch}\\)[\\s\\S]*Its epic is built in ${epic.id}: work there`,
        ),
      );
      await offer.getByRole('button', { name: 'Open here' }).waitFor();
      const newWindow = offer.getByRole('button', { name: 'Open in new window' });
      await newWindow.waitFor();
      await screenshot(page, 'branch-open-offer');
      [there] = await Promise.all([
        page.context().waitForEvent('page', { timeout: 30_000 }),
        clickNotification(page, 'Claimed Step 1: Read the code and write the first failing test', 'Open in new window'),
      ]);
      await workbenchOpensAt(there, worktree);
      await openSpringfield(there);
      await rowShows(there, 'Read the code and write the first failing test', ['you · 1h'], 30_000);
    },
  );

  test(
    "In the epic's worktree the person ticks step 1's items, commits a test and completes the step",
    { timeout: 120_000 },
    async () => {
      const items = [
        'Read the code this change touches and note what must keep working',
        'repeated reads hit the cache',
      ];
      for (const [n, item] of items.entries()) {
        const ticked = (): boolean => steps()[0]?.items.find((i) => i.text === item)?.status === 'completed';
        // The tree re-renders after each write; on a busy machine that can swallow a click, so the box is
        // ticked again only while it still shows open (never toggled back).
        for (let attempt = 1; !ticked(); attempt++) {
          const box = row(there, item).locator('.custom-view-tree-node-item-checkbox');
          // clickRow moves the pointer off first: the last box's "Checked" hover card would cover this row's box.
          if ((await box.getAttribute('aria-checked', { timeout: 15_000 })) !== 'true') await clickRow(there, box);
          await eventually(`${item} ticked`, ticked, 8000).catch((err: unknown) => {
            if (attempt >= 3) throw err;
          });
        }
        await rowShows(there, 'Read the code and write', [`${n + 1}/2`], 60_000);
      }
      // The person's own work, committed in that window's worktree as they would in its terminal.
      mkdirSync(join(worktree, 'test'));
      writeFileSync(
        join(worktree, PERSON_TEST),
        "import { test } from 'node:test';\n\ntest('repeated reads hit the cache', { todo: true });\n",
      );
      git(worktree, 'add', PERSON_TEST);
      git(worktree, 'commit', '-qm', 'A first failing test for the cache');
      personCommit = git(worktree, 'rev-parse', 'HEAD');
      await contextAction(
        there,
        row(there, 'Read the code and write'),
        'Complete step…',
        there.locator('.part.sidebar .monaco-list-row[aria-label^="Read the code and write"] .codicon-pass-filled'),
      );
      assert.equal(steps()[0]?.status, 'completed');
      assert.equal(git(repo, 'rev-parse', 'main'), mainBefore, 'main has not moved');
      await screenshot(there, 'branch-step1-done');
    },
  );

  test(
    'Configure agents… (the stand-in as every role), Start scheduler, Allow: the epic is built, reviewed and merged',
    { timeout: 360_000 },
    async () => {
      await page.bringToFront();
      const agents = page.locator('.part.sidebar .pane-header', { hasText: 'Agents' });
      await agents.hover();
      await agents.locator('[aria-label="Configure agents…"]').click();
      await page
        .locator('.quick-input-list .monaco-list-row', { hasText: 'config.json template' })
        .first()
        .click({ timeout: UI_MS });
      await page.locator('.tabs-container .tab', { hasText: 'config.json' }).waitFor({ timeout: UI_MS });
      // The person fills in the roles of the file the template created, and saves it.
      const configFile = join(repo, '.springfield', 'config.json');
      const config = JSON.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
      const agent = [process.execPath, STAND_IN, '$SPRINGFIELD_CONTEXT_FILE'];
      writeFileSync(
        configFile,
        JSON.stringify(
          { ...config, roles: { lisa: agent, ralph: agent, bart: agent }, maxParallelAgents: 1 },
          null,
          2,
        ) + '\n',
      );
      await palette(page, 'Springfield: Start scheduler');
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: UI_MS });
      assert.match(await dialog.innerText(), /wants to run commands[\s\S]*roles\.ralph: \S+ \S+standInAgent\.ts/);
      await dialog.getByRole('button', { name: 'Allow' }).click();
      await page.locator('.part.statusbar').getByText('Scheduler running', { exact: true }).waitFor({ timeout: UI_MS });
      // Polled once a second: the CLI's start-up is not free on a small machine the agents share.
      for (const deadline = Date.now() + 300_000; epicNow().status !== 'done'; await page.waitForTimeout(1000)) {
        if (Date.now() > deadline)
          assert.fail(
            `the epic is not done within 300 s\nepic: ${JSON.stringify(epicNow())}\nruns: ${JSON.stringify(runs().map((r) => [r.role, r.step_anchor, r.status]))}\n${schedulerLog(base)}`,
          );
      }
      await rowShows(page, TITLE, ['merged'], 60_000);
      await notification(page, new RegExp(`${epic.id} “${TITLE}” is done: reviewed and merged`), 20_000);
      await screenshot(page, 'branch-done');
    },
  );

  test(
    "every commit was made on the epic's branch, in its worktree; main gained exactly the merge",
    { timeout: 60_000 },
    async () => {
      const all = runs();
      assert.deepEqual(
        all.filter((r) => r.status !== 'succeeded').map((r) => [r.role, r.step_anchor, r.status]),
        [],
        'every run succeeded',
      );
      assert.deepEqual(
        all.map((r) => `${r.role}:${r.step_anchor ?? ''}`).sort(),
        ['bart:', 'ralph:step-2', 'ralph:step-3'],
        "Ralph built steps 2 and 3, Bart reviewed; step 1 was the person's",
      );
      assert.deepEqual([...new Set(all.map((r) => r.worktree))], [worktree], "every agent ran in the epic's worktree");
      const bart = all.find((r) => r.role === 'bart');
      assert.ok(bart?.head_before, "Bart's run recorded the branch tip he reviewed");
      const reviewed = bart.head_before;
      // main: the person's commit, then exactly one commit, the merge, on top of it.
      assert.deepEqual(
        git(repo, 'rev-list', '--first-parent', `${mainBefore}..main`).split('\n'),
        [git(repo, 'rev-parse', 'main')],
        'one commit on main',
      );
      const merge = git(repo, 'rev-parse', 'main');
      assert.equal(git(repo, 'rev-parse', `${merge}^`), mainBefore, 'the merge sits on the main the person left');
      assert.match(
        git(repo, 'log', '-1', '--format=%s%n%b', merge),
        new RegExp(`^${TITLE} \\(${epic.id}\\)[\\s\\S]*Springfield-Epic: ${epic.id}`),
      );
      // The branch's commits: the handoff and plan, the person's step 1, the builders' steps 2 and 3, the summary.
      const onBranch = git(repo, 'rev-list', `${mainBefore}..${reviewed}`).split('\n');
      const builders = steps()
        .filter((s) => s.anchor !== 'step-1')
        .map((s) => s.commit_hash);
      assert.ok(
        builders.every((h): h is string => typeof h === 'string' && h.length > 0),
        `steps 2 and 3 completed by commits: ${JSON.stringify(builders)}`,
      );
      for (const [who, hash] of [
        ['the person', personCommit],
        ...builders.map((h) => ['Ralph', h] as const),
      ] as const) {
        assert.ok(
          onBranch.includes(git(repo, 'rev-parse', hash)),
          `${who}'s commit ${hash.slice(0, 7)} is on ${branch}`,
        );
        assert.equal(
          git(repo, 'branch', '--list', 'main', '--contains', hash, '--format=%(refname:short)'),
          '',
          `${who}'s commit is not on main (its change came in through the squash merge only)`,
        );
      }
      for (const hash of builders)
        assert.match(
          git(repo, 'show', '--name-only', '--format=', hash),
          /^standin\//m,
          "a builder's commit holds the builder's work",
        );
      // Nothing of the person's own files was committed, on the branch or by the merge.
      for (const hash of [...onBranch, merge]) {
        assert.doesNotMatch(
          git(repo, 'show', '--name-only', '--format=', hash),
          /^(\.gitignore|scratch\/)/m,
          `commit ${hash.slice(0, 7)} holds none of the person's files`,
        );
      }
      const merged = git(repo, 'show', '--name-only', '--format=', merge).split('\n');
      for (const file of [PERSON_TEST, 'standin/step-2-' + epic.id + '.txt', 'standin/step-3-' + epic.id + '.txt'])
        assert.ok(merged.includes(file), `the merge brings ${file}: ${JSON.stringify(merged)}`);
    },
  );

  test("the person's untracked .gitignore and notes are as they left them", { timeout: 30_000 }, () => {
    assert.deepEqual(personsFiles(), {
      status: ['?? .gitignore', `?? ${NOTES}`],
      gitignore: `${GITIGNORE}.springfield/\n`,
      notes: NOTES_TEXT,
    });
    assert.equal(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main');
  });

  test(
    "Bart reviewed a real diff: his signal points at a line of a file the epic's branch added",
    { timeout: 30_000 },
    () => {
      const reviewed = runs().find((r) => r.role === 'bart')?.head_before as string;
      const added = git(repo, 'diff', '--name-only', '--diff-filter=A', `${mainBefore}...${reviewed}`).split('\n');
      for (const file of [PERSON_TEST, `standin/step-2-${epic.id}.txt`, `standin/step-3-${epic.id}.txt`])
        assert.ok(added.includes(file), `the reviewed diff adds ${file}: ${JSON.stringify(added)}`);
      const signals = cli<{ signals: Signal[] }>(repo, ['signals', epic.id]).signals;
      assert.equal(signals.length, 1, `one signal: ${JSON.stringify(signals)}`);
      const [signal] = signals as [Signal];
      assert.equal(signal.type, 'pass');
      const [where] = signal.locations;
      assert.ok(where, `the signal has a location: ${JSON.stringify(signal)}`);
      assert.ok(added.includes(where.file), `${where.file} is a file the epic added (${JSON.stringify(added)})`);
      process.stderr.write(
        `Bart's signal: ${signal.type} at ${where.file}:${where.line}; the reviewed diff adds ${added.join(', ')}\n`,
      );
      const lines = git(repo, 'show', `${reviewed}:${where.file}`).split('\n');
      assert.ok(
        where.line >= 1 && where.line <= lines.length,
        `${where.file}:${where.line} is a line of it (${lines.length} lines)`,
      );
    },
  );
});
