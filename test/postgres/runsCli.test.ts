// The CLI's `signal`, `signals`, `signal decide`, `runs` and `run` on PostgreSQL end to end, in a real
// git repository whose commands reach the server through SPRINGFIELD_DATABASE_URL (the agents' commands
// too, through the environment `run` hands them). Epics are moved through the store on the same server
// where no CLI command exists yet on this backend (plan approval, epic start).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import type { RunView } from '../../src/core/store/runTypes.ts';
import type { SignalView } from '../../src/core/store/epicTypes.ts';
import { pidAlive } from '../../src/core/runs/processGroup.ts';
import {
  assertClaimed,
  assertFails,
  assertOk,
  cleanEnv,
  CLI_PATH,
  ensureCli,
  makeRepo,
  runCli,
  runJson,
  type Repo,
} from '../helpers/gitRepo.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const PLAN =
  '# Plan: Notes\n\n## Step 1: Store {#step-1}\n**Tasks:**\n- [ ] Write it\n\n## Step 2: Index {#step-2}\n**Tasks:**\n- [ ] Index it\n';
/** Ralph or Bart as a script: does its role's work through the CLI; `fail` exits 1, `sleep` waits to be killed. */
const AGENT = String.raw`
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const sf = (...a) => execFileSync(process.execPath, [process.env.SF_CLI, ...a], { encoding: 'utf8' });
const mode = process.argv[2];
if (mode === 'fail') { console.error('model unavailable'); process.exit(1); }
if (mode === 'sleep') { fs.writeFileSync(process.argv[3], String(process.pid)); setTimeout(() => {}, 120000); }
else if (process.env.SPRINGFIELD_ROLE === 'ralph') {
  fs.writeFileSync('store-' + process.env.SPRINGFIELD_STEP + '.txt', 'x\n');
  sf('update', process.env.SPRINGFIELD_PLAN, process.env.SPRINGFIELD_STEP, '--all', 'completed');
  execFileSync('git', ['add', '-A']);
  execFileSync('git', ['commit', '-q', '-m', 'Write ' + process.env.SPRINGFIELD_STEP]);
  sf('complete', process.env.SPRINGFIELD_PLAN, process.env.SPRINGFIELD_STEP, '--commit', 'HEAD');
}
else if (process.env.SPRINGFIELD_ROLE === 'bart') sf('signal', process.env.SPRINGFIELD_EPIC, '--type', 'pass', '--summary', 'fine');
`;
const pgServer = postgresForFile({ durability: 'fast' });
let databases = 0;

interface Setup {
  readonly repo: Repo;
  readonly env: Record<string, string>;
  readonly store: Store;
  readonly agent: string;
}

function setup(t: TestContext, gitignore = true): Setup {
  const host = 'host-a';
  ensureCli();
  const url = pgServer.server.createDatabase(`runs_cli_${++databases}`);
  const repo = makeRepo({
    files: { ...(gitignore ? { '.gitignore': '.springfield/\n' } : {}), 'plans/notes.md': PLAN },
  });
  const agent = join(repo.tmp, 'agent.cjs');
  writeFileSync(agent, AGENT);
  const env = {
    SPRINGFIELD_DATABASE_URL: url,
    SPRINGFIELD_HOST: host,
    SPRINGFIELD_REPO_ID: 'runs-cli',
    SF_CLI: CLI_PATH,
  };
  const store = openStore({ location: url, repository: { id: 'runs-cli', source: 'configured' }, host });
  t.after(async () => {
    await store.close();
    repo.cleanup();
  });
  return { repo, env, store, agent };
}

/** An in-progress epic owning plans/notes.md, created by the CLI and started through the store. */
/** An epic in progress in its own worktree (`<root>.springfield/<epic>` on springfield/<epic>), where its builders run (docs/lifecycle.md). */
async function startedEpic(s: Setup): Promise<string> {
  const { id } = assertOk<{ id: string }>(
    runJson(s.repo.root, ['epic', 'create', 'Notes', '--brief', 'Keep notes.'], s.env),
  );
  await s.store.applyEpicEvent(id, 'plan_approved', { worktree: s.repo.root, agent: 'marge' }, 'approved');
  await s.store.applyEpicEvent(id, 'start', { worktree: s.repo.root, agent: 'marge' }, 'go');
  await s.store.initPlan(
    planSourceOf('plans/notes.md', parsePlan(PLAN, 'plans/notes.md')),
    { worktree: s.repo.root, agent: 'marge' },
    { epicId: id },
  );
  s.repo.git(['worktree', 'add', '-q', '-b', `springfield/${id}`, epicWorktree(s, id)]);
  await s.store.setEpicWorktree(id, epicWorktree(s, id), `springfield/${id}`);
  return id;
}

function epicWorktree(s: Setup, id: string): string {
  return `${s.repo.root}.springfield/${id}`;
}

