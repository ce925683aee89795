import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../../src/core/errors.ts';
import { agentEnv } from '../../src/core/runs/agentEnv.ts';
import { DEFAULT_RUN_CONFIG, loadRoleCommands } from '../../src/core/runs/runConfig.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import { loadSqlite } from '../../src/core/store/sqlite/sqlite.ts';
import {
  assertClaimed,
  assertFails,
  assertOk,
  cleanEnv,
  CLI_PATH,
  ensureCli,
  makeRepo,
  writeFiles,
  type Claimed,
  type Repo,
} from '../helpers/gitRepo.ts';
import { runCli, runJson } from '../helpers/cliInProcess.ts';
import type { RunView } from '../../src/core/store/runTypes.ts';
import { pidAlive } from '../../src/core/runs/processGroup.ts';

/** A scripted agent: records its env, argv and cwd as JSON in argv[2], sleeps argv[4] ms, then exits with argv[3] (or kills itself with a signal name). */
const AGENT = String.raw`
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
const [out, exit, sleep, ...rest] = process.argv.slice(2);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('SPRINGFIELD_') || k.startsWith('VSCODE_') || k === 'ELECTRON_RUN_AS_NODE'));
const context = env.SPRINGFIELD_CONTEXT_FILE ? readFileSync(env.SPRINGFIELD_CONTEXT_FILE, 'utf8') : null;
// Written whole, then renamed: the test polls for the file and must never read half of it.
writeFileSync(out + '.tmp', JSON.stringify({ env, argv: rest, cwd: process.cwd(), pid: process.pid, context }));
renameSync(out + '.tmp', out);
const end = () => (/^SIG/.test(exit) ? process.kill(process.pid, exit) : process.exit(Number(exit)));
// A number: lives that many ms. A path: lives until the test creates that file, however slow the machine.
if (/^\d+$/.test(sleep)) setTimeout(end, Number(sleep));
else setInterval(() => existsSync(sleep) && end(), 25);
`;

/** A run's length as shortDuration writes it (40s, 12m, 1h45m): a loaded machine makes a run of seconds last minutes. */
const SPAN = String.raw`(?:\d+[smd]|\d+h(?:\d\dm)?)`;

interface AgentReport {
  readonly env: Record<string, string>;
  readonly argv: string[];
  readonly cwd: string;
  readonly pid: number;
  readonly context: string | null;
}

