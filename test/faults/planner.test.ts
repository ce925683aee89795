// Fault suite: planners that fail, and a plan that exists only uncommitted in the main worktree.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { approve, faultRepo, planText, sessionsOf, violations } from './harness.ts';
import { CLI_PATH } from '../helpers/gitRepo.ts';

test(
  'a planner that exits 1 every time: three sessions, then blocked (agent_failed) with the exit code and output; retry after the fix finishes it',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = f.epic('Missing key');
    f.behave({ lisa: { do: 'exit1' } });
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, {
        epic,
        maxSessions: { lisa: 3, ralph: 0, bart: 0 },
        status: 'blocked',
        reason:
          /^agent_failed: Lisa failed 3 times in a row \(last: run \d+ failed: exit 1\); last output: model unavailable: ANTHROPIC_API_KEY is not set$/,
      }),
      [],
      run.stderr,
    );
    assert.equal(sessionsOf(f, epic).lisa, 3, 'the limit, not fewer');
    assert.deepEqual(
      run.json.waiting?.map((w) => [w.epic_id, w.kind]),
      [[epic, 'person']],
    );
    assert.match(
      run.json.waiting?.[0]?.message ?? '',
      new RegExp(`a person retries it: springfield epic retry ${epic}$`),
    );

    // Shown where runs are: runs (outcome, reason, output) and epic show (the block, what to do, the tail).
    const runs = f.sf('runs', '--epic', epic).json.runs as {
      status: string;
      exit_code: number;
      outcome_reason: string;
      output_tail: string;
    }[];
    assert.deepEqual(
      runs.map((r) => [r.status, r.exit_code, r.outcome_reason]),
      Array.from({ length: 3 }, () => ['failed', 1, 'exit 1']),
    );
    assert.equal(runs[0]?.output_tail, 'starting lisa\nmodel unavailable: ANTHROPIC_API_KEY is not set');
    const shown = f.sf('epic', 'show', epic);
    const text = (await import('node:child_process')).spawnSync(
      process.execPath,
      [join(import.meta.dirname, '..', '..', 'dist', 'cli.cjs'), 'epic', 'show', epic],
      { cwd: f.repo, encoding: 'utf8' },
    ).stdout;
    assert.match(text, new RegExp(`fix the cause, then springfield epic retry ${epic}`));
    assert.match(text, /\| model unavailable: ANTHROPIC_API_KEY is not set/);
    assert.deepEqual(shown.json.blocked_by as { role: string; failures: number; exit_code: number }, {
      ...(shown.json.blocked_by as object),
      role: 'lisa',
      failures: 3,
      exit_code: 1,
    });

    // Nothing runs again by itself: a second pass starts nobody.
    const again = f.orchestrate();
    assert.equal(again.code, 0, again.stderr);
    assert.equal(sessionsOf(f, epic).lisa, 3, 'no relaunch until a person acts');

    // Each session after a failure read what the previous one did and why it failed, in its context.
    const starts = f.records().filter((r) => r.event === 'start' && r.role === 'lisa');
    assert.equal(starts[0]?.previous, null);
    for (const s of starts.slice(1)) assert.match(String(s.previous), /^lisa: failed, exit 1 — exit 1$/);

    // The person fixes the key and retries: back to planned, Lisa proposes, the epic is built and merged.
    f.behave({});
    const retried = f.sf('epic', 'retry', epic);
    assert.equal(retried.code, 0, retried.stderr);
    assert.deepEqual([retried.json.from, retried.json.to], ['blocked', 'planned']);
    assert.equal(
      (f.sf('epic', 'show', epic).json as { status_reason: string | null }).status_reason,
      null,
      'the reason it had before the block is back',
    );
    const planning = f.orchestrate();
    assert.equal(planning.code, 0, planning.stderr);
    approve(f, epic);
    const build = f.orchestrate();
    assert.deepEqual(
      violations(f, build, { epic, maxSessions: { lisa: 4, ralph: 2 }, status: 'done' }),
      [],
      build.stderr,
    );
  },
);