test('signal, signals and signal decide on PostgreSQL: locations stored, the transition applied, a person decides once', async (t) => {
  const s = setup(t);
  const id = await startedEpic(s);
  await s.store.applyEpicEvent(id, 'steps_completed', { worktree: s.repo.root, agent: 'marge' }, 'done');
  writeFileSync(join(s.repo.root, 'notes.ts'), 'a\nb\nc\n');
  const sent = assertOk<{ signal_id: number; transition: { from: string; to: string; next_role: string } }>(
    runJson(
      s.repo.root,
      [
        'signal',
        id,
        '--type',
        'implementation_failure',
        '--summary',
        'b is wrong',
        '--location',
        'notes.ts:2:3',
        '--note',
        'here',
        '--file',
        'notes.ts',
        '--line',
        '1',
      ],
      s.env,
    ),
  );
  assert.deepEqual(
    [sent.transition.from, sent.transition.to, sent.transition.next_role],
    ['implemented', 'in_progress', 'ralph'],
  );
  const listed = assertOk<{ signals: SignalView[] }>(runJson(s.repo.root, ['signals', id], s.env)).signals;
  assert.deepEqual(
    listed.map((x) => [x.id, x.type, x.status, x.locations]),
    [
      [
        sent.signal_id,
        'implementation_failure',
        'applied',
        [
          { file: 'notes.ts', line: 2, end_line: 3, note: 'here' },
          { file: 'notes.ts', line: 1, end_line: null, note: null },
        ],
      ],
    ],
  );
  assertFails(
    runJson(s.repo.root, ['signal', id, '--type', 'pass', '--summary', 'too early'], s.env),
    1,
    'invalid_transition',
  );
  await s.store.applyEpicEvent(id, 'steps_completed', { worktree: s.repo.root, agent: 'marge' }, 'again');
  const waiting = assertOk<{ signal_id: number; awaiting_person: boolean }>(
    runJson(
      s.repo.root,
      ['signal', id, '--type', 'adr_invalidated', '--summary', 'ADR 3 no longer holds', '--await-person'],
      s.env,
    ),
  );
  assert.equal(waiting.awaiting_person, true);
  const text = runCli(s.repo.root, ['signals', '--open'], s.env);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`#${waiting.signal_id}`));
  const decided = assertOk<{ from: string; to: string }>(
    runJson(
      s.repo.root,
      ['signal', 'decide', String(waiting.signal_id), '--decision', 'accept', '--note', 'fine by me'],
      s.env,
    ),
  );
  assert.deepEqual([decided.from, decided.to], ['implemented', 'verified']);
  assertFails(
    runJson(s.repo.root, ['signal', 'decide', String(waiting.signal_id), '--decision', 'accept'], s.env),
    1,
    'signal_closed',
  );
  assertFails(runJson(s.repo.root, ['signal', 'decide', '99999', '--decision', 'accept'], s.env), 2, 'unknown_signal');
  assert.equal(existsSync(join(s.repo.root, '.springfield', 'state.db')), false, 'no SQLite file was made');
});

test('runs on PostgreSQL lists runs with per-epic session counts; another host sees the same runs', async (t) => {
  const s = setup(t);
  const id = await startedEpic(s);
  const actor = { worktree: s.repo.root, agent: null };
  for (const [role, code] of [
    ['ralph', 1],
    ['bart', 0],
    ['setup', 0],
  ] as const) {
    const r = await s.store.startRun(
      {
        epicId: id,
        planPath: null,
        stepAnchor: null,
        role,
        iteration: 1,
        worktree: s.repo.root,
        agentId: role,
        command: [role, '--x'],
        pid: process.pid,
      },
      actor,
    );
    await s.store.finishRun(r.id, { exitCode: code, signal: null }, actor);
  }
  const listed = assertOk<{ runs: RunView[]; sessions: Record<string, unknown> }>(
    runJson(s.repo.root, ['runs', '--epic', id], s.env),
  );
  assert.deepEqual(listed.sessions, { [id]: { lisa: 0, ralph: 1, bart: 1, lovejoy: 0, total: 2 } });
  assert.deepEqual(
    listed.runs.map((r) => [r.role, r.status, r.command]),
    [
      ['setup', 'succeeded', '["setup","--x"]'],
      ['bart', 'succeeded', '["bart","--x"]'],
      ['ralph', 'failed', '["ralph","--x"]'],
    ],
  );
  const text = runCli(s.repo.root, ['runs', '--epic', id], { ...s.env, SPRINGFIELD_HOST: 'host-b' });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`^  ${id}: 2 — lisa 0 · ralph 1 · bart 1 · lovejoy 0$`, 'm'));
  assert.match(
    text.stdout,
    new RegExp(`^#\\d+ ralph ${id} \\[failed\\] iteration 1 — exit 1 after \\d+s — exit 1$`, 'm'),
  );
  assert.deepEqual(assertOk<{ runs: RunView[] }>(runJson(s.repo.root, ['runs', '--active'], s.env)).runs, []);
  // What `run` hands its agent: SPRINGFIELD_DB names the database, a URL included.
  const viaDb = assertOk<{ runs: RunView[] }>(
    runJson(s.repo.root, ['runs'], { SPRINGFIELD_DB: s.env.SPRINGFIELD_DATABASE_URL, SPRINGFIELD_REPO_ID: 'runs-cli' }),
  );
  assert.equal(viaDb.runs.length, 3);
  assert.equal(existsSync(join(s.repo.root, '.springfield', 'state.db')), false);
});

