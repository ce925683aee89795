// The scheduler end to end, headless: scripted agents (real processes calling the CLI as an agent
// would) take a 12-step epic from planned to done through `springfield orchestrate`. The fault
// tests use a 3-step epic: more steps would only repeat builder sessions the 12-step test counts.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ADMIT_ANY_MACHINE } from '../../src/shared/fleetSettings.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(root, 'dist', 'cli.cjs');

const plan = (steps: number) =>
  [
    '# Plan: Widget pipeline',
    '',
    '## Approach',
    'One module per stage.',
    '',
    ...Array.from({ length: steps }, (_, i) => [
      `## Step ${i + 1}: Stage ${i + 1} {#step-${i + 1}}`,
      ...(i > 0 && i % 3 === 0 ? [`**Depends on:** #step-${i}`] : []),
      '**Tasks:**',
      `- [ ] Build stage ${i + 1}`,
      '',
    ]).flat(),
  ].join('\n');

const AGENT = `
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const sf = (...a) => execFileSync(process.execPath, [process.env.SF_CLI, ...a], { encoding: 'utf8' });
const role = process.env.SPRINGFIELD_ROLE;
if (role === 'lisa') sf('plan', 'propose', process.env.SPRINGFIELD_EPIC, 'plans/widget.md');
if (role === 'ralph') {
  const step = process.env.SPRINGFIELD_STEP;
  fs.mkdirSync('work', { recursive: true });
  if (process.env.SF_SLOW && process.env.SF_SLOW === step && !fs.existsSync(process.env.SF_SLOW_MARK)) { fs.writeFileSync(process.env.SF_SLOW_MARK, String(process.pid)); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000); }
  if (step) {
    fs.writeFileSync('work/' + step + '.txt', step + '\\n');
    sf('update', process.env.SPRINGFIELD_PLAN, step, '--all', 'completed');
    sf('commit', '-m', 'Build ' + step);
  } else {
    fs.writeFileSync('work/fix.txt', 'fixed\\n');
    execFileSync('git', ['add', '-A'], { stdio: 'inherit' }); execFileSync('git', ['commit', '-qm', 'Fix the verification failure'], { stdio: 'inherit' });
  }
}
if (role === 'bart' && process.env.SF_MOVE_MAIN) { fs.writeFileSync(process.env.SF_MOVE_MAIN + '/moved.txt', 'x'); execFileSync('git', ['-C', process.env.SF_MOVE_MAIN, 'add', 'moved.txt']); execFileSync('git', ['-C', process.env.SF_MOVE_MAIN, 'commit', '-qm', 'main moved on']); }
if (role === 'bart') sf('signal', process.env.SPRINGFIELD_EPIC, '--type', 'pass', '--summary', 'reviewed: looks right');
`;

const VERIFY = `
const fs = require('node:fs');
const done = fs.existsSync('work') ? fs.readdirSync('work').filter((f) => /^step-/.test(f)).length : 0;
if (process.env.SF_FAIL_ONCE && done === Number(process.env.SF_STEPS) && !fs.existsSync('work/fix.txt')) { console.error('stage wiring broken'); process.exit(1); }
`;

