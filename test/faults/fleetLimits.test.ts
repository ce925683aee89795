// The fleet meets a usage limit (issue 33, "Proof at the mission's scale"; docs/agents.md, "Usage
// limits"): twenty epics under a real `springfield orchestrate`, Ralph on real Claude Code (the claude
// preset) against the scripted Anthropic server, with a scripted builder as his fallback. Two epics are
// built by Claude Code; then the server opens a usage-limit window (429 rate_limit_error, "try again in
// N seconds" and retry-after, Claude Code told not to retry) and the third epic's Claude Code run meets
// it; the other seventeen, set up only once the host knows the limit, start on the fallback, whose
// builders finish step 1 once the window is over. Three have a step 2, started after the reset: the first
// Claude Code run then is the single probe (the server answers it once the other step 2s have started),
// and the rest go to the fallback while it is out.
// The harness's twenty-alive-at-once barrier is test/faults/fleet.test.ts's; this one is about the limit.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { findPreset } from '../../src/core/runs/presets.ts';
import { CLI_PATH } from '../helpers/gitRepo.ts';
import { AGENT_BIN, agentPath, CLAUDE } from '../helpers/realAgents.ts';
import { startScriptedModel, type ModelRequest } from '../helpers/scriptedModel/server.ts';
import { approve, faultRepo, heldByDeadRuns } from './harness.ts';

const EPICS = 20;
/** Epics built by Claude Code before the window; the next one meets it. */
const SERVED = 2;
/** Epics with a second step (started after the reset: the probe goes among them). */
const TWO_STEPS = 3;
/** The window, in seconds (a fallback builder started after it may be the probe instead: the checks allow it). */
const WINDOW_S = 40;

/** The fallback builder: builds its step; on step 1 it first waits (bounded) until the window is over. */
const AGENT = String.raw`
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const env = process.env;
const epic = env.SPRINGFIELD_EPIC, step = env.SPRINGFIELD_STEP;
const sf = (...a) => execFileSync(process.execPath, [env.SF_CLI, ...a], { encoding: 'utf8' });
const window = path.join(env.SF_SYNC, 'window.json');
const over = () => fs.existsSync(window) && Date.now() > JSON.parse(fs.readFileSync(window, 'utf8')).end + 500;
if (step !== 'step-1') fs.writeFileSync(path.join(env.SF_SYNC, step + '@' + epic), '');
const deadline = Date.now() + 240000;
while (step === 'step-1' && !over() && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
fs.mkdirSync('work', { recursive: true });
fs.writeFileSync('work/' + epic + '-' + step + '.txt', epic + '\n');
sf('update', env.SPRINGFIELD_PLAN, step, '--all', 'completed');
sf('commit', '-m', 'Build ' + epic + ' ' + step);
`;

/**
 * A worktree's setup, gated per epic (argv: the gates file, the sync folder, the host's limit file):
 * `go` at once; `served` once SERVED runs succeeded, then it opens the window; `limit` once the host
 * has recorded Claude Code's limit.
 */
const SETUP = String.raw`
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const [gates, sync, limitFile] = process.argv.slice(2);
const gate = JSON.parse(fs.readFileSync(gates, 'utf8'))[process.env.SPRINGFIELD_EPIC] || 'go';
const pause = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
const deadline = Date.now() + 240000;
const succeeded = () => JSON.parse(execFileSync(process.execPath, [process.env.SF_CLI, 'runs', '--json'], { encoding: 'utf8' })).runs.filter((r) => r.role === 'ralph' && r.status === 'succeeded').length;
if (gate === 'served') {
  while (succeeded() < Number(process.env.SF_SERVED) && Date.now() < deadline) pause();
  fs.writeFileSync(path.join(sync, 'window-open'), '');
}
if (gate === 'limit') while (!fs.existsSync(limitFile) && Date.now() < deadline) pause();
`;

interface RunRow {
  id: number;
  epic_id: string;
  step_anchor: string | null;
  role: string;
  status: string;
  command: string;
  started_at: string;
  ended_at: string | null;
  worktree: string | null;
  outcome_reason: string | null;
}

/** `springfield orchestrate --watch --until-idle` without blocking the scripted model this process serves. */
function orchestrate(
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [CLI_PATH, 'orchestrate', '--watch', '--until-idle', '--interval', '1', '--json'],
      {
        cwd,
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    let timedOut = false;
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, timedOut });
    });
  });
}