test('run on PostgreSQL: a builder succeeds and completes its step with a commit; a failing one releases its step', async (t) => {
  const s = setup(t, false);
  const id = await startedEpic(s);
  const wt = epicWorktree(s, id);
  assertClaimed(runJson(wt, ['claim', 'plans/notes.md'], { ...s.env, SPRINGFIELD_AGENT: 'ralph' }));
  const ok = runCli(
    wt,
    ['run', '--role', 'ralph', '--epic', id, '--step', 'step-1', '--json', '--', process.execPath, s.agent],
    s.env,
  );
  assert.equal(ok.code, 0, ok.stderr);
  const { run: okRun, context_file: contextFile } = JSON.parse(ok.stdout) as { run: RunView; context_file: string };
  assert.ok(
    contextFile.startsWith(join(wt, '.springfield-context') + '/'),
    `the agent's copy is inside its worktree: ${contextFile}`,
  );
  assert.ok(
    existsSync(join(s.repo.root, '.springfield', 'context', basename(contextFile))),
    "and the record in the repository's .springfield folder",
  );
  assert.deepEqual(
    [okRun.status, okRun.step_anchor, okRun.head_before !== okRun.head_after],
    ['succeeded', 'step-1', true],
  );
  assert.equal((await s.store.stepRecord('plans/notes.md', 'step-1')).status, 'completed');
  assert.match(
    readFileSync(join(s.repo.root, '.gitignore'), 'utf8'),
    /^\.springfield\/$/m,
    'the context folder is kept out of git',
  );
  assert.equal(
    execFileSync('git', ['ls-files', '.springfield'], { cwd: s.repo.root, encoding: 'utf8' }),
    '',
    "the agent's 'git add -A' did not commit its context file",
  );
  const claim = assertClaimed(runJson(wt, ['claim', 'plans/notes.md'], { ...s.env, SPRINGFIELD_AGENT: 'ralph' }));
  const bad = runCli(
    wt,
    ['run', '--role', 'ralph', '--epic', id, '--step', 'step-2', '--json', '--', process.execPath, s.agent, 'fail'],
    s.env,
  );
  assert.equal(bad.code, 1, "the agent's exit code");
  const badRun = (JSON.parse(bad.stdout) as { run: RunView }).run;
  assert.deepEqual([badRun.status, badRun.outcome_reason], ['failed', 'exit 1']);
  const step = await s.store.stepRecord('plans/notes.md', 'step-2');
  assert.deepEqual(
    [step.status, step.claim_token],
    ['pending', claim.claim_token + 1],
    'released at once, the token fenced',
  );
  assert.equal((await s.store.getEpic(id)).iteration, 2, 'the failure counted one build iteration');
});

test('run on PostgreSQL: a supervisor killed -9 is an orphan of its own host only; marking it lost releases its step', async (t) => {
  const s = setup(t);
  const id = await startedEpic(s);
  const wt = epicWorktree(s, id);
  const claim = assertClaimed(runJson(wt, ['claim', 'plans/notes.md', '--lease', '3600'], s.env));
  const pidFile = join(s.repo.tmp, 'agent.pid');
  const child = spawn(
    process.execPath,
    [
      CLI_PATH,
      'run',
      '--role',
      'ralph',
      '--epic',
      id,
      '--step',
      'step-1',
      '--lease',
      '3600',
      '--',
      process.execPath,
      s.agent,
      'sleep',
      pidFile,
    ],
    { cwd: wt, env: cleanEnv(s.env), stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (let i = 0; i < 600 && !existsSync(pidFile); i++) await sleep(25);
  const agentPid = Number(readFileSync(pidFile, 'utf8'));
  t.after(() => {
    if (pidAlive(agentPid)) process.kill(agentPid, 'SIGKILL');
  });
  const other = openStore({
    location: s.env.SPRINGFIELD_DATABASE_URL ?? '',
    repository: { id: 'runs-cli', source: 'configured' },
    host: 'host-b',
  });
  t.after(() => other.close());
  child.kill('SIGKILL');
  await exited;
  assert.deepEqual(await other.markOrphans(() => false, null), [], "host b never judges host a's pids");
  const [running] = await s.store.runs({ active: true });
  assert.equal(running?.agent_pid, agentPid, "the agent's process group is recorded");
  const lost = await s.store.markOrphans(pidAlive, null);
  assert.deepEqual(
    lost.map((r) => [r.id, r.status, r.outcome_reason]),
    [[running?.id, 'lost', `supervising process ${child.pid} is gone`]],
  );
  const next = assertClaimed(runJson(wt, ['claim', 'plans/notes.md'], { ...s.env, SPRINGFIELD_HOST: 'host-b' }));
  assert.deepEqual(
    [next.step_anchor, next.reclaimed_from_expired],
    ['step-1', false],
    'claimable at once: the hour-long lease did not have to expire',
  );
  assert.ok(next.claim_token > claim.claim_token + 1, 'the lost holder was fenced by the release');
});
