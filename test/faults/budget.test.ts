// Cost budgets (docs/budgets.md), with real `springfield orchestrate` processes and scripted agents
// that report their cost as Claude Code does: an epic whose spend reached its budget is paused
// (budget_exhausted) before its next run and not one more run starts — counted in the store — until a
// person raises the budget and retries; and once today's spend reaches the daily budget no new run
// starts on any epic, while a run already under way finishes.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { clearOfUtcMidnight } from '../helpers/utcDay.ts';
import { approve, faultRepo, type FaultRepo } from './harness.ts';

const TEST_MS = 400_000;
// The daily budget counts today's spend: no midnight within this file's two tests.
before(() => clearOfUtcMidnight(2 * TEST_MS));

interface Run {
  id: number;
  epic_id: string;
  role: string;
  status: string;
  started_at: string;
  ended_at: string | null;
  cost_usd: number | null;
}

function runsOf(f: FaultRepo, epic?: string): Run[] {
  const r = f.sf('runs', ...(epic ? ['--epic', epic] : []), '--limit', '500');
  assert.equal(r.code, 0, r.stderr);
  return (r.json.runs as Run[]).slice().reverse();
}

/** Plans the epics (Lisa reports no cost), then a person approves each plan. */
function plannedAndApproved(f: FaultRepo, epics: readonly string[]): void {
  const planning = f.orchestrate();
  assert.equal(planning.code, 0, planning.stderr);
  for (const e of epics) approve(f, e);
}

test(
  'an epic past its budget is paused with budget_exhausted and zero extra runs; a retry is refused until the budget is raised, then it finishes',
  { timeout: TEST_MS },
  (t) => {
    const f = faultRepo(t, { usage: { ralph: 'claude' }, budget: { epicUsd: 0.02 } });
    const epic = f.epic('Budgeted work');
    f.behave({ ralph: { do: 'ok', usage: 'claude', cost: 0.03 } });
    plannedAndApproved(f, [epic]);

    const first = f.orchestrate();
    assert.equal(first.code, 0, first.stderr);
    const shown = f.sf('epic', 'show', epic).json as {
      status: string;
      status_reason: string;
      budget: { usd: { spent: number; limit: number; limit_from: string }; spent: string };
    };
    assert.equal(shown.status, 'blocked', first.stderr);
    assert.equal(shown.status_reason, 'budget_exhausted: $0.03 of $0.02');
    assert.deepEqual(
      [shown.budget.usd.spent, shown.budget.usd.limit, shown.budget.usd.limit_from, shown.budget.spent],
      [0.03, 0.02, 'config', 'usd'],
    );
    assert.deepEqual(
      runsOf(f, epic)
        .filter((r) => r.role === 'ralph')
        .map((r) => [r.status, r.cost_usd]),
      [['succeeded', 0.03]],
      'one build, then no run past the budget',
    );
    assert.match(
      first.stderr,
      new RegExp(
        `${epic}: budget_exhausted \\(budget_exhausted: \\$0\\.03 of \\$0\\.02\\)|budget_exhausted: \\$0\\.03 of \\$0\\.02`,
      ),
    );
    const events = f.sf('events', '--epic', epic).json.events as {
      action: string;
      from_status: string;
      to_status: string;
      data: Record<string, unknown> | null;
    }[];
    const block = events.find((e) => e.action === 'budget_exhausted');
    assert.deepEqual(
      [block?.from_status, block?.to_status, block?.data?.role, block?.data?.budget],
      ['in_progress', 'blocked', 'ralph', 'usd'],
    );

    // The scheduler running again starts nothing: the epic waits for a person, saying how to resume it.
    const again = f.orchestrate();
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(runsOf(f, epic).filter((r) => r.role === 'ralph').length, 1, 'zero extra runs after the pause');
    assert.deepEqual(
      again.json.waiting?.map((w) => w.message),
      [
        `paused — budget_exhausted: $0.03 of $0.02; raise its budget (springfield epic budget ${epic} --usd N), then springfield epic retry ${epic}`,
      ],
    );
    const dry = f.sf('orchestrate', '--dry-run');
    assert.deepEqual(
      (dry.json.waiting as { message: string }[]).map((w) => w.message.slice(0, 36)),
      ['paused — budget_exhausted: $0.03 of '],
    );

    // A retry with the budget still spent is refused in one line; raising it lets the retry through.
    const refused = f.sf('epic', 'retry', epic);
    assert.equal(refused.code, 1, refused.stdout);
    assert.equal((refused.json.error as { code: string }).code, 'budget_still_spent');
    assert.match(
      (refused.json.error as { message: string }).message,
      new RegExp(
        `${epic} is still paused: it has spent \\$0\\.03 of \\$0\\.02; raise its budget first \\(springfield epic budget ${epic} --usd N`,
      ),
    );
    const raised = f.sf('epic', 'budget', epic, '--usd', '1');
    assert.equal(raised.code, 0, raised.stderr);
    assert.deepEqual(
      [
        (raised.json.budget as { usd: { limit: number; limit_from: string } }).usd.limit,
        (raised.json.budget as { usd: { limit_from: string } }).usd.limit_from,
      ],
      [1, 'epic'],
    );
    const retried = f.sf('epic', 'retry', epic);
    assert.equal(retried.code, 0, retried.stderr);
    assert.equal(retried.json.to, 'in_progress');

    const rest = f.orchestrate();
    assert.equal(rest.code, 0, rest.stderr);
    const done = f.sf('epic', 'show', epic).json as { status: string; budget: { usd: { spent: number } } };
    assert.equal(done.status, 'done', rest.stderr);
    assert.equal(runsOf(f, epic).filter((r) => r.role === 'ralph').length, 2, 'the second step built once resumed');
    assert.equal(done.budget.usd.spent, 0.06);
  },
);

