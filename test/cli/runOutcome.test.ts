// The line an agent's terminal keeps after its run, from real `springfield run` runs in a real git
// repository read back from the store: outcome, exit code, duration, the step's state, commits, a
// plan proposed or a signal recorded. And `run` outlives a reader that goes away (a closed window).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import type { Store } from '../../src/core/store/store.ts';
import { countCommits, runOutcome } from '../../src/extension/model/runOutcome.ts';
import { loadSnapshot } from '../../src/extension/model/snapshot.ts';
import {
  assertClaimed,
  assertOk,
  cleanEnv,
  CLI_PATH,
  ensureCli,
  makeRepo,
  planningWorktree,
  type Repo,
} from '../helpers/gitRepo.ts';
import { runCli, runJson } from '../helpers/cliInProcess.ts';

/** A run's length as shortDuration writes it (40s, 12m, 1h45m): a loaded machine makes a run of seconds last minutes. */
const SPAN = String.raw`(?:\d+[smd]|\d+h(?:\d\dm)?)`;

const PLAN =
  '# Plan: Notes\n\n## Step 1: Store {#step-1}\n**Tasks:**\n- [ ] Write it\n\n## Step 2: Index {#step-2}\n**Tasks:**\n- [ ] Index it\n';

/** Ralph, Lisa or Bart as a script: does its role's work through the CLI, or fails with exit 1 when told. */
const AGENT = String.raw`
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const sf = (...a) => execFileSync(process.execPath, [process.env.SF_CLI, ...a], { encoding: 'utf8' });
const mode = process.argv[2];
if (mode === 'fail') { console.error('model unavailable: no API key'); process.exit(1); }
if (mode === 'chatty') { for (let i = 0; i < 400; i++) console.log('line ' + i + ' '.repeat(200)); process.exit(0); }
if (process.env.SPRINGFIELD_ROLE === 'ralph') {
  fs.writeFileSync('store-' + process.env.SPRINGFIELD_STEP + '.txt', 'x\n');
  sf('update', process.env.SPRINGFIELD_PLAN, process.env.SPRINGFIELD_STEP, '--all', 'completed');
  sf('commit', '-m', 'Write ' + process.env.SPRINGFIELD_STEP);
}
if (process.env.SPRINGFIELD_ROLE === 'lisa') sf('plan', 'propose', process.env.SPRINGFIELD_EPIC, 'plans/lisa.md');
if (process.env.SPRINGFIELD_ROLE === 'bart') sf('signal', process.env.SPRINGFIELD_EPIC, '--type', 'pass', '--summary', 'fine');
`;

let repo: Repo;
let agent: string;
let store: Store;

before(() => {
  ensureCli();
  repo = makeRepo({ files: { '.gitignore': '.springfield/\n', 'plans/notes.md': PLAN, 'plans/lisa.md': PLAN } });
  agent = join(repo.tmp, 'agent.cjs');
  writeFileSync(agent, AGENT);
});
after(() => {
  store?.close();
  repo.cleanup();
});

async function outcomeOf(runId: number): Promise<string> {
  store ??= sqliteStore(join(repo.root, '.springfield', 'state.db'));
  const s = await loadSnapshot(store, repo.root);
  const run = s.runs.find((r) => r.id === runId);
  assert.ok(run, `run ${runId} in the snapshot`);
  const commits =
    run.head_before && run.head_after
      ? await countCommits(run.worktree ?? repo.root, run.head_before, run.head_after)
      : null;
  return runOutcome(s, run, run.exit_code ?? -1, 0, commits).text;
}

/** `springfield run` in `cwd`: the epic's worktree for Ralph and Bart, a planning worktree for Lisa (never the main worktree). */
async function run(args: string[], cwd: string): Promise<{ id: number; code: number | null }> {
  const r = await runCli(cwd, ['run', ...args, '--json', '--', process.execPath, agent], { SF_CLI: CLI_PATH });
  return { id: (JSON.parse(r.stdout) as { run: { id: number } }).run.id, code: r.code };
}