interface Wrapper {
  readonly child: ChildProcess;
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

const plan = (title: string) =>
  `# Plan: ${title}\n\n## Step 1: Build the ${title} {#step-1}\n**Tasks:**\n- [ ] Write it\n\n## Step 2: Document it {#step-2}\n**Depends on:** #step-1\n**Tasks:**\n- [ ] Docs\n`;

let repo: Repo;
let agentPath: string;
let reportDir: string;
let counter = 0;

before(() => {
  ensureCli();
  const names = [
    'env',
    'pwdpath',
    'nostep',
    'exit',
    'missing',
    'usage',
    'literal',
    'literal-branch',
    'heartbeat',
    'sessions',
    'orphan',
    'links',
    'shimsweep',
  ];
  repo = makeRepo({
    files: { '.gitignore': '.springfield/\n', ...Object.fromEntries(names.map((n) => [`plans/${n}.md`, plan(n)])) },
  });
  agentPath = join(repo.tmp, 'agent.mjs');
  writeFileSync(agentPath, AGENT);
  reportDir = join(repo.tmp, 'reports');
  mkdirSync(reportDir);
});
after(() => repo.cleanup());

/** An in-progress epic on plans/<name>.md, started in its own worktree `wt`, with step-1 claimed there. */
async function epicWithClaim(
  name: string,
  lease = 7200,
): Promise<{ id: string; planPath: string; claim: Claimed; wt: string }> {
  const planPath = `plans/${name}.md`;
  const { id } = assertOk<{ id: string }>(
    await runJson(repo.root, ['epic', 'create', `Runs ${name}`, '--brief', `Exercise runs: ${name}.`]),
  );
  assertOk(await runJson(repo.root, ['plan', 'propose', id, planPath, '--agent', 'lisa']));
  assertOk(await runJson(repo.root, ['plan', 'approve', id, '--agent', 'marge']));
  const wt = assertOk<{ worktree_path: string }>(await runJson(repo.root, ['epic', 'start', id])).worktree_path;
  const claim = assertClaimed(await runJson(wt, ['claim', planPath, '--lease', String(lease)]));
  assert.equal(claim.step_anchor, 'step-1');
  return { id, planPath, claim, wt };
}

/** A planning worktree for `epic`, where the scheduler would start Lisa (`<repo>.springfield/<epic>-plan`, detached at main). */
function planning(epic: string): string {
  const path = `${repo.root}.springfield/${epic}-plan`;
  if (!existsSync(path)) repo.git(['worktree', 'add', '-q', '--detach', path, 'main']);
  return realpathSync(path);
}

/** The argv of `springfield run` whose agent reports to a fresh file; returns both. */
function runArgs(
  head: readonly string[],
  exit: string,
  sleepMs: number | 'until released',
  extra: readonly string[] = [],
): { args: string[]; report: string; release: () => void } {
  const report = join(reportDir, `agent-${++counter}.json`);
  const released = `${report}.release`;
  const lives = sleepMs === 'until released' ? released : String(sleepMs);
  return {
    args: ['run', ...head, '--', process.execPath, agentPath, report, exit, lives, ...extra],
    report,
    release: () => writeFileSync(released, ''),
  };
}

function startWrapper(cwd: string, args: readonly string[], env: Record<string, string> = {}): Wrapper {
  const child = spawn(process.execPath, [CLI_PATH, ...args], {
    cwd,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => {
      child.on('exit', (code, signal) => setImmediate(() => resolve({ code, signal, stdout, stderr })));
    },
  );
  return { child, done };
}

async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function rows<T = Record<string, unknown>>(sql: string, ...params: (string | number)[]): T[] {
  const db = new (loadSqlite())(join(repo.root, '.springfield', 'state.db'), { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

const runRow = (id: number) => rows<RunView>('SELECT * FROM runs WHERE id = ?', id)[0];
const readReport = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as AgentReport;
const stepLease = (planPath: string) =>
  rows<{ lease_expires_at: string }>(
    `SELECT lease_expires_at FROM steps WHERE plan_path = ? AND anchor = 'step-1'`,
    planPath,
  )[0]?.lease_expires_at ?? '';

describe('springfield run', () => {
  test('passes SPRINGFIELD_* values and a context file, strips editor variables, and records running → no_progress (it did nothing) releasing its step', async () => {
    const { id, planPath, claim, wt } = await epicWithClaim('env');
    mkdirSync(join(wt, 'src'), { recursive: true });
    const { args, report, release } = runArgs(
      ['--role', 'ralph', '--epic', id, '--step', 'step-1', '--json'],
      '0',
      'until released',
    );
    const w = startWrapper(join(wt, 'src'), args, {
      ELECTRON_RUN_AS_NODE: '1',
      VSCODE_PID: '4242',
      VSCODE_IPC_HOOK: '/tmp/x.sock',
      SPRINGFIELD_DEBUG: '1',
    });
    let seen: AgentReport;
    try {
      seen = await waitFor('the agent to start', () => existsSync(report) && readReport(report));
      const live = runRow(Number(seen.env.SPRINGFIELD_RUN_ID));
      assert.deepEqual(
        [live?.status, live?.pid, live?.ended_at, live?.exit_code],
        ['running', w.child.pid, null, null],
        'recorded as running with the supervising pid while the agent lives',
      );
    } finally {
      release();
    }
    const runId = Number(seen.env.SPRINGFIELD_RUN_ID);
    const r = await w.done;
    assert.equal(r.code, 0, r.stderr);
    const contextFile = seen.env.SPRINGFIELD_CONTEXT_FILE ?? '';
    assert.match(
      contextFile,
      new RegExp(`^${join(wt, '.springfield-context', String(runId))}-[0-9a-f]{12}\\.md$`),
      'a fresh name per run, inside the worktree the agent may read',
    );
    assert.equal(
      readFileSync(join(repo.root, '.springfield', 'context', basename(contextFile)), 'utf8'),
      readFileSync(contextFile, 'utf8'),
      'and the record kept beside the database',
    );
    assert.equal(
      repo.git(['status', '--porcelain', '--ignored'], wt).includes('.springfield-context'),
      true,
      'which git ignores',
    );
    const port = Number(seen.env.SPRINGFIELD_PORT);
    assert.ok(
      port >= 20_000 && port <= 29_990 && port % 10 === 0,
      `the worktree's first port, from an aligned block: ${port}`,
    );
    assert.deepEqual(
      seen.env,
      {
        SPRINGFIELD_EPIC: id,
        SPRINGFIELD_STEP: 'step-1',
        SPRINGFIELD_PLAN: planPath,
        SPRINGFIELD_WORKTREE: wt,
        SPRINGFIELD_CLAIM_TOKEN: String(claim.claim_token),
        SPRINGFIELD_CONTEXT_FILE: contextFile,
        SPRINGFIELD_ROLE: 'ralph',
        SPRINGFIELD_RUN_ID: String(runId),
        SPRINGFIELD_AGENT: 'ralph',
        SPRINGFIELD_DB: join(repo.root, '.springfield', 'state.db'),
        SPRINGFIELD_DEBUG: '1',
        SPRINGFIELD_EPIC_TITLE: 'Runs env',
        SPRINGFIELD_WORKTREE_ID: id,
        SPRINGFIELD_MAIN_WORKTREE: repo.root,
        SPRINGFIELD_PORT: String(port),
        SPRINGFIELD_PORTS: `${port}-${port + 9}`,
      },
      "no ELECTRON_RUN_AS_NODE or VSCODE_* although the parent had them; the worktree's variables and ports",
    );
    assert.equal(seen.cwd, wt, 'the agent runs at the worktree root');
    assert.match(seen.context ?? '', /## Step step-1: Build the env \[claimed\]/);
    assert.match(seen.context ?? '', /Exercise runs: env\./);
    assert.ok(existsSync(contextFile));

    const out = JSON.parse(r.stdout) as { run: RunView; exit_code: number; context_file: string };
    const done = runRow(runId);
    assert.deepEqual(out.run, done, 'stdout is the one JSON document, the agent writes nothing to it');
    assert.deepEqual(
      [
        done?.status,
        done?.exit_code,
        done?.role,
        done?.epic_id,
        done?.plan_path,
        done?.step_anchor,
        done?.worktree,
        done?.iteration,
        done?.claim_token,
      ],
      ['no_progress', 0, 'ralph', id, planPath, 'step-1', wt, 1, claim.claim_token],
    );
    assert.equal(done?.outcome_reason, 'exited 0 without completing step-1, committing or ticking an item');
    const step = rows<{ status: string; claimed_by: string | null; claim_token: number }>(
      `SELECT status, claimed_by, claim_token FROM steps WHERE plan_path = ? AND anchor = 'step-1'`,
      planPath,
    )[0];
    assert.deepEqual(
      step,
      { status: 'pending', claimed_by: null, claim_token: claim.claim_token + 1 },
      'released at once, the old token fenced',
    );
    assert.ok(done?.ended_at && done.ended_at >= done.started_at);
    assert.deepEqual(JSON.parse(done?.command ?? ''), args.slice(args.indexOf('--') + 1));
    const events = rows<{ action: string; from_status: string | null; to_status: string }>(
      `SELECT action, from_status, to_status FROM events WHERE entity = 'run' AND json_extract(data, '$.run_id') = ? ORDER BY id`,
      runId,
    );
    assert.deepEqual(events, [
      { action: 'start', from_status: null, to_status: 'running' },
      { action: 'finish', from_status: 'running', to_status: 'no_progress' },
    ]);
  });

  test('the context file is never written through a planted link: a linked context folder is refused, a link at a run id is ignored', async () => {
    const { id } = await epicWithClaim('links');
    const contextDir = join(repo.root, '.springfield', 'context');
    const victim = join(repo.tmp, 'victim');
    mkdirSync(victim, { recursive: true });
    writeFileSync(join(victim, 'precious'), 'keep me');
    const nextRun = Number(rows<{ n: number }>('SELECT COALESCE(MAX(id), 0) + 1 AS n FROM runs')[0]?.n);
    mkdirSync(contextDir, { recursive: true });
    for (let i = 0; i < 5; i++) symlinkSync(join(victim, 'precious'), join(contextDir, `${nextRun + i}.md`));

    const ok = runArgs(['--role', 'lisa', '--epic', id, '--json'], '0', 0);
    const r = await startWrapper(planning(id), ok.args).done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      readFileSync(join(victim, 'precious'), 'utf8'),
      'keep me',
      'the planted <run-id>.md link was not written through',
    );
    assert.notEqual(readReport(ok.report).env.SPRINGFIELD_CONTEXT_FILE, join(contextDir, `${nextRun}.md`));

    rmSync(contextDir, { recursive: true });
    symlinkSync(victim, contextDir);
    const refused = runArgs(['--role', 'lisa', '--epic', id, '--json'], '0', 0);
    const r2 = await startWrapper(planning(id), refused.args).done;
    assert.equal(r2.code, 3, r2.stderr);
    assert.match(r2.stderr, /context is a link; refusing to write through it/);
    assert.equal(existsSync(refused.report), false, 'the agent never started');
    assert.deepEqual(readdirSync(victim), ['precious'], 'nothing was written into the folder the link points at');
    rmSync(contextDir);
  });

  test('a run without a step drops a stale step and claim token from the parent environment', async () => {
    const { id } = await epicWithClaim('nostep');
    const { args, report } = runArgs(['--role', 'lisa', '--epic', id], '0', 0);
    const r = await startWrapper(planning(id), args, { SPRINGFIELD_STEP: 'step-9', SPRINGFIELD_CLAIM_TOKEN: '99' })
      .done;
    assert.equal(r.code, 0, r.stderr);
    const env = readReport(report).env;
    assert.equal(env.SPRINGFIELD_STEP, undefined);
    assert.equal(env.SPRINGFIELD_CLAIM_TOKEN, undefined);
    assert.deepEqual(
      [env.SPRINGFIELD_ROLE, env.SPRINGFIELD_EPIC, env.SPRINGFIELD_PLAN],
      ['lisa', id, 'plans/nostep.md'],
    );
  });

  test('the exit code propagates; a signal gives 128+N and status failed; SIGTERM is forwarded to the agent and the run is stopped, spending nothing', async () => {
    const { id, wt } = await epicWithClaim('exit');
    const failing = runArgs(['--role', 'ralph', '--epic', id, '--step', 'step-1'], '3', 0);
    const r3 = await startWrapper(wt, failing.args).done;
    assert.equal(r3.code, 3, r3.stderr);
    const run3 = runRow(Number(readReport(failing.report).env.SPRINGFIELD_RUN_ID));
    assert.deepEqual([run3?.status, run3?.exit_code], ['failed', 3]);
    assert.ok(run3?.ended_at);

    const killed = runArgs(['--role', 'ralph', '--epic', id], 'SIGKILL', 0);
    const r9 = await startWrapper(wt, killed.args).done;
    assert.equal(r9.code, 137);
    const run9 = runRow(Number(readReport(killed.report).env.SPRINGFIELD_RUN_ID));
    assert.deepEqual([run9?.status, run9?.exit_code, run9?.outcome_reason], ['failed', 137, 'ended by SIGKILL']);

    const sleeper = runArgs(['--role', 'ralph', '--epic', id], '0', 30_000);
    const iteration = rows<{ iteration: number }>('SELECT iteration FROM epics WHERE id = ?', id)[0]?.iteration;
    const w = startWrapper(wt, sleeper.args);
    const seen = await waitFor('the agent to start', () => existsSync(sleeper.report) && readReport(sleeper.report));
    w.child.kill('SIGTERM');
    const r15 = await w.done;
    assert.equal(r15.code, 143, 'the wrapper survived SIGTERM, forwarded it and exited with the agent');
    assert.equal(pidAlive(seen.pid), false, 'the agent got the SIGTERM');
    const run15 = runRow(Number(seen.env.SPRINGFIELD_RUN_ID));
    assert.deepEqual(
      [run15?.status, run15?.exit_code],
      ['stopped', 143],
      'a stop (the scheduler stopping, a person) is no failure of the agent',
    );
    assert.match(run15?.outcome_reason ?? '', /^stopped by SIGTERM before its timeout/);
    assert.equal(
      rows<{ iteration: number }>('SELECT iteration FROM epics WHERE id = ?', id)[0]?.iteration,
      iteration,
      'a stopped run spends no build iteration',
    );
  });

  test("an agent never starts in a person's checkout or off the epic's branch: refused before anything is recorded", async () => {
    const { id, wt } = await epicWithClaim('literal-branch');
    const before = rows<{ n: number }>('SELECT COUNT(*) AS n FROM runs')[0]?.n ?? 0;
    const other = repo.addWorktree('elsewhere');
    const refused = async (cwd: string, role: string, code = 'outside_epic_worktree') =>
      assertFails(await runCli(cwd, ['run', '--json', '--role', role, '--epic', id, '--', 'true']), 1, code).message;
    assert.match(
      await refused(repo.root, 'ralph'),
      /^Ralph would work on sf-[0-9a-f]+ in the main worktree .*, a person's checkout; agents work only in the epic's own worktree; nothing was started$/,
    );
    assert.match(await refused(repo.root, 'lisa'), /in the main worktree/);
    assert.match(
      await refused(other, 'bart'),
      new RegExp(`^Bart works on ${id} only in its worktree ${wt} on springfield/${id}, not in ${other}`),
    );
    assert.match(await refused(wt, 'lisa'), /^Lisa plans sf-[0-9a-f]+ only in its planning worktree/);
    repo.git(['checkout', '-q', '-b', 'rogue'], wt);
    try {
      assert.match(
        await refused(wt, 'ralph'),
        new RegExp(`is on rogue, not springfield/${id}: Ralph commits only on the epic's branch`),
      );
    } finally {
      repo.git(['checkout', '-q', `springfield/${id}`], wt);
    }
    assert.equal(rows<{ n: number }>('SELECT COUNT(*) AS n FROM runs')[0]?.n, before, 'no run was recorded');
  });

  test("the agent's PWD is its worktree and `springfield` on its PATH runs this CLI, whatever the launcher's PWD and PATH", async () => {
    const { id, wt } = await epicWithClaim('pwdpath');
    const report = join(reportDir, 'pwdpath.txt');
    // What a real agent does: a shell tool in $PWD, and `springfield` found on PATH (never SPRINGFIELD_* lookups).
    const script = `cd "$PWD" && pwd -P > '${report}' && command -v springfield >> '${report}' && springfield --version >> '${report}' && springfield show plans/pwdpath.md --json >> '${report}'`;
    const bare = (process.env.PATH ?? '')
      .split(':')
      .filter((d) => d && !existsSync(join(d, 'springfield')))
      .join(':');
    const w = startWrapper(wt, ['run', '--role', 'ralph', '--epic', id, '--step', 'step-1', '--', 'sh', '-c', script], {
      PWD: repo.tmp,
      PATH: bare,
    });
    const r = await w.done;
    const lines = readFileSync(report, 'utf8').split('\n');
    assert.equal(lines[0], wt, `PWD names the worktree, not the launcher's folder (${r.stderr})`);
    assert.match(
      lines[1] ?? '',
      /\/\.springfield\/bin\/\d+-[0-9a-f]{8}\/springfield$/,
      'a springfield of this run, first on PATH',
    );
    assert.match(lines[2] ?? '', /^\d+\.\d+\.\d+/, 'it runs this CLI');
    assert.match(lines.slice(3).join('\n'), /"plan_path": "plans\/pwdpath.md"/, 'and reads the same store');
    assert.equal(existsSync(dirname(lines[1] ?? '')), false, 'the run removes its springfield when it ends');
  });

  test("a run killed with SIGKILL cannot remove its `springfield`: the next run does, and keeps a live run's and what is not Springfield's", async () => {
    const { id, wt } = await epicWithClaim('shimsweep');
    const bin = join(repo.root, '.springfield', 'bin');
    const sleeper = runArgs(['--role', 'ralph', '--epic', id], '0', 60_000);
    const w = startWrapper(wt, sleeper.args);
    const seen = await waitFor('the agent to start', () => existsSync(sleeper.report) && readReport(sleeper.report));
    const shimOf = (runId: string) => readdirSync(bin).find((n) => n.startsWith(`${runId}-`));
    const killedShim = shimOf(seen.env.SPRINGFIELD_RUN_ID ?? '');
    assert.ok(killedShim, 'the run made its springfield');
    w.child.kill('SIGKILL');
    await w.done;
    process.kill(-seen.pid, 'SIGKILL');
    mkdirSync(join(bin, 'mine'));
    // A live run's folder stays while another run sweeps.
    const live = runArgs(['--role', 'ralph', '--epic', id], '0', 60_000);
    const lw = startWrapper(wt, live.args);
    const liveSeen = await waitFor('the live agent to start', () => existsSync(live.report) && readReport(live.report));
    assert.equal(existsSync(join(bin, killedShim)), false, "the killed run's folder was removed by the next run");
    const liveShim = shimOf(liveSeen.env.SPRINGFIELD_RUN_ID ?? '');
    const next = runArgs(['--role', 'ralph', '--epic', id], '0', 0);
    assert.equal((await startWrapper(wt, next.args).done).code, 0);
    assert.ok(liveShim && existsSync(join(bin, liveShim)), 'a live run keeps its springfield');
    assert.ok(existsSync(join(bin, 'mine')), "a folder not named like a run's stays");
    lw.child.kill('SIGTERM');
    await lw.done;
    assert.deepEqual(readdirSync(bin), ['mine']);
    // What the scheduler does next: the killed run is lost, its step released (the other tests expect no orphan).
    const store = sqliteStore(join(repo.root, '.springfield', 'state.db'));
    try {
      assert.equal((await store.markOrphans(pidAlive, null)).length, 1);
    } finally {
      store.close();
    }
  });

  test('a command that cannot be found is recorded as unavailable (no iteration spent) with exit 127 and one clear line', async () => {
    const { id, wt } = await epicWithClaim('missing');
    const before = rows<{ n: number }>('SELECT COUNT(*) AS n FROM runs')[0]?.n ?? 0;
    const iteration = rows<{ iteration: number }>('SELECT iteration FROM epics WHERE id = ?', id)[0]?.iteration;
    const r = await runCli(wt, ['run', '--role', 'bart', '--epic', id, '--', 'springfield-no-such-agent', '--flag']);
    assert.equal(r.code, 127);
    assert.equal(
      r.stderr,
      `springfield: warning: agent command not found: 'springfield-no-such-agent' (run ${before + 1} recorded as unavailable, exit 127)\n`,
    );
    assert.deepEqual([runRow(before + 1)?.status, runRow(before + 1)?.exit_code], ['unavailable', 127]);
    assert.equal(
      rows<{ iteration: number }>('SELECT iteration FROM epics WHERE id = ?', id)[0]?.iteration,
      iteration,
      'an agent that never ran spends no build iteration',
    );
  });

  test('refuses bad usage before recording anything', async () => {
    const { id, wt } = await epicWithClaim('usage');
    const before = rows<{ n: number }>('SELECT COUNT(*) AS n FROM runs')[0]?.n ?? 0;
    const sf = (cwd: string, args: readonly string[]) => runCli(cwd, ['run', '--json', ...args]);
    assertFails(await sf(repo.root, ['--role', 'ralph', '--epic', id]), 2, 'missing_command');
    assertFails(await sf(repo.root, ['--role', 'ralph', '--epic', id, '--']), 2, 'missing_command');
    assertFails(await sf(repo.root, ['--role', 'marge', '--epic', id, '--', 'true']), 2, 'bad_option');
    assertFails(await sf(repo.root, ['--role', 'ralph', '--', 'true']), 2, 'missing_option');
    assertFails(await sf(repo.root, ['--role', 'ralph', '--epic', 'sf-0000', '--', 'true']), 2, 'unknown_epic');
    assertFails(
      await sf(repo.addWorktree('other'), ['--role', 'ralph', '--epic', id, '--step', 'step-1', '--', 'true']),
      1,
      'outside_epic_worktree',
    );
    assertFails(await sf(wt, ['--role', 'ralph', '--epic', id, '--step', 'step-2', '--', 'true']), 1, 'not_claimed');
    assert.equal(rows<{ n: number }>('SELECT COUNT(*) AS n FROM runs')[0]?.n, before);
  });

  test('arguments with shell metacharacters reach the agent literally', async () => {
    const { id, wt } = await epicWithClaim('literal');
    writeFiles(wt, { x: 'keep me\n' });
    // A second `--` and words that look like Springfield's options belong to the agent too.
    const nasty = [
      '$(touch pwned)',
      '; rm -rf x',
      '`touch pwned2`',
      '&& touch pwned3 #',
      'it\'s "quoted"',
      '$HOME',
      '${PATH}',
      '--',
      '--json',
      '-h',
      'epic $SPRINGFIELD_EPIC; rm x',
    ];
    const { args, report } = runArgs(['--role', 'ralph', '--epic', id], '0', 0, nasty);
    const r = await startWrapper(wt, args).done;
    assert.equal(r.code, 0, r.stderr);
    // Only Springfield's own $SPRINGFIELD_* values are replaced, as text inside the one argument (docs/agents.md).
    assert.deepEqual(readReport(report).argv, [...nasty.slice(0, -1), `epic ${id}; rm x`]);
    for (const f of ['pwned', 'pwned2', 'pwned3'])
      assert.equal(existsSync(join(wt, f)), false, `${f} was created: a shell ran`);
    assert.equal(readFileSync(join(wt, 'x'), 'utf8'), 'keep me\n');
  });
});

describe('leases, sessions and orphans', () => {
  test('the lease is heartbeated every lease/3 while the agent lives', async () => {
    const { id, planPath, wt } = await epicWithClaim('heartbeat', 3);
    const claimedLease = stepLease(planPath);
    const lastEvent = rows<{ id: number }>('SELECT MAX(id) AS id FROM events')[0]?.id ?? 0;
    const { args, report, release } = runArgs(
      ['--role', 'ralph', '--epic', id, '--step', 'step-1', '--lease', '3'],
      '0',
      'until released',
    );
    const w = startWrapper(wt, args);
    await waitFor('the agent to start', () => existsSync(report));
    const beats = () =>
      rows<{ at: string }>(
        `SELECT at FROM events WHERE id > ? AND entity = 'step' AND action = 'heartbeat' AND plan_path = ? ORDER BY id`,
        lastEvent,
        planPath,
      );
    const observed = new Set<string>();
    const advanced = () => Date.parse([...observed].filter(Boolean).sort().at(-1) ?? '') - Date.parse(claimedLease);
    // The agent lives until three heartbeats came and moved the lease on, however slow the machine.
    try {
      await waitFor(
        'a heartbeat at start and two more, the lease moved on by 1.5 s',
        () => observed.add(stepLease(planPath)) && beats().length >= 3 && advanced() >= 1500,
        60_000,
      );
    } finally {
      release();
    }
    const r = await w.done;
    assert.equal(r.code, 0, r.stderr);
    assert.ok(beats().length >= 3, `expected a heartbeat at start and about every second, got ${beats().length}`);
    assert.equal(stepLease(planPath), '', 'the run ended without finishing the step: released, no lease left');
    assert.ok(observed.size >= 2, `the lease moved while the agent lived: ${[...observed].join(', ')}`);
    const run = runRow(Number(readReport(report).env.SPRINGFIELD_RUN_ID));
    for (const b of beats()) assert.ok(run?.ended_at && b.at <= run.ended_at, 'no heartbeat after the run ended');
  });

  test('runs lists runs with per-epic session counts by role', async () => {
    const { id, wt } = await epicWithClaim('sessions');
    for (const role of ['lisa', 'ralph', 'ralph', 'bart', 'lovejoy', 'ralph']) {
      const r = await startWrapper(
        role === 'lisa' ? planning(id) : wt,
        runArgs(['--role', role, '--epic', id], role === 'bart' ? '1' : '0', 0).args,
      ).done;
      assert.equal(r.code, role === 'bart' ? 1 : 0, r.stderr);
    }
    const listed = assertOk<{ runs: RunView[]; sessions: Record<string, unknown> }>(
      await runJson(repo.root, ['runs', '--epic', id]),
    );
    assert.deepEqual(listed.sessions, { [id]: { lisa: 1, ralph: 3, bart: 1, lovejoy: 1, total: 6 } });
    // Exit 0 without a proposal, a commit or a signal is no progress; Lovejoy is judged by its exit code.
    assert.deepEqual(
      listed.runs.map((r) => [r.role, r.status]),
      [
        ['ralph', 'no_progress'],
        ['lovejoy', 'succeeded'],
        ['bart', 'failed'],
        ['ralph', 'no_progress'],
        ['ralph', 'no_progress'],
        ['lisa', 'no_progress'],
      ],
    );
    const all = assertOk<{ sessions: Record<string, { total: number }> }>(await runJson(repo.root, ['runs']));
    assert.ok(Object.keys(all.sessions).length >= 2 && all.sessions[id]?.total === 6);
    assert.deepEqual(
      assertOk<{ runs: RunView[] }>(await runJson(repo.root, ['runs', '--active', '--epic', id])).runs,
      [],
    );
    const text = await runCli(repo.root, ['runs', '--epic', id]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^  ${id}: 6 — lisa 1 · ralph 3 · bart 1 · lovejoy 1$`, 'm'));
    assert.match(
      text.stdout,
      new RegExp(`^#\\d+ bart ${id} \\[failed\\] iteration \\d+ — exit 1 after ${SPAN} — exit 1$`, 'm'),
    );
    assert.match(
      text.stdout,
      new RegExp(
        `^#\\d+ lisa ${id} \\[no_progress\\] iteration \\d+ — exit 0 after ${SPAN} — exited 0 without proposing a plan$`,
        'm',
      ),
    );
  });

  test('markOrphans marks a run whose supervisor was killed -9 as lost and releases its step at once (no lease wait)', async () => {
    const { id, planPath, claim, wt } = await epicWithClaim('orphan', 3600);
    // Another session in the epic's worktree: the step's holder is its worktree and agent.
    const other = ['--agent', 'reclaimer'];
    const { args, report } = runArgs(
      ['--role', 'ralph', '--epic', id, '--step', 'step-1', '--lease', '3600'],
      '0',
      60_000,
    );
    const w = startWrapper(wt, args);
    const seen = await waitFor('the agent to start', () => existsSync(report) && readReport(report));
    const store = sqliteStore(join(repo.root, '.springfield', 'state.db'));
    try {
      const runId = Number(seen.env.SPRINGFIELD_RUN_ID);
      assert.deepEqual(await store.markOrphans(pidAlive, null), [], 'a live supervisor is no orphan');
      assert.equal(runRow(runId)?.agent_pid, seen.pid, "the agent's process group is recorded");
      w.child.kill('SIGKILL');
      await w.done;
      assert.equal(
        pidAlive(seen.pid),
        true,
        'the agent itself outlives its supervisor (the scheduler ends its group: see test/faults)',
      );
      assert.equal(runRow(runId)?.status, 'running', 'nobody finished the row');
      assert.equal(
        assertOk<{ claimed: boolean }>(await runJson(wt, ['claim', planPath, ...other])).claimed,
        false,
        'still held while the row says running',
      );

      const lost = await store.markOrphans(pidAlive, null);
      assert.deepEqual(
        lost.map((r) => [r.id, r.status, r.exit_code]),
        [[runId, 'lost', null]],
      );
      assert.ok(lost[0]?.ended_at);
      assert.deepEqual(await store.markOrphans(pidAlive, null), [], 'marking is done once');
      const events = rows<{ to_status: string; reason: string }>(
        `SELECT to_status, reason FROM events WHERE entity = 'run' AND action = 'lost' AND json_extract(data, '$.run_id') = ?`,
        runId,
      );
      assert.deepEqual(events, [{ to_status: 'lost', reason: `supervising process ${w.child.pid} is gone` }]);

      const next = assertClaimed(await runJson(wt, ['claim', planPath, ...other]));
      assert.deepEqual(
        [next.step_anchor, next.reclaimed_from_expired, next.claimed_by, next.agent],
        ['step-1', false, wt, 'reclaimer'],
        'claimable at once: the hour-long lease did not have to expire',
      );
      assert.ok(next.claim_token > claim.claim_token + 1, 'the lost holder was fenced by the release');
    } finally {
      store.close();
      if (pidAlive(seen.pid)) process.kill(seen.pid, 'SIGKILL');
    }
  });

  test('markOrphans leaves rows whose supervisor is alive and judges by the recorded pid', async () => {
    const store = sqliteStore(join(repo.root, '.springfield', 'state.db'));
    try {
      const { id } = assertOk<{ id: string }>(
        await runJson(repo.root, ['epic', 'create', 'Orphan judging', '--brief', 'x']),
      );
      const mine = await store.startRun(
        {
          epicId: id,
          planPath: null,
          stepAnchor: null,
          role: 'bart',
          iteration: 0,
          worktree: repo.root,
          agentId: null,
          command: ['true'],
          pid: process.pid,
        },
        null,
      );
      const gone = await store.startRun(
        {
          epicId: id,
          planPath: null,
          stepAnchor: null,
          role: 'bart',
          iteration: 0,
          worktree: repo.root,
          agentId: null,
          command: ['true'],
          pid: 999_999,
        },
        null,
      );
      const asked: number[] = [];
      const lost = await store.markOrphans((pid) => {
        asked.push(pid);
        return pid !== 999_999;
      }, null);
      assert.deepEqual(
        lost.map((r) => r.id),
        [gone.id],
      );
      assert.ok(asked.includes(process.pid) && asked.includes(999_999));
      assert.equal(runRow(mine.id)?.status, 'running');
      assert.deepEqual(
        assertOk<{ runs: RunView[] }>(await runJson(repo.root, ['runs', '--active', '--epic', id])).runs.map(
          (r) => r.id,
        ),
        [mine.id],
      );
    } finally {
      store.close();
    }
  });
});

describe('agentEnv and the run configuration', () => {
  test('agentEnv strips editor variables and unset values, sets every SPRINGFIELD_* value, and PWD to the worktree', () => {
    const env = agentEnv(
      {
        PATH: '/bin',
        PWD: '/launcher',
        ELECTRON_RUN_AS_NODE: '1',
        VSCODE_GIT_IPC_HANDLE: 'x',
        VSCODE_PID: '1',
        SPRINGFIELD_STEP: 'old',
        SPRINGFIELD_CLAIM_TOKEN: '7',
        MY_VSCODE_SETTING: 'kept',
      },
      {
        epic: 'sf-ab12',
        step: null,
        plan: null,
        worktree: '/w',
        claimToken: null,
        contextFile: '/c.md',
        role: 'lisa',
        runId: 4,
        agent: 'lisa',
        db: '/db',
      },
    );
    assert.deepEqual(env, {
      PATH: '/bin',
      MY_VSCODE_SETTING: 'kept',
      SPRINGFIELD_EPIC: 'sf-ab12',
      SPRINGFIELD_WORKTREE: '/w',
      SPRINGFIELD_CONTEXT_FILE: '/c.md',
      SPRINGFIELD_ROLE: 'lisa',
      SPRINGFIELD_RUN_ID: '4',
      SPRINGFIELD_AGENT: 'lisa',
      SPRINGFIELD_DB: '/db',
      PWD: '/w',
    });
  });

  test('loadRoleCommands reads argument arrays and refuses a bad file with file: path: reason', () => {
    const dir = join(repo.tmp, 'config');
    mkdirSync(dir);
    const file = join(dir, 'config.json');
    assert.deepEqual(loadRoleCommands(file), DEFAULT_RUN_CONFIG, 'a missing file gives the defaults');
    writeFileSync(
      file,
      JSON.stringify({
        roles: { ralph: ['claude', '-p', 'do $(this)'] },
        verification: [['npm', 'test']],
        maxParallelAgents: 2,
        leaseSeconds: 600,
      }),
    );
    assert.deepEqual(loadRoleCommands(file), {
      ...DEFAULT_RUN_CONFIG,
      roles: { ralph: ['claude', '-p', 'do $(this)'] },
      verification: [['npm', 'test']],
      maxParallelAgents: 2,
      leaseSeconds: 600,
    });
    writeFileSync(
      file,
      JSON.stringify({
        timeouts: { ralph: 60, setup: 900 },
        retryLimit: 5,
        retryBackoffSeconds: [0, 30],
        setup: [['npm', 'ci']],
        archive: [['tar', 'cf', 'x.tar', '.']],
        killGraceSeconds: 2,
      }),
    );
    assert.deepEqual(loadRoleCommands(file), {
      ...DEFAULT_RUN_CONFIG,
      timeouts: { ralph: 60, setup: 900 },
      retryLimit: 5,
      retryBackoffSeconds: [0, 30],
      setup: [['npm', 'ci']],
      archive: [['tar', 'cf', 'x.tar', '.']],
      killGraceSeconds: 2,
    });
    const bad = (value: string, pattern: RegExp) => {
      writeFileSync(file, value);
      assert.throws(
        () => loadRoleCommands(file),
        (err: unknown) => err instanceof UsageError && err.code === 'invalid_config' && pattern.test(err.message),
      );
    };
    bad('{"roles": {"ralph": "claude -p go"}}', new RegExp(`^${escape(file)}: roles\\.ralph: .*array`));
    bad('{"roles": {"ralph": ["claude", 3]}}', new RegExp(`^${escape(file)}: roles\\.ralph\\[1\\]: `));
    bad('{"roles": {"marge": ["x"]}}', new RegExp(`^${escape(file)}: roles: .*marge`));
    bad(
      '{"verification": [[]]}',
      new RegExp(`^${escape(file)}: verification\\[0\\]: a command needs at least the program`),
    );
    bad('{"leaseSeconds": 0}', new RegExp(`^${escape(file)}: leaseSeconds: `));
    bad('{"roles": ', new RegExp(`^${escape(file)}: invalid JSON: `));
    bad('{"retryLimit": 0}', new RegExp(`^${escape(file)}: retryLimit: `));
    bad('{"retryBackoffSeconds": []}', new RegExp(`^${escape(file)}: retryBackoffSeconds: needs at least one delay`));
    bad('{"timeouts": {"marge": 5}}', new RegExp(`^${escape(file)}: timeouts: .*marge`));
    bad('{"setup": ["npm ci"]}', new RegExp(`^${escape(file)}: setup\\[0\\]: .*array`));
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
