// The editor's own scheduler with a real agent CLI: code-server + Chromium, the extension installed as
// a person has it, Claude Code (the npm CLI at the preset's version) configured with
// `springfield agents use claude` and pointed at the scripted Anthropic model on 127.0.0.1. A person
// planned and approved the epic, opens the editor, starts the scheduler from the palette and allows
// the config in the modal; Ralph builds both steps in Claude Code terminals, verification passes,
// Bart (Claude Code) records a signal and the epic merges. While Ralph's second run is under way (the
// model holds its first answer) the person stops the scheduler: that run goes on to the end, nothing
// else starts, and Start carries the epic on. The PATH the editor has (code-server's, and
// the login shell's, which VS Code gives extensions) holds the agent CLIs but no `springfield`: the
// agents find it only through what Springfield puts on their PATH (`springfield run`'s per-run command
// first, the extension's own wrapper behind it).
//
// The scripted model answers from this process: nothing here blocks the event loop while agents may
// be talking to it (CLI and git calls are asynchronous child processes).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
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
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { ensureCodeServer } from '../../scripts/codeServer.ts';
import { cleanEnv, ensureCli, runCliAsync, type CliResult } from '../helpers/gitRepo.ts';
import { AGENT_BIN, agentTurns, assertAgentsWereIn, CLAUDE } from '../helpers/realAgents.ts';
import { startScriptedModel, type ScriptedModel } from '../helpers/scriptedModel/server.ts';
import { openEditor, type EditorSession } from './harness.ts';
import {
  eventually,
  notification,
  openSpringfield,
  palette,
  root,
  clickRow,
  row,
  rowShows,
  schedulerLog,
  screenshot,
  UI_MS,
} from './person.ts';

const PLAN_PATH = 'plans/greeting.md';
const PLAN =
  '# Plan: Greeting\n\n## Step 1: Greeting module {#step-1}\n**Tasks:**\n- [ ] Add src/greeting.ts\n\n## Step 2: Wire it {#step-2}\n**Depends on:** #step-1\n**Tasks:**\n- [ ] Add src/cli.ts\n';
const NOTE = 'notes-of-a-person.txt';
/** How long the whole epic may take, from Start to done (two Ralph runs, verification, Bart, merge). */
const EPIC_MS = 8 * 60_000;

interface Run {
  id: number;
  role: string;
  status: string;
  worktree: string | null;
  step_anchor: string | null;
  exit_code: number | null;
  outcome_reason: string | null;
}
interface Epic {
  status: string;
  status_reason: string | null;
  worktree_path: string | null;
  branch: string | null;
}

const execFileAsync = promisify(execFile);

/** PATH without any folder holding a `springfield`, with the agent CLIs first: a person's shell before installing Springfield. */
function agentPath(): string {
  return [
    AGENT_BIN,
    ...(process.env.PATH ?? '').split(delimiter).filter((d) => d && !existsSync(join(d, 'springfield'))),
  ].join(delimiter);
}

/** The name of every terminal the panel lists: tab entries, or the single-terminal title when tabs are hidden. */
async function terminalNames(page: Page): Promise<string[]> {
  return page
    .locator('.part.panel .terminal-tabs-entry, .part.panel .single-terminal-tab')
    .evaluateAll((els) => els.map((e) => (e.textContent ?? '').trim()));
}

