// Fault suite: builders that fail, hang, do nothing, or lose their supervisor.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { approve, faultRepo, sessionsOf, violations } from './harness.ts';
import { pidAlive } from '../../src/core/runs/processGroup.ts';
import { CLI_PATH } from '../helpers/gitRepo.ts';

/** An approved epic, ready for the scheduler to start. */
function approved(
  f: ReturnType<typeof faultRepo>,
  title: string,
  options: { complexity?: string; maxIterations?: number } = {},
): string {
  const epic = f.epic(title, options);
  assert.equal(f.orchestrate().code, 0);
  approve(f, epic);
  return epic;
}

test(
  'a builder that commits and then fails on every step: three sessions, blocked, its steps released, its commits kept',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = approved(f, 'Always failing');
    f.behave({ ralph: { do: 'commit-then-fail' } });
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, {
        epic,
        maxSessions: { lisa: 1, ralph: 3 },
        status: 'blocked',
        reason:
          /^agent_failed: Ralph failed 3 times in a row \(last: run \d+ failed: exit 1\); last output: tests failed, giving up$/,
      }),
      [],
      run.stderr,
    );
    assert.equal(sessionsOf(f, epic).ralph, 3);
    const commits = f.records().filter((r) => r.event === 'commit');
    assert.equal(commits.length, 3, 'each attempt committed');
    for (const c of commits)
      assert.match(
        f.git('branch', '--contains', String(c.commit)),
        new RegExp(`springfield/${epic}`),
        'on the epic branch',
      );
    const steps = f.sf('show', 'plans/always-failing.md').json.plans as {
      steps: { anchor: string; status: string }[];
    }[];
    assert.deepEqual(
      steps[0]?.steps.map((s) => s.status),
      ['pending', 'pending'],
      'released at once each time, never left claimed',
    );
    const events = (
      f.sf('events', 'plans/always-failing.md', '--step', 'step-1').json.events as {
        action: string;
        reason: string | null;
      }[]
    ).filter((e) => e.action === 'reset');
    assert.equal(events.length, 3);
    for (const e of events) assert.match(e.reason ?? '', /^run \d+ failed: exit 1$/);
    const shown = f.sf('epic', 'show', epic).json as { iteration: number };
    assert.equal(shown.iteration, 4, 'the start and one build iteration per failed run');
  },
);

test(
  'a builder that hangs: ended at its timeout with everything it started; three timed_out runs, then blocked',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t, { timeouts: { ralph: 2 } });
    const epic = approved(f, 'Hanging');
    f.behave({ ralph: { do: 'hang' } });
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, {
        epic,
        maxSessions: { ralph: 3 },
        status: 'blocked',
        reason:
          /^agent_failed: Ralph failed 3 times in a row \(last: run \d+ timed_out, exit 143: ran past its timeout of 2 s; its process group was ended\); last output: thinking very hard$/,
      }),
      [],
      run.stderr,
    );
    const runs = f.sf('runs', '--epic', epic).json.runs as { role: string; status: string; output_tail: string }[];
    assert.deepEqual(
      runs.filter((r) => r.role === 'ralph').map((r) => r.status),
      ['timed_out', 'timed_out', 'timed_out'],
    );
    assert.match(runs[0]?.output_tail ?? '', /^thinking very hard\n\[springfield\] timed out after 2 s/);
    const children = f
      .records()
      .filter((r) => r.event === 'spawned')
      .map((r) => Number(r.child));
    assert.equal(children.length, 3);
    for (const pid of children) assert.equal(pidAlive(pid), false, `the agent's own child ${pid} was ended with it`);
  },
);

test(
  'a builder that exits 0 without doing anything: no_progress three times, then blocked',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = approved(f, 'Idle builder');
    f.behave({ ralph: { do: 'noop' } });
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, {
        epic,
        maxSessions: { ralph: 3 },
        status: 'blocked',
        reason:
          /^agent_failed: Ralph failed 3 times in a row \(last: run \d+ no_progress, exit 0: exited 0 without completing step-1, committing or ticking an item\); last output: nothing to do, apparently$/,
      }),
      [],
      run.stderr,
    );
  },
);