test(
  '`epic resume` on an epic blocked by agent_failed retries it; a block by a review signal is not retryable',
  { timeout: 120_000 },
  async (t) => {
    // No verification: the second epic is built and finished by hand (epic finish would wait for a verification otherwise).
    const f = faultRepo(t, { retryLimit: 1, verification: [] });
    const epic = f.epic('Resume me');
    f.behave({ lisa: { do: 'exit1', times: 1 } });
    f.orchestrate();
    assert.equal(f.sf('epic', 'show', epic).json.status, 'blocked');
    const resumed = f.sf('epic', 'resume', epic);
    assert.deepEqual([resumed.code, resumed.json.event, resumed.json.to], [0, 'retry', 'planned'], resumed.stderr);
    const refused = f.sf('epic', 'retry', epic);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /cannot retry an epic that is planned/);

    // Blocked by Bart's signal: a new plan is the way out, not a retry.
    const reviewed = f.epic('Reviewed');
    for (const args of [
      ['plan', 'propose', reviewed, 'plans/reviewed.md', '--agent', 'lisa'],
      ['plan', 'approve', reviewed, '--agent', 'marge'],
      ['epic', 'start', reviewed],
    ])
      assert.equal(f.sf(...args).code, 0, args.join(' '));
    const wt = String(f.sf('epic', 'show', reviewed).json.worktree_path);
    for (const step of ['step-1', 'step-2']) {
      assert.equal(f.sf('claim', 'plans/reviewed.md', '--worktree', wt).code, 0);
      assert.equal(f.sf('complete', 'plans/reviewed.md', step, '--force', 'by hand', '--worktree', wt).code, 0);
    }
    for (const args of [
      ['epic', 'finish', reviewed],
      ['signal', reviewed, '--type', 'option_viability_failure', '--summary', 'wrong approach'],
    ])
      assert.equal(f.sf(...args).code, 0, args.join(' '));
    const notRetryable = f.sf('epic', 'retry', reviewed);
    assert.equal(notRetryable.code, 1);
    assert.match(notRetryable.stderr, /is blocked by .*not by a failing agent or a drifted plan; re-plan it/);
    assert.equal(f.sf('epic', 'resume', reviewed).code, 1, 'resume does not lift it either');
  },
);

test(
  'retries back off: --until-idle returns while the backoff runs, saying until when; --watch alone would wait',
  { timeout: 120_000 },
  async (t) => {
    const f = faultRepo(t, { retryBackoffSeconds: [600] });
    const epic = f.epic('Flaky planner');
    f.behave({ lisa: { do: 'exit1' } });
    const before = Date.now();
    const run = f.orchestrate();
    assert.deepEqual(violations(f, run, { epic, maxSessions: { lisa: 1 }, status: 'planned' }), [], run.stderr);
    const [wait] = run.json.waiting ?? [];
    assert.ok(wait?.kind === 'backoff' && wait.until !== null, JSON.stringify(run.json.waiting));
    assert.ok(Date.parse(wait.until) >= before + 590_000, `the next try is 600 s after the failure: ${wait.until}`);
    assert.match(
      wait.message,
      /^Lisa failed once in a row \(last: run \d+ failed: exit 1\); retrying after a 600 s backoff \(1 of 3 failures before the epic is blocked\)$/,
    );
    assert.equal(f.orchestrate().code, 0);
    assert.equal(sessionsOf(f, epic).lisa, 1, 'a second pass inside the backoff starts nobody');
  },
);