describe("The editor's scheduler runs Claude Code itself (code-server + Chromium, scripted Anthropic model)", () => {
  let base: string;
  let repo: string;
  let state: string;
  let model: ScriptedModel | undefined;
  let env: Record<string, string>;
  let session: EditorSession | undefined;
  let page: Page;
  let epic: string;
  let start: string;
  /** The epic's worktree, as the store reported it while the epic was under way. */
  let worktree: string | null = null;
  let failed = false;
  /** Each step's commit, by anchor. */
  const commits = new Map<string, string>();
  /** Names of the per-run `springfield` command folders seen under .springfield/bin (`<run id>-<random>`). */
  const shims = new Set<string>();
  /** Ralph's second conversation: its first request is held until the person has stopped the scheduler. */
  const ralphKickoffs = new Set<string>();
  let held = false;
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));

  /** `springfield …` in the person's checkout, as their shell runs it (same state, same model): asynchronous. */
  const sf = (...args: string[]): Promise<CliResult> => runCliAsync(repo, args, env);
  const json = async <T>(...args: string[]): Promise<T> => {
    const r = await sf(...args, '--json');
    assert.equal(r.code, 0, `springfield ${args.join(' ')}: exit ${r.code}\n${r.stderr}`);
    return r.json<T>();
  };
  const git = async (...args: string[]): Promise<string> =>
    (await execFileAsync('git', args, { cwd: repo, env: cleanEnv(env), encoding: 'utf8' })).stdout.trim();
  const mainCheckout = async (): Promise<string[]> => [
    await git('rev-parse', 'HEAD'),
    ...(await git('status', '--porcelain', '--untracked-files=all')).split('\n').filter(Boolean),
  ];
  /** A test whose failure keeps the directory (repository, agents' logs, every model request) for a person to read. */
  const keepOnFailure = (fn: () => Promise<void>) => async (): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      failed = true;
      throw err;
    }
  };
  const diagnose = (): string =>
    `${schedulerLog(base)}\n(kept ${base}: the agents' logs in repo/.springfield/logs, the model's requests in requests.jsonl)`;
  const runsOf = async (): Promise<Run[]> => (await json<{ runs: Run[] }>('runs', '--epic', epic)).runs;

  /**
   * Ralph's step-2 run is under way (Claude Code waits for the model's first answer): Stop scheduler.
   * The run goes on to succeed, nothing starts while the scheduler is stopped (more than three ticks of
   * its 2 s loop), and Start, with the config already allowed, takes the epic on.
   */
  const stopWhileRalphWorks = async (): Promise<void> => {
    const step2 = async () => (await runsOf()).find((r) => r.role === 'ralph' && r.step_anchor === 'step-2');
    assert.equal((await step2())?.status, 'running', `Ralph's step-2 run is under way\n${diagnose()}`);
    await palette(page, 'Springfield: Stop scheduler');
    await eventually(
      'the scheduler log says it stopped',
      () => /scheduler stopped/.test(schedulerLog(base)),
      60_000,
      diagnose,
    );
    const status = page.locator('.part.statusbar').getByText('Scheduler running', { exact: true });
    await status.waitFor({ state: 'detached', timeout: 30_000 });
    release();
    const ends = Date.now() + 4 * 60_000;
    let run = await step2();
    while (run?.status === 'running' && Date.now() < ends) {
      await new Promise((r) => setTimeout(r, 1000));
      run = await step2();
    }
    assert.equal(run?.status, 'succeeded', `the run under way at the stop went on to the end\n${diagnose()}`);
    const before = (await runsOf()).map((r) => r.id);
    await page.waitForTimeout(7000);
    assert.deepEqual(
      (await runsOf()).map((r) => r.id),
      before,
      `nothing started while the scheduler was stopped\n${diagnose()}`,
    );
    const log = schedulerLog(base);
    assert.doesNotMatch(
      log.slice(log.lastIndexOf('scheduler stopped')),
      /\bstart (Ralph|Bart|Lisa)\b/,
      'nor did the log say so',
    );
    await palette(page, 'Springfield: Start scheduler');
    await status.waitFor({ timeout: 30_000 });
  };

  before(
    async () => {
      ensureCli();
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')), 'build first: node esbuild.mjs');
      assert.ok(
        existsSync(join(AGENT_BIN, 'claude')),
        `Claude Code is installed in ${AGENT_BIN} (npm test installs it: scripts/prepareTests.ts)`,
      );
      base = realpathSync(mkdtempSync(join(tmpdir(), 'sf-editor-claude-')));
      repo = join(base, 'repo');
      state = join(base, 'state');
      const home = join(base, 'home');
      for (const dir of [repo, state, home, join(base, 'tmp')]) mkdirSync(dir);
      model = await startScriptedModel({
        adapters: [CLAUDE.adapter],
        logFile: join(base, 'requests.jsonl'),
        maxRequests: 300,
        lifetimeMs: 14 * 60_000,
        hold: (request) => {
          const conversation = CLAUDE.adapter.conversation(request);
          if (!conversation || !/\bYou are Ralph\b/.test(conversation.kickoff)) return Promise.resolve();
          ralphKickoffs.add(conversation.kickoff);
          if (held || ralphKickoffs.size < 2 || conversation.results.length > 0) return Promise.resolve();
          held = true;
          return released;
        },
      });
      // What the person's shell and their editor both have: a fresh HOME, the agent CLIs on PATH (no springfield),
      // Claude Code pointed at the scripted model, and their own user state (where Allow is recorded).
      env = {
        HOME: home,
        PATH: agentPath(),
        SHELL: existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh',
        TMPDIR: join(base, 'tmp'),
        XDG_STATE_HOME: state,
        ...CLAUDE.prepare(home, model.url),
      };
      assert.ok(
        !env.PATH?.split(delimiter).some((d) => existsSync(join(d, 'springfield'))),
        'no springfield on the PATH the editor gets',
      );
      // VS Code gives extensions the environment of the person's login shell (it runs `$SHELL -ilc`), whose
      // /etc/profile rebuilds PATH: the person's ~/.profile (read by bash and sh at login) sets the same PATH,
      // as theirs would put Claude Code on it.
      writeFileSync(join(home, '.profile'), `export PATH='${env.PATH}'\n`);

      await git('init', '-q', '-b', 'main');
      await git('config', 'user.email', 'person@springfield.invalid');
      await git('config', 'user.name', 'A Person');
      writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
      writeFileSync(join(repo, 'README.md'), '# Greeter\n');
      await git('add', '-A');
      await git('commit', '-qm', 'start');
      // The agent configured as a person does it, plus a verification command of their own.
      const use = await sf('agents', 'use', 'claude', '--json');
      assert.equal(use.code, 0, use.stderr);
      const configFile = join(repo, '.springfield', 'config.json');
      const config = JSON.parse(readFileSync(configFile, 'utf8')) as { roles: Record<string, string[]> } & Record<
        string,
        unknown
      >;
      assert.deepEqual(config.roles.ralph?.slice(0, 2), ['claude', '-p'], 'the claude preset');
      config.verification = [[process.execPath, '-e', "require('node:fs').accessSync('src/greeting.ts')"]];
      writeFileSync(configFile, JSON.stringify(config, null, 2));
      // The person planned the epic and approved the plan.
      epic = (
        await json<{ id: string }>(
          'epic',
          'create',
          'Greeting',
          '--brief',
          'Print a friendly greeting from src/greeting.ts.',
        )
      ).id;
      mkdirSync(join(repo, 'plans'));
      writeFileSync(join(repo, PLAN_PATH), PLAN);
      await json('plan', 'propose', epic, PLAN_PATH);
      await json('plan', 'approve', epic, '--agent', 'a-person');
      assert.equal((await json<Epic>('epic', 'show', epic)).status, 'ready');
      // Something of their own in the checkout, never committed.
      writeFileSync(join(repo, NOTE), 'mine, not committed\n');
      start = await git('rev-parse', 'HEAD');

      await ensureCodeServer();
      session = await openEditor({
        extensionPath: root,
        workspace: repo,
        theme: 'dark',
        width: 1600,
        height: 1000,
        env,
        settings: { 'terminal.integrated.gpuAcceleration': 'off' },
      });
      page = session.page;
      await openSpringfield(page, 300);
      await row(page, 'Greeting').first().waitFor({ timeout: 60_000 });
    },
    { timeout: 10 * 60_000 },
  );

  after(async () => {
    release();
    await session?.close();
    await model?.close();
    if (base && !failed && !process.env.SPRINGFIELD_KEEP_TEST_DIRS) rmSync(base, { recursive: true, force: true });
  });

  test(
    'Start scheduler, Allow in the modal: Claude Code builds both steps, Bart reviews, the epic merges; Stop mid-run',
    { timeout: EPIC_MS + 4 * 60_000 },
    keepOnFailure(async () => {
      // The per-run folders springfield run puts first on each agent's PATH, seen while they exist (a cheap read, off the model's way).
      const bin = join(repo, '.springfield', 'bin');
      const watch = setInterval(() => {
        for (const d of existsSync(bin) ? readdirSync(bin) : [])
          if (existsSync(join(bin, d, 'springfield'))) shims.add(d);
      }, 100);
      try {
        await palette(page, 'Springfield: Start scheduler');
        const dialog = page.locator('.monaco-dialog-box');
        await dialog.waitFor({ timeout: 15_000 });
        const asked = await dialog.innerText();
        assert.match(asked, /roles\.ralph: claude -p /, 'the modal shows the Claude Code command the config names');
        assert.match(asked, /verification/, 'and the verification command');
        await dialog.getByRole('button', { name: 'Allow' }).click();
        await page
          .locator('.part.statusbar')
          .getByText('Scheduler running', { exact: true })
          .waitFor({ timeout: 15_000 });

        const deadline = Date.now() + EPIC_MS;
        let shown = await json<Epic>('epic', 'show', epic);
        const underWay = async (until: () => boolean): Promise<void> => {
          while (!until()) {
            assert.ok(
              !['blocked', 'deferred'].includes(shown.status),
              `the epic is ${shown.status}: ${shown.status_reason ?? ''}\n${diagnose()}`,
            );
            assert.ok(
              Date.now() < deadline,
              `the epic is not done within ${EPIC_MS / 1000} s (${shown.status}: ${shown.status_reason ?? ''})\n${diagnose()}`,
            );
            await new Promise((r) => setTimeout(r, 2000));
            shown = await json<Epic>('epic', 'show', epic);
            worktree ??= shown.worktree_path;
          }
        };
        await underWay(() => held);
        await stopWhileRalphWorks();
        await underWay(() => shown.status === 'done');
        worktree ??= shown.worktree_path;
      } finally {
        clearInterval(watch);
      }
    }),
  );

  test(
    "in the store: Ralph twice and Bart once, all succeeded in the epic's worktree; main gained only the merge",
    { timeout: 60_000 },
    keepOnFailure(async () => {
      assert.ok(worktree, 'the epic had a worktree');
      assert.notEqual(worktree, repo);
      const runs = await runsOf();
      assert.deepEqual(
        runs.map((r) => `${r.role}:${r.status}`).sort(),
        ['bart:succeeded', 'ralph:succeeded', 'ralph:succeeded'],
        JSON.stringify(runs, null, 2),
      );
      for (const r of runs)
        assert.equal(
          r.worktree,
          worktree,
          `${r.role} run ${r.id} ran in the epic's worktree, never in the person's checkout`,
        );
      assertAgentsWereIn(model as ScriptedModel, runs);
      assert.deepEqual(
        runs
          .filter((r) => r.role === 'ralph')
          .map((r) => r.step_anchor)
          .sort(),
        ['step-1', 'step-2'],
      );

      const [head, ...status] = await mainCheckout();
      assert.deepEqual(status, [`?? ${NOTE}`], "the person's untracked file is the only change left in the checkout");
      assert.equal(await git('rev-parse', `${head}^`), start, 'main gained exactly one commit: the merge');
      assert.equal(readFileSync(join(repo, NOTE), 'utf8'), 'mine, not committed\n', "the person's file is untouched");
      assert.ok(
        existsSync(join(repo, 'src', 'greeting.ts')) && existsSync(join(repo, 'src', 'cli.ts')),
        "Claude Code's work arrived through the merge",
      );
      const steps =
        (
          await json<{ plans: { steps: { anchor: string; status: string; commit_hash: string | null }[] }[] }>(
            'show',
            PLAN_PATH,
          )
        ).plans[0]?.steps ?? [];
      assert.deepEqual(
        steps.map((s) => `${s.anchor}:${s.status}`),
        ['step-1:completed', 'step-2:completed'],
      );
      for (const s of steps) {
        commits.set(s.anchor, s.commit_hash ?? '');
        assert.match(
          await git('log', '-1', '--format=%B', s.commit_hash ?? ''),
          new RegExp(`Springfield-Epic: ${epic}`),
          `${s.anchor} was committed through springfield commit`,
        );
        await assert.rejects(
          git('merge-base', '--is-ancestor', s.commit_hash ?? '', start),
          `${s.anchor} was committed on the epic's branch, not on main`,
        );
      }
      const signals = (
        await json<{ signals: { type: string; locations: { file: string; line: number }[] }[] }>('signals', epic)
      ).signals;
      assert.deepEqual(
        signals.map((s) => s.type),
        ['pass'],
        'Bart recorded one signal',
      );
      assert.ok((signals[0]?.locations.length ?? 0) > 0, 'pointing at a line of the diff');
      // No springfield on the editor's PATH: springfield run made a command folder for each run (first on the agent's PATH)
      // and removed it when the run ended.
      assert.deepEqual(
        [...shims].map((d) => Number(d.split('-')[0])).sort(),
        runs.map((r) => r.id).sort(),
        'a springfield command of its own for every run',
      );
      assert.deepEqual(
        readdirSync(join(repo, '.springfield', 'bin')),
        [],
        'the per-run springfield commands were removed',
      );
      // Every conversation was Springfield's kickoff played through Claude Code's own tools; none was told springfield is missing.
      const kickoffs = new Set(
        agentTurns(model as ScriptedModel).map((q) => JSON.stringify((q.body as { messages: unknown[] }).messages[0])),
      );
      assert.deepEqual(
        [...kickoffs].map((k) => /You are (Ralph|Bart)\b/.exec(k)?.[1]).sort(),
        ['Bart', 'Ralph', 'Ralph'],
        'Claude Code asked the model in three sessions: Ralph twice, Bart once',
      );
      const said = JSON.stringify(model?.requests.map((q) => q.body) ?? []);
      assert.ok(!/springfield: (command )?not found/.test(said), 'the agents found springfield on their PATH');
    }),
  );

  test(
    'in the editor: the Ralph and Bart terminals keep their outcome, the trees show the epic done',
    { timeout: 90_000 },
    keepOnFailure(async () => {
      const names = ['Ralph · Greeting', 'Bart · Greeting']; // one terminal per epic and role: Ralph's two runs share his
      const listed = await terminalNames(page);
      for (const name of names)
        assert.ok(
          listed.some((l) => l.includes(name)),
          `a terminal named "${name}"; the panel lists ${JSON.stringify(listed)}`,
        );
      await rowShows(page, 'Greeting', ['merged'], 60_000);
      for (const [name, step] of [
        ['Ralph · Greeting', 'Step 1'],
        ['Ralph · Greeting', 'Step 2'],
        ['Bart · Greeting', ''],
      ] as const) {
        await row(page, name)
          .filter({ hasText: new RegExp(`${step}.*succeeded`) })
          .first()
          .waitFor({ timeout: UI_MS });
      }
      // Bart's terminal, as a person clicks it: Claude Code's output, then the outcome read from the store.
      await page.locator('.part.panel .terminal-tabs-entry', { hasText: 'Bart · Greeting' }).first().click();
      const outcome = `✓ Bart · ${epic}: succeeded`;
      await page
        .locator('.part.panel .xterm-rows', { hasText: outcome })
        .first()
        .waitFor({ timeout: 10_000 })
        .catch(async () =>
          assert.fail(
            `Bart's terminal does not show "${outcome}"; it shows:\n${(await page.locator('.part.panel .xterm-rows').allInnerTexts()).join('\n')}`,
          ),
        );
      const done = new RegExp(`${epic} “Greeting” is done: reviewed and merged`);
      const found = await notification(page, done, 20_000).catch(async () =>
        assert.fail(
          `no "done" notification; toasts: ${JSON.stringify(await page.locator('.notifications-toasts .notification-toast').allInnerTexts())}`,
        ),
      );
      await palette(page, 'Notifications: Clear All Notifications'); // read; it would cover the end of the outcome line
      await found.waitFor({ state: 'detached', timeout: UI_MS });
      // The epic's steps, as a person opens them: both completed, each saying when (its commit is in the tooltip).
      const epicRow = row(page, 'Greeting').first(); // the epic; its step 'Greeting module' follows it
      if ((await epicRow.getAttribute('aria-expanded')) !== 'true')
        await clickRow(page, epicRow.locator('.monaco-tl-twistie'));
      for (const label of ['Greeting module', 'Wire it']) {
        await row(page, label)
          .filter({ hasText: /done \S+ ago/ })
          .first()
          .waitFor({ timeout: 10_000 })
          .catch(async () =>
            assert.fail(
              `no "${label}" row saying done … ago; rows: ${JSON.stringify(await page.locator('.part.sidebar .monaco-list-row').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label'))))}`,
            ),
          );
      }
      await palette(page, 'View: Toggle Maximized Panel'); // the tree beside a tall terminal
      await screenshot(page, 'real-agent-editor-done');
    }),
  );
});
