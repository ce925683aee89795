// Review changes, as a person does it in a real VS Code (code-server + Chromium, the extension
// installed as a user has it, no test driver). The stand-in agents (scripts/standInAgent.ts) plan and
// build an epic with no Bart configured, so it waits `implemented`. The person right-clicks it, Review
// changes opens the branch against its base in the multi-file diff editor, they comment on a line of
// the branch side, then Request changes. The store then holds the epic back in progress with a
// signal recorded as the person's, at that line with that text; and the context file Ralph's next run
// reads (written by the scheduler) carries the comment at its place.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { cleanEnv, ensureCodeServer } from '../../scripts/codeServer.ts';
import { CLI } from '../../scripts/demoRepo.ts';
import { openEditor, type EditorSession } from './harness.ts';
import { cli, contextAction, git, openSpringfield, root, row, screenshot, toast, typeInBox, UI_MS } from './person.ts';

const TITLE = 'Add a caching layer';
const STAND_IN = join(root, 'scripts', 'standInAgent.ts');
const COMMENT = 'Name the cache after what it holds, and say why it is safe to share';

interface Epic {
  id: string;
  status: string;
  iteration: number;
  worktree_path: string | null;
}
interface Signal {
  id: number;
  type: string;
  created_by: string;
  summary: string;
  locations: { file: string; line: number; end_line: number | null; note: string | null }[];
}
interface Event {
  entity: string;
  action: string;
  agent: string | null;
  from_status: string | null;
  to_status: string | null;
}