test(
  'a planner that proposes a plan it never committed: the approved text reaches the builders and main',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = f.epic('Uncommitted');
    // The planner writes a plan of its own that is not in git anywhere; the scripted one is removed.
    f.git('rm', '-q', 'plans/uncommitted.md');
    f.git('commit', '-qm', 'no plan in git');
    f.behave({ lisa: { do: 'uncommitted-plan' } });
    assert.equal(f.orchestrate().code, 0);
    assert.equal(
      f.git('status', '--porcelain', '--untracked-files=all', 'plans'),
      '?? plans/uncommitted.md',
      'the proposal exists only uncommitted in main',
    );
    approve(f, epic);
    const run = f.orchestrate();
    assert.deepEqual(violations(f, run, { epic, maxSessions: { lisa: 1, ralph: 2 }, status: 'done' }), [], run.stderr);
    assert.equal(
      f.git('show', 'main:plans/uncommitted.md'),
      planText('Scripted work').trimEnd(),
      'the approved text was committed and merged',
    );
    assert.equal(f.git('status', '--porcelain'), '', 'the identical untracked copy gave way to the merged one');
    assert.ok(existsSync(join(f.repo, 'work', epic, 'step-2.txt')));
    assert.equal(readFileSync(join(f.repo, 'plans', 'uncommitted.md'), 'utf8'), planText('Scripted work'));
  },
);

test(
  'two epics: one with a failing planner is blocked, the other is built and merged meanwhile',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const good = f.epic('Good epic');
    const bad = f.epic('Bad epic');
    f.behave({ [`${bad}:lisa`]: { do: 'exit1' } });
    assert.equal(f.orchestrate().code, 0);
    approve(f, good);
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, { epic: good, maxSessions: { lisa: 1, ralph: 2 }, status: 'done' }),
      [],
      run.stderr,
    );
    assert.deepEqual(
      violations(f, run, {
        epic: bad,
        maxSessions: { lisa: 3, ralph: 0 },
        status: 'blocked',
        reason: /^agent_failed: Lisa failed 3 times/,
      }),
      [],
      run.stderr,
    );
  },
);

test('--once takes one pass and never loops, whatever fails', { timeout: 120_000 }, async (t) => {
  const f = faultRepo(t);
  const epic = f.epic('Once');
  f.behave({ lisa: { do: 'exit1' } });
  for (let pass = 1; pass <= 2; pass++) {
    const r = f.sf('orchestrate', '--once');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(sessionsOf(f, epic).lisa, pass, `pass ${pass} started exactly one session`);
  }
  const refused = f.sf('orchestrate', '--once', '--until-idle');
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /--until-idle goes with --watch/);
});

test(
  'an epic a person said they would plan is never planned by Lisa: the scheduler waits for their proposal, then builds it',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const created = f.sf('epic', 'create', 'Mine to plan', '--planner', 'person', '--complexity', 'simple');
    assert.equal(created.code, 0, created.stderr);
    const epic = String(created.json.id);
    assert.equal(created.json.planner, 'person');
    const waiting = f.orchestrate();
    assert.equal(waiting.code, 0, waiting.stderr);
    assert.deepEqual(f.sf('runs', '--epic', epic).json.runs, [], 'Lisa never started');
    assert.ok(
      waiting.json.waiting?.some((w) => w.epic_id === epic && /a person said they would write it/.test(w.message)),
      JSON.stringify(waiting.json.waiting),
    );
    assert.match(
      spawnSync(process.execPath, [CLI_PATH, 'epic', 'show', epic], { cwd: f.repo, env: f.env, encoding: 'utf8' })
        .stdout,
      /planned by a person/,
    );

    writeFileSync(join(f.repo, 'plans', 'mine.md'), planText('Mine to plan'));
    assert.equal(f.sf('plan', 'propose', epic, 'plans/mine.md').code, 0);
    approve(f, epic);
    const built = f.orchestrate();
    assert.deepEqual(
      violations(f, built, { epic, maxSessions: { lisa: 0, ralph: 2 }, status: 'done' }),
      [],
      built.stderr,
    );

    // The configured default applies when the creator does not say.
    f.config({ planner: 'person' });
    const byConfig = f.sf('epic', 'create', 'Also mine');
    assert.equal(byConfig.json.planner, 'person');
    assert.equal(f.sf('epic', 'create', 'Theirs', '--planner', 'lisa').json.planner, 'lisa');
    assert.equal(f.sf('epic', 'create', 'Bad', '--planner', 'marge').code, 2);
  },
);