function setup(
  t: { after: (fn: () => void) => void },
  env: Record<string, string> = {},
  config: Record<string, unknown> = {},
  steps = 3,
) {
  const base = mkdtempSync(join(tmpdir(), 'sf-orch-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const repo = join(base, 'repo');
  mkdirSync(join(repo, 'plans'), { recursive: true });
  writeFileSync(join(repo, 'plans', 'widget.md'), plan(steps));
  writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
  const agent = join(base, 'agent.cjs');
  const verify = join(base, 'verify.cjs');
  writeFileSync(agent, AGENT);
  writeFileSync(verify, VERIFY);
  const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 't');
  git('add', '-A');
  git('commit', '-qm', 'plan');
  const fullEnv = { ...process.env, SF_CLI: CLI, SF_STEPS: String(steps), XDG_STATE_HOME: join(base, 'state'), ...env };
  const sf = (...args: string[]) => {
    const r = spawnSync(process.execPath, [CLI, ...args, '--json'], {
      cwd: repo,
      encoding: 'utf8',
      env: fullEnv,
      // A bound on a hang, not on speed: a whole 12-step epic takes 2.5 minutes on a busy 2-core machine.
      timeout: 540_000,
    });
    return {
      code: r.status,
      json: r.stdout ? (JSON.parse(r.stdout) as Record<string, unknown>) : {},
      stderr: r.stderr,
    };
  };
  const epic = String(sf('epic', 'create', 'Widget pipeline').json.id);
  mkdirSync(join(repo, '.springfield'), { recursive: true });
  writeFileSync(
    join(repo, '.springfield', 'config.json'),
    JSON.stringify({
      roles: { lisa: [process.execPath, agent], ralph: [process.execPath, agent], bart: [process.execPath, agent] },
      verification: [[process.execPath, verify]],
      maxParallelAgents: 2,
      // About the scheduler's sessions, not the machine: admission lets every start through
      // (test/faults/fleet.test.ts judges admission).
      admission: ADMIT_ANY_MACHINE,
      // Ten minutes: no test here waits for a lease to run out, and a short one would, on a busy
      // machine, expire between two late heartbeats and start another builder on its step.
      leaseSeconds: 600,
      ...config,
    }),
  );
  assert.equal(sf('allow').code, 0, 'the person allows the commands the config names');
  return { repo, epic, sf, git };
}

function sessions(sf: (...a: string[]) => { json: Record<string, unknown> }, epic: string): Record<string, number> {
  return (sf('runs', '--epic', epic).json.sessions as Record<string, Record<string, number>>)[epic] ?? {};
}

test(
  'a 12-step epic goes planned → done with 1 planning, 12 builder and 1 review session (no ceremony)',
  { timeout: 600_000 },
  async (t) => {
    const { repo, epic, sf } = setup(t, {}, {}, 12);
    const first = sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /plan .*waits for approval|awaiting approval|approval/i);
    assert.equal(sf('plan', 'approve', epic).code, 0);
    const run = sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
    assert.equal(run.code, 0, run.stderr);
    const shown = sf('epic', 'show', epic).json;
    assert.equal(shown.status, 'done', run.stderr);
    assert.deepEqual(sessions(sf, epic), { lisa: 1, ralph: 12, bart: 1, lovejoy: 0, total: 14 });
    const log = execFileSync('git', ['log', '-1', '--format=%B'], { cwd: repo, encoding: 'utf8' });
    assert.match(log, new RegExp(`Springfield-Epic: ${epic}`));
    assert.equal(
      (log.match(/Springfield-Step: step-/g) ?? []).length,
      12,
      'the squash commit keeps every step trailer',
    );
    assert.ok(existsSync(join(repo, `SUMMARY-${epic}.md`)), 'the mechanical summary is merged');
    assert.match(readFileSync(join(repo, `SUMMARY-${epic}.md`), 'utf8'), /ralph: 12/);
    assert.ok(!existsSync(join(`${repo}.springfield`, epic)), 'the worktree is removed after the merge');
    assert.equal(shown.worktree_path, null, 'and forgotten by the store');
    assert.doesNotMatch(
      run.stderr,
      /not merged: it is done/,
      'a merge that landed is not reported as one that did not',
    );
  },
);

test('a failing verification costs exactly one more builder run', { timeout: 600_000 }, async (t) => {
  const { epic, sf } = setup(t, { SF_FAIL_ONCE: '1' });
  sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
  sf('plan', 'approve', epic);
  const run = sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
  assert.equal(sf('epic', 'show', epic).json.status, 'done', run.stderr);
  assert.match(run.stderr, /verification FAILED/);
  assert.deepEqual(sessions(sf, epic), { lisa: 1, ralph: 4, bart: 1, lovejoy: 0, total: 6 });
});