test(
  "a builder whose supervisor dies while it keeps working: the run is lost, the agent's group ended, the step released and built by the next run",
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t, { leaseSeconds: 3600 });
    const epic = approved(f, 'Orphaned');
    f.behave({ ralph: { do: 'orphan', times: 1 } });
    const run = f.orchestrate();
    assert.deepEqual(violations(f, run, { epic, maxSessions: { ralph: 3 }, status: 'done' }), [], run.stderr);
    const orphan = Number(readFileSync(`${f.base}/orphan.pid`, 'utf8'));
    assert.ok(existsSync(`${f.base}/orphan.pid`));
    assert.equal(
      pidAlive(orphan),
      false,
      'the agent that outlived its supervisor was ended before its step was released',
    );
    const runs = f.sf('runs', '--epic', epic).json.runs as {
      role: string;
      status: string;
      outcome_reason: string | null;
    }[];
    const lost = runs.filter((r) => r.status === 'lost');
    assert.equal(lost.length, 1);
    assert.match(lost[0]?.outcome_reason ?? '', /^supervising process \d+ is gone$/);
    assert.deepEqual(
      sessionsOf(f, epic),
      { lisa: 1, ralph: 3, bart: 0, lovejoy: 0, total: 4 },
      'one lost run, then one per step',
    );
    assert.match(run.stderr, /marked lost — its step is released at once/);
  },
);

test(
  'a builder that goes silent is ended as stalled after stallSeconds, three times, then blocked; one that works quietly is left alone',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t, { stallSeconds: 2, timeouts: { ralph: 120 } });
    const epic = approved(f, 'Silent');
    f.behave({ ralph: { do: 'silent' } });
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, {
        epic,
        maxSessions: { ralph: 3 },
        status: 'blocked',
        reason:
          /^agent_failed: Ralph failed 3 times in a row \(last: run \d+ stalled, exit 143: no output and no progress in the store for 2 s\)$/,
      }),
      [],
      run.stderr,
    );
    const runs = f.sf('runs', '--epic', epic).json.runs as {
      role: string;
      status: string;
      started_at: string;
      ended_at: string;
    }[];
    const ralph = runs.filter((r) => r.role === 'ralph');
    assert.deepEqual(
      ralph.map((r) => r.status),
      ['stalled', 'stalled', 'stalled'],
    );
    for (const r of ralph)
      assert.ok(Date.parse(r.ended_at) - Date.parse(r.started_at) < 60_000, 'ended long before its 120 s timeout');

    // 6 s, not 2: each breadcrumb is a CLI process, and on a loaded machine one can take seconds to start.
    const g = faultRepo(t, { stallSeconds: 6, timeouts: { ralph: 120 } });
    const quiet = approved(g, 'Quiet');
    g.behave({ ralph: { do: 'quiet-progress', n: 16 } });
    const run2 = g.orchestrate();
    assert.deepEqual(violations(g, run2, { epic: quiet, maxSessions: { ralph: 2 }, status: 'done' }), [], run2.stderr);
    const statuses = (g.sf('runs', '--epic', quiet).json.runs as { role: string; status: string }[])
      .filter((r) => r.role === 'ralph')
      .map((r) => r.status);
    assert.deepEqual(
      statuses,
      ['succeeded', 'succeeded'],
      'eight seconds without a word, but progress in the store: not stalled',
    );
  },
);

test(
  'epic show and context say when a failing role is backing off: failures in a row, the limit, the next try',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t, { retryBackoffSeconds: [600] });
    const epic = approved(f, 'Backing off');
    f.behave({ ralph: { do: 'exit1' } });
    const run = f.orchestrate();
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.json.waiting?.[0]?.message ?? '',
      /Ralph failed once in a row/,
      'orchestrate waits out the backoff',
    );
    const shown = f.sf('epic', 'show', epic);
    const retries = shown.json.retries as {
      role: string;
      failures: number;
      limit: number;
      next_try_at: string;
      last_outcome: string;
    }[];
    assert.deepEqual(
      retries.map((r) => [r.role, r.failures, r.limit, r.last_outcome]),
      [['ralph', 1, 3, 'failed']],
    );
    const next = Date.parse(retries[0]?.next_try_at ?? '');
    assert.ok(
      next > Date.now() + 500_000 && next < Date.now() + 600_000,
      'the next try is the backoff after the failure',
    );
    const text = spawnSync(process.execPath, [CLI_PATH, 'epic', 'show', epic], {
      cwd: f.repo,
      env: f.env,
      encoding: 'utf8',
    }).stdout;
    assert.match(
      text,
      new RegExp(
        `backing off: Ralph failed 1 of 3 times in a row \\(last: run \\d+ failed: exit 1\\); next try at ${retries[0]?.next_try_at.slice(11, 19)} UTC`,
      ),
    );
    const context = spawnSync(process.execPath, [CLI_PATH, 'context', '--epic', epic], {
      cwd: f.repo,
      env: f.env,
      encoding: 'utf8',
    }).stdout;
    assert.match(context, /## Backing off\n- Ralph failed 1 of 3 times in a row/);
  },
);