test("a builder's run: succeeded, the step completed, its commit; a failing one: released, no commits; a reviewer's: its signal", async () => {
  const { id } = assertOk<{ id: string }>(await runJson(repo.root, ['epic', 'create', 'Notes']));
  assertOk(await runJson(repo.root, ['plan', 'propose', id, 'plans/notes.md', '--agent', 'lisa']));
  assertOk(await runJson(repo.root, ['plan', 'approve', id]));
  const wt = assertOk<{ worktree_path: string }>(await runJson(repo.root, ['epic', 'start', id])).worktree_path;
  assertClaimed(await runJson(wt, ['claim', 'plans/notes.md'], { SPRINGFIELD_AGENT: 'ralph' }));
  const ok = await run(['--role', 'ralph', '--epic', id, '--step', 'step-1', '--plan', 'plans/notes.md'], wt);
  assert.equal(ok.code, 0);
  assert.match(
    await outcomeOf(ok.id),
    new RegExp(`^succeeded · exit 0 · ${SPAN} · Step 1 completed · 1 commit \\([0-9a-f]{7}\\)$`),
  );

  assertClaimed(await runJson(wt, ['claim', 'plans/notes.md'], { SPRINGFIELD_AGENT: 'ralph' }));
  const r = await runCli(
    wt,
    [
      'run',
      '--role',
      'ralph',
      '--epic',
      id,
      '--step',
      'step-2',
      '--plan',
      'plans/notes.md',
      '--json',
      '--',
      process.execPath,
      agent,
      'fail',
    ],
    { SF_CLI: CLI_PATH },
  );
  assert.equal(r.code, 1, 'run keeps its exit-code contract: the agent exit code');
  const failed = (JSON.parse(r.stdout) as { run: { id: number } }).run.id;
  assert.equal(
    await outcomeOf(failed),
    (await outcomeOf(failed)).replace(/ — .*/, ''),
    'the reason "exit 1" is not said twice',
  );
  assert.match(
    await outcomeOf(failed),
    new RegExp(`^failed · exit 1 · ${SPAN} · Step 2 released \\(pending\\) · no commits$`),
  );

  assertClaimed(await runJson(wt, ['claim', 'plans/notes.md'], { SPRINGFIELD_AGENT: 'ralph' }));
  assert.equal(
    (await run(['--role', 'ralph', '--epic', id, '--step', 'step-2', '--plan', 'plans/notes.md'], wt)).code,
    0,
  );
  assertOk(await runJson(repo.root, ['epic', 'finish', id]));
  const bart = await run(['--role', 'bart', '--epic', id], wt);
  assert.equal(bart.code, 0);
  assert.match(await outcomeOf(bart.id), new RegExp(`^succeeded · exit 0 · ${SPAN} · signal: pass$`));
});

test("a planner's run names the plan version it proposed", async () => {
  const { id } = assertOk<{ id: string }>(await runJson(repo.root, ['epic', 'create', 'Lisa plans']));
  const lisa = await run(['--role', 'lisa', '--epic', id], planningWorktree(repo, id));
  assert.equal(lisa.code, 0);
  assert.match(
    await outcomeOf(lisa.id),
    new RegExp(`^succeeded · exit 0 · ${SPAN} · plan version 1 proposed, waiting for approval$`),
  );
});

test('commits git cannot count (a head gone, a folder gone) are left out, not guessed', async () => {
  assert.equal(await countCommits(repo.root, '0'.repeat(40), 'HEAD'), null);
  assert.equal(await countCommits(join(repo.tmp, 'gone'), 'HEAD~1', 'HEAD'), null);
});

test('a launch that never recorded a run says so', () => {
  assert.match(
    runOutcome(undefined, undefined, 3, 1200, null).text,
    /^springfield run exited 3 before recording the run/,
  );
});

test('run outlives a reader that goes away: the agent finishes and the run is recorded', async () => {
  const { id } = assertOk<{ id: string }>(await runJson(repo.root, ['epic', 'create', 'Chatty']));
  const child = spawn(
    process.execPath,
    [CLI_PATH, 'run', '--role', 'lisa', '--epic', id, '--', process.execPath, agent, 'chatty'],
    { cwd: planningWorktree(repo, id), env: cleanEnv({ SF_CLI: CLI_PATH }), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // The window that showed it closes: nobody reads its output any more.
  child.stdout.destroy();
  child.stderr.destroy();
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  assert.equal(code, 0, 'run ended normally with the agent');
  const runs = assertOk<{ runs: { epic_id: string; status: string }[] }>(
    await runJson(repo.root, ['runs', '--epic', id]),
  ).runs;
  assert.deepEqual(
    runs.map((r) => r.status),
    ['no_progress'],
    'the run was recorded (it proposed nothing), not left running',
  );
});
