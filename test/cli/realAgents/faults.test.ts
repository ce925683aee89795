// Real agent CLIs misbehaving as they do in the field (docs/scheduler-faults.md): a scheduler stopped
// while Claude Code waits on its model (three times: the run is stopped, its step released, nothing
// counted, the epic never blocked), and Codex retrying a model it cannot reach forever ("Reconnecting…":
// ended as stalled, its retry lines no sign of life).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLAUDE, CODEX, REAL_AGENT_TEST_MS, realAgentRepo, type RealAgentRepo } from '../../helpers/realAgents.ts';
import { CLI_PATH, cleanEnv } from '../../helpers/gitRepo.ts';

const PLAN =
  '# Plan: Greeting\n\n## Step 1: Greeting module {#step-1}\n**Tasks:**\n- [ ] Add src/greeting.ts\n\n## Step 2: Wire it {#step-2}\n**Depends on:** #step-1\n**Tasks:**\n- [ ] Add src/cli.ts\n';

/** An epic a person planned and approved, ready for the scheduler to build. */
async function approvedEpic(r: RealAgentRepo): Promise<string> {
  const epic = (await r.sf('epic', 'create', 'Greeting', '--json')).json<{ id: string }>().id;
  mkdirSync(join(r.repo, 'plans'), { recursive: true });
  writeFileSync(join(r.repo, 'plans', 'greeting.md'), PLAN);
  assert.equal((await r.sf('plan', 'propose', epic, 'plans/greeting.md')).code, 0);
  assert.equal((await r.sf('plan', 'approve', epic, '--agent', 'a-person')).code, 0);
  return epic;
}

test(
  'Claude Code stopped with the scheduler three times: each run is stopped, its step released, no iteration counted, never agent_failed',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    // The model never answers while the test lasts: Claude Code waits, as it would on a slow model.
    const r = await realAgentRepo(t, CLAUDE, { delayMs: () => 10 * 60_000 });
    const epic = await approvedEpic(r);
    for (let round = 1; round <= 3; round++) {
      const orchestrate = spawn(process.execPath, [CLI_PATH, 'orchestrate', '--watch', '--interval', '1'], {
        cwd: r.repo,
        env: cleanEnv(r.env),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      orchestrate.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
      });
      const exited = new Promise<number | null>((resolve) => orchestrate.on('exit', (code) => resolve(code)));
      // Stopped once Claude Code is waiting on its model: its request has arrived.
      const seen = r.model.requests.length;
      const deadline = Date.now() + 10 * 60_000;
      while (
        !r.model.requests.slice(seen).some((q) => JSON.stringify(q.body ?? '').includes('started by Springfield'))
      ) {
        assert.ok(Date.now() < deadline, `round ${round}: Claude Code never asked its model\n${stderr}`);
        await new Promise((res) => setTimeout(res, 100));
      }
      orchestrate.kill('SIGINT');
      assert.equal(await exited, 0, stderr);
    }
    const runs = (await r.sf('runs', '--epic', epic, '--json')).json<{
      runs: { role: string; status: string; outcome_reason: string }[];
    }>().runs;
    assert.deepEqual(
      runs.map((x) => `${x.role}:${x.status}`),
      ['ralph:stopped', 'ralph:stopped', 'ralph:stopped'],
    );
    for (const run of runs) assert.match(run.outcome_reason, /^stopped by SIGTERM before its timeout/);
    const shown = (await r.sf('epic', 'show', epic, '--json')).json<{
      status: string;
      iteration: number;
      retries: unknown[];
    }>();
    assert.deepEqual(
      [shown.status, shown.iteration, shown.retries],
      ['in_progress', 1, []],
      'the start is the only iteration; no fault is counted',
    );
    const steps = (await r.sf('show', 'plans/greeting.md', '--json'))
      .json<{ plans: { steps: { status: string }[] }[] }>()
      .plans[0]?.steps.map((s) => s.status);
    assert.deepEqual(steps, ['pending', 'pending'], 'the step was released each time');
  },
);

test(
  'Codex retrying a model it cannot reach ("Reconnecting…" forever) is ended as stalled: its retry lines are no sign of life',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    const cli = {
      ...CODEX,
      prepare: (home: string, url: string) => {
        const env = CODEX.prepare(home, url);
        // As a person has it: the default unbounded retries, and a provider nothing answers on (port 9 of loopback).
        const file = join(env.CODEX_HOME ?? '', 'config.toml');
        writeFileSync(
          file,
          `model = "gpt-5.5"\nmodel_provider = "away"\n[features]\nplugins = false\n[analytics]\nenabled = false\n[model_providers.away]\nname = "away"\nbase_url = "http://127.0.0.1:9/v1"\nwire_api = "responses"\n`,
        );
        return env;
      },
    };
    // 30 s: Codex must have started and printed its first retry inside the window, however loaded the machine.
    const r = await realAgentRepo(t, cli, { config: { stallSeconds: 30, retryLimit: 1, timeouts: { ralph: 600 } } });
    const epic = await approvedEpic(r);
    const run = await r.sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
    assert.equal(run.code, 0, run.stderr);
    const runs = (await r.sf('runs', '--epic', epic, '--json')).json<{
      runs: { status: string; outcome_reason: string; output_tail: string }[];
    }>().runs;
    assert.deepEqual(
      runs.map((x) => x.status),
      ['stalled'],
      run.stderr,
    );
    assert.equal(
      runs[0]?.outcome_reason,
      'for 30 s it printed only its own network retries and changed nothing in the store',
    );
    assert.match(runs[0]?.output_tail ?? '', /Reconnecting/);
    const shown = (await r.sf('epic', 'show', epic, '--json')).json<{ status: string; status_reason: string }>();
    assert.match(
      shown.status_reason,
      /^agent_failed: Ralph failed once in a row \(last: run \d+ stalled, exit 143: for 30 s it printed only its own network retries/,
    );
  },
);