test(
  "a killed builder's run is lost, its step released at once (no lease wait) and finished by the next run",
  { timeout: 600_000 },
  async (t) => {
    const mark = join(tmpdir(), `sf-slow-${process.pid}-${Date.now()}`);
    t.after(() => rmSync(mark, { force: true }));
    // An hour's lease: only the release of a lost run, not the lease's expiry, can free step-1 in this test.
    const { repo, epic, sf } = setup(
      t,
      { SF_SLOW: 'step-1', SF_SLOW_MARK: mark },
      { leaseSeconds: 3600, retryBackoffSeconds: [0] },
    );
    sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
    sf('plan', 'approve', epic);
    const child = spawn(
      process.execPath,
      [CLI, 'orchestrate', '--watch', '--until-idle', '--interval', '1', '--json'],
      {
        cwd: repo,
        env: {
          ...process.env,
          SF_CLI: CLI,
          SF_SLOW: 'step-1',
          SF_SLOW_MARK: mark,
          XDG_STATE_HOME: join(repo, '..', 'state'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const deadline = Date.now() + 10 * 60_000; // a bound on a hang: the builder starts after planning
    while (!existsSync(mark) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.ok(existsSync(mark), 'the slow builder started');
    const agentPid = Number(readFileSync(mark, 'utf8'));
    const running = (sf('runs', '--epic', epic, '--active').json.runs as { pid: number; step_anchor: string }[]).find(
      (r) => r.step_anchor === 'step-1',
    );
    assert.ok(running, 'the builder run on step-1 is recorded as running');
    process.kill(running.pid, 'SIGKILL');
    process.kill(agentPid, 'SIGKILL');
    assert.equal(await exited, 0, stderr);
    assert.equal(sf('epic', 'show', epic).json.status, 'done', stderr);
    const stepEvents = sf('events', 'plans/widget.md', '--step', 'step-1').json.events as {
      action: string;
      reason: string | null;
    }[];
    const reset = stepEvents.findIndex((e) => e.action === 'reset' && /lost/.test(e.reason ?? ''));
    assert.ok(reset >= 0, `step-1 was released when its run was marked lost: ${JSON.stringify(stepEvents)}`);
    assert.ok(!stepEvents.some((e) => e.action === 'reclaim'), 'no lease had to expire');
    assert.match(stderr, /marked lost/);
    assert.deepEqual(sessions(sf, epic), { lisa: 1, ralph: 4, bart: 1, lovejoy: 0, total: 6 });
  },
);

test('the merge queue rebases onto the new main and verifies again before merging', { timeout: 600_000 }, async (t) => {
  const { repo, epic, sf } = setup(t);
  const env = { SF_MOVE_MAIN: repo, XDG_STATE_HOME: join(repo, '..', 'state') };
  const run = (...a: string[]) =>
    spawnSync(process.execPath, [CLI, ...a], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, SF_CLI: CLI, ...env },
    });
  run('orchestrate', '--watch', '--until-idle', '--interval', '1');
  sf('plan', 'approve', epic);
  const r = run('orchestrate', '--watch', '--until-idle', '--interval', '1');
  assert.equal(sf('epic', 'show', epic).json.status, 'done', r.stderr);
  const log = execFileSync('git', ['log', '--format=%s'], { cwd: repo, encoding: 'utf8' }).split('\n');
  assert.equal(log[0], `Widget pipeline (${epic})`, 'the squash commit lands on top');
  assert.equal(log[1], 'main moved on', 'of the main that moved while the epic was in review');
  const rows = JSON.parse(
    execFileSync(process.execPath, [CLI, 'runs', '--epic', epic, '--json'], { cwd: repo, encoding: 'utf8' }),
  ) as { runs: { role: string; ended_at: string }[] };
  const bartEnded =
    rows.runs
      .filter((x) => x.role === 'bart')
      .map((x) => x.ended_at)
      .sort()
      .at(-1) ?? '';
  assert.match(r.stderr, /verification passed/);
  const lines = r.stderr.split('\n');
  const lastVerify =
    lines
      .map((l, i) => (/verification passed/.test(l) ? i : -1))
      .filter((i) => i >= 0)
      .at(-1) ?? -1;
  const bartLine = lines.findIndex((l) => /Bart .* exited/.test(l));
  assert.ok(
    bartEnded !== '' && lastVerify > bartLine,
    'a verification ran again after the review, on the rebased branch',
  );
});