/** The scheduler without an editor, until only waiting is left (the CLI as another process runs it). */
function orchestrate(repo: string): string {
  return execFileSync(process.execPath, [CLI, 'orchestrate', '--watch', '--until-idle', '--interval', '1'], {
    cwd: repo,
    encoding: 'utf8',
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('Review changes: a line comment on the diff sends Ralph back with it (code-server + Chromium)', () => {
  let base: string;
  let repo: string;
  let session: EditorSession;
  let page: Page;
  let epic: Epic;
  /** The branch-side file the person comments on, and its line. */
  const file = (): string => `plans/${epic.id}.md`;
  const LINE = 3;

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-review-')));
      repo = join(base, 'notes-app');
      mkdirSync(join(repo, 'src'), { recursive: true });
      writeFileSync(join(repo, 'README.md'), '# notes-app\n');
      writeFileSync(join(repo, 'src', 'store.ts'), 'export const notes = new Map<string, string>();\n');
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'config', 'user.email', 'person@example.com');
      git(repo, 'config', 'user.name', 'A person');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-qm', 'An app');
      epic = cli<Epic>(repo, ['epic', 'create', TITLE, '--brief', 'Reads are slow.', '--complexity', 'standard']);
      // Lisa and Ralph are the stand-in; no Bart, so the built epic waits for a review.
      const agent = [process.execPath, STAND_IN, '$SPRINGFIELD_CONTEXT_FILE'];
      writeFileSync(
        join(repo, '.springfield', 'config.json'),
        JSON.stringify({ roles: { lisa: agent, ralph: agent } }, null, 2),
      );
      cli(repo, ['allow']);
      orchestrate(repo);
      cli(repo, ['plan', 'approve', epic.id]);
      const built = orchestrate(repo);
      epic = cli<Epic>(repo, ['epic', 'show', epic.id]);
      assert.equal(epic.status, 'implemented', built);
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

  test(
    "Review changes on the implemented epic opens its branch's files against their merge base in the multi-file diff editor",
    { timeout: 180_000 },
    async () => {
      const epicRow = row(page, TITLE);
      await epicRow.waitFor({ timeout: 30_000 });
      await contextAction(page, epicRow, 'Review changes', page.locator('.multiDiffEditor .multiDiffEntry').first());
      const base = git(repo, 'merge-base', 'main', `springfield/${epic.id}`);
      const expected = git(repo, 'diff', '--name-only', base, `springfield/${epic.id}`)
        .split('\n')
        .filter((f) => f !== `TODO-${epic.id}.md`);
      await page
        .locator('.tab', { hasText: `Review ${epic.id} · ${TITLE} (${expected.length} files)` })
        .waitFor({ timeout: 60_000 });
      await toast(page, `Reviewing ${epic.id}: ${expected.length} files against ${base.slice(0, 7)}`).waitFor({
        timeout: 60_000,
      });
      await screenshot(page, 'review-open');
      // The editor renders only the entries in view: scroll through it, collecting each header's file.
      const shown = new Set<string>();
      const list = page.locator('.multiDiffEditor');
      for (let i = 0; i < 12 && shown.size < expected.length; i++) {
        for (const header of await list.locator('.multiDiffEntry .header .file-path').allInnerTexts())
          shown.add(header.replace(/\s+/g, ' ').trim());
        await list.hover();
        await page.mouse.wheel(0, 500);
        await page.waitForTimeout(200);
      }
      // A header reads "<name>/<folder> A": the file's name, its folder, its status (added).
      const paths = [...shown]
        .map((h) => {
          const [where = '', status] = h.split(' ');
          const [name = '', ...folder] = where.split('/');
          return `${[...folder.filter(Boolean), name].join('/')} ${status}`;
        })
        .sort();
      assert.deepEqual(
        paths,
        expected.map((f) => `${f} A`).sort(),
        `the files the branch changes: ${JSON.stringify([...shown])}`,
      );
    },
  );

  test('a line comment on the branch side joins a pending review, shown as a thread', { timeout: 90_000 }, async () => {
    const entry = page
      .locator('.multiDiffEntry')
      .filter({ has: page.locator('.title.modified', { hasText: new RegExp(`^${epic.id}\\.md`) }) });
    await entry.scrollIntoViewIfNeeded();
    const number = entry
      .locator('.editor.modified .margin .line-numbers', { hasText: new RegExp(`^${LINE}$`) })
      .first();
    const box = await number.boundingBox();
    assert.ok(box, `line ${LINE} of ${file()} is on screen`);
    await page.mouse.move(box.x + box.width + 8, box.y + box.height / 2);
    await entry.locator('.comment-range-glyph.line-hover').click({ timeout: UI_MS });
    const widget = page.locator('.review-widget').last();
    const input = widget.locator('.comment-form .monaco-editor');
    await input.waitFor({ timeout: UI_MS });
    await typeInBox(page, input, COMMENT);
    await widget.locator('.form-actions .monaco-button', { hasText: 'Add to review' }).click();
    const thread = page.locator('.review-widget', { hasText: `Your pending review of ${epic.id}` });
    await thread.locator('.comments-container', { hasText: COMMENT }).waitFor({ timeout: UI_MS });
    assert.equal(
      cli<Epic>(repo, ['epic', 'show', epic.id]).status,
      'implemented',
      'nothing is sent before Request changes',
    );
    await screenshot(page, 'review-comment');
  });

  test(
    'Request changes sends Ralph back: the epic is in progress, with a signal recorded as the person at that line, with that text',
    { timeout: 90_000 },
    async () => {
      const thread = page.locator('.review-widget', { hasText: `Your pending review of ${epic.id}` });
      await thread.locator('.head .action-label', { hasText: 'Request changes' }).click();
      const box = page.locator('.quick-input-widget', { hasText: `Request changes on ${epic.id}` });
      await box.waitFor({ timeout: UI_MS });
      assert.match(await box.innerText(), /Ralph goes back with your 1 comment/);
      await page.keyboard.press('Enter');
      await toast(
        page,
        `Sent ${epic.id} back to Ralph with your 1 comment: it is now in progress (build iteration 2).`,
      ).waitFor({ timeout: UI_MS });
      await page
        .locator('.review-widget', { hasText: 'Your pending review' })
        .waitFor({ state: 'detached', timeout: UI_MS });
      await screenshot(page, 'review-sent');
      const now = cli<Epic>(repo, ['epic', 'show', epic.id]);
      assert.deepEqual([now.status, now.iteration], ['in_progress', 2]);
      const signals = cli<{ signals: Signal[] }>(repo, ['signals', epic.id]).signals;
      assert.equal(signals.length, 1, JSON.stringify(signals));
      const [signal] = signals as [Signal];
      assert.deepEqual(
        [signal.type, signal.created_by, signal.summary],
        ['implementation_failure', 'marge', `Changes requested in review: ${COMMENT}`],
      );
      assert.deepEqual(signal.locations, [{ file: file(), line: LINE, end_line: null, note: COMMENT }]);
      const events = cli<{ events: Event[] }>(repo, ['events', '--epic', epic.id]).events.filter(
        (e) => e.entity === 'epic' && e.action === 'signal_implementation_failure',
      );
      assert.deepEqual(
        events.map((e) => [e.agent, e.from_status, e.to_status]),
        [['marge', 'implemented', 'in_progress']],
        "the event log shows the person's review, not Bart's",
      );
      const line = git(repo, 'show', `springfield/${epic.id}:${file()}`).split('\n')[LINE - 1];
      process.stderr.write(`The person commented on ${file()}:${LINE} ("${line}"): ${COMMENT}\n`);
    },
  );

  test(
    'the open review takes no comment while Ralph works, and takes comments again once the epic is built',
    { timeout: 240_000 },
    async () => {
      // Each line where a comment may go carries VS Code's commenting-range glyph, hovered or not.
      const lines = page
        .locator('.multiDiffEntry')
        .filter({ has: page.locator('.title.modified', { hasText: new RegExp(`^${epic.id}\\.md`) }) })
        .locator('.editor.modified .comment-range-glyph');
      const offered = async (want: boolean, what: string) => {
        let n = -1;
        for (const deadline = Date.now() + 30_000; (n = await lines.count()) > 0 !== want;) {
          if (Date.now() > deadline) assert.fail(`${what}: ${n} lines offer a comment after 30 s`);
          await page.waitForTimeout(250);
        }
      };
      assert.equal(cli<Epic>(repo, ['epic', 'show', epic.id]).status, 'in_progress');
      await offered(false, 'sent back to Ralph');
      await screenshot(page, 'review-while-building');
      const log = orchestrate(repo);
      assert.equal(cli<Epic>(repo, ['epic', 'show', epic.id]).status, 'implemented', log);
      await offered(true, 'built again, in the review left open');
    },
  );

  test("Ralph's next run reads the comment at its place in his context file", { timeout: 120_000 }, () => {
    const log = orchestrate(repo);
    const ralph = cli<{ runs: { id: number; role: string; status: string; step_anchor: string | null }[] }>(repo, [
      'runs',
      '--epic',
      epic.id,
    ]).runs.filter((r) => r.role === 'ralph');
    const fix = ralph.find((r) => r.step_anchor === null);
    assert.ok(fix, `Ralph ran again, without a step (the fix-up prompt): ${JSON.stringify(ralph)}\n${log}`);
    const dir = join(repo, '.springfield', 'context');
    const name = readdirSync(dir).find((f) => f.startsWith(`${fix.id}-`));
    assert.ok(name, `run ${fix.id}'s context file is in ${dir}: ${readdirSync(dir).join(', ')}`);
    const text = readFileSync(join(dir, name), 'utf8');
    assert.match(text, new RegExp(`^# You are Ralph, the builder: fix epic ${epic.id}`));
    const signals = text.slice(text.indexOf('## Review signals'));
    assert.equal(
      signals.split('\n').slice(0, 3).join('\n'),
      [
        '## Review signals',
        `- implementation_failure (by marge): Changes requested in review: ${COMMENT}`,
        `  - ${file()}:${LINE} — ${COMMENT}`,
      ].join('\n'),
      text,
    );
    assert.equal(fix.status, 'succeeded', log);
    assert.equal(
      cli<Epic>(repo, ['epic', 'show', epic.id]).status,
      'implemented',
      'the fix was built and the epic waits for review again',
    );
  });

  test(
    "Review changes from a finished run's row opens its epic's changes, the fix included",
    { timeout: 60_000 },
    async () => {
      const base = git(repo, 'merge-base', 'main', `springfield/${epic.id}`);
      const files = git(repo, 'diff', '--name-only', base, `springfield/${epic.id}`)
        .split('\n')
        .filter((f) => f !== `TODO-${epic.id}.md`);
      assert.ok(
        files.some((f) => f.startsWith('standin/fix-')),
        `the fix is on the branch: ${files.join(', ')}`,
      );
      await page.keyboard.press('Escape');
      const run = page.locator('.part.sidebar .monaco-list-row[aria-label^="Ralph · ' + TITLE + '"]').first();
      await run.waitFor({ timeout: UI_MS });
      await contextAction(
        page,
        run,
        'Review changes',
        toast(page, `Reviewing ${epic.id}: ${files.length} files against ${base.slice(0, 7)}`),
      );
      await page
        .locator('.tab', { hasText: `Review ${epic.id} · ${TITLE} (${files.length} files)` })
        .waitFor({ timeout: UI_MS });
      await screenshot(page, 'review-from-run');
    },
  );
});