test(
  'the fleet meets a usage limit with real Claude Code: every epic done, none blocked, limited runs not failures, nothing started into the window, one probe after it',
  { timeout: 900_000 },
  async (t) => {
    assert.ok(existsSync(join(AGENT_BIN, 'claude')), `claude is installed in ${AGENT_BIN} (scripts/prepareTests.ts)`);
    const claudeArgv = findPreset('claude')?.roles.ralph ?? [];
    let window: { start: number; end: number } | null = null;
    const limited: ModelRequest[] = [];
    let sync = '';
    const model = await startScriptedModel({
      adapters: [CLAUDE.adapter],
      maxRequests: 400,
      lifetimeMs: 15 * 60_000,
      // After the reset, Claude Code's probe is answered only once the other step 2s have started (bounded):
      // while it is out, they must go to the fallback.
      hold: async (q) => {
        const deadline = Date.now() + 240_000;
        const stepTwos = () => readdirSync(sync).filter((n) => n.startsWith('step-2@')).length;
        while (window && q.at >= window.end && stepTwos() < TWO_STEPS - 1 && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 200));
      },
      // Once the third epic's setup says so, every request is refused until the window's end, as an account's limit is.
      fail: (q) => {
        if (!q.path.startsWith('/v1/messages')) return null;
        if (!window && existsSync(join(sync, 'window-open'))) {
          window = { start: q.at, end: q.at + WINDOW_S * 1000 };
          writeFileSync(join(sync, 'window.json'), JSON.stringify(window));
        }
        if (!window || q.at >= window.end) return null;
        limited.push(q);
        const left = Math.ceil((window.end - q.at) / 1000);
        return {
          status: 429,
          headers: { 'retry-after': String(left) },
          body: {
            type: 'error',
            error: {
              type: 'rate_limit_error',
              message: `This request would exceed your account's rate limit. Please try again in ${left} seconds.`,
            },
          },
        };
      },
    });
    t.after(() => model.close());
    const f = faultRepo(t, {}, (base) => {
      const home = join(base, 'home');
      mkdirSync(home, { recursive: true });
      return {
        // Its own state folder: the limit it records is this test's, not the host's other tests'.
        XDG_STATE_HOME: join(base, 'state'),
        HOME: home,
        PATH: agentPath(),
        ...CLAUDE.prepare(home, model.url),
        CLAUDE_CODE_MAX_RETRIES: '0',
        SF_SERVED: String(SERVED),
      };
    });
    sync = join(f.base, 'sync');
    const limitFile = join(f.base, 'state', 'springfield', 'limits', 'claude.json');
    const agent = join(f.base, 'fleet-agent.cjs');
    const setup = join(f.base, 'setup.cjs');
    const gates = join(f.base, 'gates.json');
    writeFileSync(agent, AGENT);
    writeFileSync(setup, SETUP);
    f.config({
      roles: { ralph: claudeArgv },
      fallbacks: { ralph: [[process.execPath, agent]] },
      maxParallelAgents: EPICS,
      slots: { setup: EPICS, verification: 2 },
      setup: [[process.execPath, setup, gates, sync, limitFile]],
      runTimeoutSeconds: 300,
    });
    const epics: string[] = [];
    const gate: Record<string, string> = {};
    for (let i = 1; i <= EPICS; i++) {
      const slug = `fleet-${String(i).padStart(2, '0')}`;
      const steps = i > SERVED + 1 && i <= SERVED + 1 + TWO_STEPS ? 2 : 1;
      const text = [`# Plan: Fleet ${i}`, ''];
      for (let s = 1; s <= steps; s++)
        text.push(
          `## Step ${s}: Part ${s} {#step-${s}}`,
          ...(s > 1 ? [`**Depends on:** #step-${s - 1}`] : []),
          '**Tasks:**',
          `- [ ] Build part ${s}`,
          '',
        );
      writeFileSync(join(f.repo, 'plans', `${slug}.md`), text.join('\n'));
      f.git('add', '-A');
      f.git('commit', '-qm', `Plan ${slug}`);
      const epic = f.epic(`Fleet ${String(i).padStart(2, '0')}`);
      const proposed = f.sf('plan', 'propose', epic, `plans/${slug}.md`);
      assert.equal(proposed.code, 0, proposed.stderr);
      approve(f, epic);
      epics.push(epic);
      gate[epic] = i <= SERVED ? 'go' : i === SERVED + 1 ? 'served' : 'limit';
    }
    writeFileSync(gates, JSON.stringify(gate));

    const run = await orchestrate(f.repo, f.env, 840_000);
    assert.equal(run.timedOut, false, `orchestrate did not return by itself\n${run.stderr}`);
    assert.equal(run.code, 0, run.stderr);
    const open = window as { start: number; end: number } | null;
    assert.ok(open, `the window opened\n${run.stderr}`);

    // Every epic done, none blocked, no failure counted.
    for (const epic of epics) {
      const shown = f.sf('epic', 'show', epic).json as {
        status?: string;
        status_reason?: string | null;
        retries?: unknown[];
      };
      assert.equal(shown.status, 'done', `${epic}: ${shown.status} (${shown.status_reason ?? ''})\n${run.stderr}`);
      assert.deepEqual(shown.retries, [], `${epic}: no failure counted, no backoff`);
    }
    assert.deepEqual(heldByDeadRuns(f), []);
    const all = ((f.sf('runs').json.runs ?? []) as RunRow[]).sort((a, b) => a.id - b.id);
    // The worktrees' setups are runs too (role setup); the builders' are Ralph's.
    const runs = all.filter((r) => r.role === 'ralph');
    const at = (iso: string | null) => Date.parse(iso ?? '');
    const onClaude = (r: RunRow) => (JSON.parse(r.command) as string[])[0] === 'claude';
    const where = (r: RunRow) =>
      `${r.epic_id}#${r.step_anchor ?? ''} ${onClaude(r) ? 'claude' : 'fallback'} ${r.status}`;
    assert.deepEqual(
      all.filter((r) => r.status !== 'succeeded' && r.status !== 'limited').map(where),
      [],
      'no run other than succeeded or limited',
    );

    // The one run that met the limit: the third epic's, limited with Claude Code's words, not failed.
    const third = epics[SERVED] ?? '';
    const met = runs.filter((r) => r.status === 'limited');
    const table = runs
      .map(
        (r) =>
          `${where(r)} gate ${gate[r.epic_id] ?? '?'} ${at(r.started_at) - open.start}..${at(r.ended_at) - open.start} ms`,
      )
      .join('\n');
    assert.deepEqual(
      met.map(where),
      [`${third}#step-1 claude limited`],
      `runs (times from the window's start):\n${table}`,
    );
    assert.match(
      met[0]?.outcome_reason ?? '',
      /Please try again in \d+ seconds\. — claude limited until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d on this host$/,
    );
    const known = at(met[0]?.ended_at ?? null);
    // Real Claude Code built the first two epics before the window, and the fallback carried the rest through it.
    assert.deepEqual(
      runs
        .filter((r) => onClaude(r) && r.status === 'succeeded' && at(r.started_at) < open.start)
        .map(where)
        .sort(),
      epics
        .slice(0, SERVED)
        .map((e) => `${e}#step-1 claude succeeded`)
        .sort(),
      table,
    );
    // The fallback carried Ralph while Claude Code could not take work: inside the window, or, on a machine
    // slow enough that the window closed before the next start, while Claude Code's one probe was out.
    assert.match(
      run.stderr,
      /Ralph runs on node \(claude limited(?: until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d|: one run is trying it again after its reset)\)/,
      `the scheduler's lines about the limit:\n${run.stderr
        .split('\n')
        .filter((l) => /runs on|limited|probe|start Ralph/.test(l))
        .join('\n')}`,
    );

    // Nothing started into the known limit: no Claude Code run, and no request at the server, from the
    // moment the limit was recorded until the window's end.
    assert.deepEqual(
      runs.filter((r) => onClaude(r) && at(r.started_at) >= known && at(r.started_at) < open.end).map(where),
      [],
      `no Claude Code run started inside the window\n${table}`,
    );
    assert.deepEqual(
      model.requests.filter((q) => q.at > known && q.at < open.end).map((q) => `${q.path} at +${q.at - open.start} ms`),
      [],
      'no request reached the limited account inside the window',
    );
    assert.ok(
      limited.length >= 1 && limited.every((q) => q.at <= known),
      'every refused request came from the run that met it',
    );

    // After the reset, one probe: the first Claude Code run started after it, alone until it ended, and it succeeded.
    const after = runs.filter((r) => onClaude(r) && at(r.started_at) >= open.end);
    const probe = after[0];
    assert.ok(probe, `a probe after the reset\n${table}`);
    assert.equal(probe.status, 'succeeded', where(probe));
    assert.deepEqual(
      after.filter((r) => at(r.started_at) <= at(probe.ended_at)).map(where),
      [where(probe)],
      `the single probe: no other Claude Code run started until it ended\n${table}`,
    );
    assert.deepEqual(
      runs
        .filter((r) => !onClaude(r) && r.step_anchor === 'step-2' && at(r.started_at) < at(probe.ended_at))
        .map((r) => r.status),
      Array.from({ length: TWO_STEPS - 1 }, () => 'succeeded'),
      `while the probe was out, the other step 2s went to the fallback\n${table}`,
    );

    // No step claimed twice: one succeeded run per step, and no two runs of a step overlapped.
    const steps = new Map<string, RunRow[]>();
    for (const r of runs) {
      const key = `${r.epic_id}#${r.step_anchor ?? ''}`;
      steps.set(key, [...(steps.get(key) ?? []), r]);
    }
    assert.equal(steps.size, EPICS + TWO_STEPS);
    for (const [key, list] of steps) {
      assert.equal(list.filter((r) => r.status === 'succeeded').length, 1, `${key}: ${list.map(where).join(', ')}`);
      for (let i = 1; i < list.length; i++)
        assert.ok(at(list[i]?.started_at ?? null) >= at(list[i - 1]?.ended_at ?? null), `${key}: runs overlapped`);
    }
    // The agents worked in the epics' worktrees: the person's checkout only gained the merges.
    for (const r of runs) assert.notEqual(r.worktree, f.repo, `${where(r)} ran in the main checkout`);
    assert.equal(f.git('status', '--porcelain'), '', "the person's checkout is clean");
  },
);