test(
  'the daily budget crossed: no new run starts on any epic, a run under way finishes, and the wait is said once',
  { timeout: TEST_MS },
  (t) => {
    const f = faultRepo(t, { usage: { ralph: 'claude' }, budget: { dailyUsd: 0.05 }, maxParallelAgents: 2 });
    const fast = f.epic('Fast costly work');
    const slow = f.epic('Slow cheap work');
    // The fast builder's run crosses the daily budget while the slow one is still working.
    f.behave({
      [`${fast}:ralph`]: { do: 'ok', usage: 'claude', cost: 0.06 },
      [`${slow}:ralph`]: { do: 'ok', usage: 'claude', cost: 0.01, ms: 6000 },
    });
    plannedAndApproved(f, [fast, slow]);

    const run = f.orchestrate();
    assert.equal(run.code, 0, run.stderr);
    const ralph = runsOf(f).filter((r) => r.role === 'ralph');
    assert.deepEqual(
      ralph.map((r) => [r.epic_id, r.status, r.cost_usd]).sort(),
      [
        [fast, 'succeeded', 0.06],
        [slow, 'succeeded', 0.01],
      ].sort(),
      'one build each, then nothing',
    );
    const fastEnd = ralph.find((r) => r.epic_id === fast)?.ended_at ?? '';
    const slowRun = ralph.find((r) => r.epic_id === slow) as Run;
    assert.ok(
      slowRun.started_at < fastEnd && (slowRun.ended_at ?? '') > fastEnd,
      `the slow run was under way when the budget was crossed, and finished (${slowRun.started_at} < ${fastEnd} < ${slowRun.ended_at ?? ''})`,
    );
    assert.equal(
      runsOf(f).filter((r) => r.started_at > fastEnd && r.role !== 'setup').length,
      0,
      'no run of any role started after the daily budget was crossed',
    );
    for (const e of [fast, slow])
      assert.equal(
        (f.sf('epic', 'show', e).json as { status: string }).status,
        'in_progress',
        'not paused: the daily budget holds, it blocks nothing',
      );

    const line =
      'waiting: daily budget spent: $0.07 of $0.05; runs start again tomorrow (UTC) or when the budget is raised';
    assert.deepEqual(
      run.json.waiting?.map((w) => [w.epic_id, w.kind, w.message]).sort(),
      [
        [fast, 'budget', line],
        [slow, 'budget', line],
      ].sort(),
    );
    assert.equal(
      run.stderr.split('\n').filter((l) => l.includes('daily budget spent')).length,
      1,
      `said once in the log, not per epic or pass:\n${run.stderr}`,
    );
    const dry = f.sf('orchestrate', '--dry-run');
    assert.deepEqual(
      (dry.json.waiting as { epic_id: string; message: string }[]).map((w) => w.message),
      [line, line],
    );

    // Raised, the runs start again.
    f.config({ budget: { dailyUsd: 10 } });
    const after = f.orchestrate();
    assert.equal(after.code, 0, after.stderr);
    for (const e of [fast, slow])
      assert.equal((f.sf('epic', 'show', e).json as { status: string }).status, 'done', after.stderr);
  },
);
