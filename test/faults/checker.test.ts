// The fault suite's checks can fail: each is shown a run that breaks it and must report the
// violation (a checker that cannot fail proves nothing).
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { test } from 'node:test';
import { approve, faultRepo, heldByDeadRuns, lostCommits, violations } from './harness.ts';

test(
  'with the retry limit effectively off, the bounded-sessions and final-status checks report the runaway builder',
  { timeout: 300_000 },
  async (t) => {
    // retryLimit 100 is the mutation: only the build budget (4 iterations) stops the failing builder now.
    const f = faultRepo(t, { retryLimit: 100 });
    const epic = f.epic('No limit', { maxIterations: 4 });
    assert.equal(f.orchestrate().code, 0);
    approve(f, epic);
    f.behave({ ralph: { do: 'exit1' } });
    const run = f.orchestrate();
    const found = violations(f, run, {
      epic,
      maxSessions: { ralph: 3 },
      status: 'blocked',
      reason: /^agent_failed: Ralph failed 3 times/,
    });
    assert.equal(found.length, 2, found.join('\n'));
    assert.equal(found[0], 'ralph ran 4 sessions, more than 3');
    assert.match(
      found[1] ?? '',
      new RegExp(
        `^${epic}'s reason "iteration_budget_exhausted: \\d+ of 4 build iterations used; ralph run \\d+ failed" does not match `,
      ),
    );
  },
);

test(
  'the held-step check reports a step claimed by a run that is not running; the lost-commit check a commit no ref reaches',
  { timeout: 120_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = f.epic('Synthetic violations');
    for (const args of [
      ['plan', 'propose', epic, 'plans/synthetic-violations.md', '--agent', 'lisa'],
      ['plan', 'approve', epic, '--agent', 'marge'],
      ['epic', 'start', epic],
    ])
      assert.equal(f.sf(...args).code, 0, args.join(' '));
    assert.deepEqual(heldByDeadRuns(f), []);
    const wt = String(f.sf('epic', 'show', epic).json.worktree_path);
    assert.equal(f.sf('claim', 'plans/synthetic-violations.md', '--worktree', wt).code, 0);
    assert.deepEqual(heldByDeadRuns(f), [`plans/synthetic-violations.md#step-1 is claimed by ${wt} with no run alive`]);

    f.git('checkout', '-q', '-b', 'doomed');
    f.git('commit', '-q', '--allow-empty', '-m', 'work that will be lost');
    const hash = f.git('rev-parse', 'HEAD');
    appendFileSync(
      f.log,
      JSON.stringify({ role: 'ralph', event: 'commit', commit: hash, file: 'nowhere.txt', text: 'x' }) + '\n',
    );
    assert.deepEqual(lostCommits(f, false), []);
    f.git('checkout', '-q', 'main');
    f.git('branch', '-q', '-D', 'doomed');
    assert.deepEqual(lostCommits(f, false), [`commit ${hash} (nowhere.txt) by ralph is lost`]);
  },
);

test('the until-idle check reports an orchestrator that had to be killed', { timeout: 120_000 }, async (t) => {
  const f = faultRepo(t);
  const epic = f.epic('Never idle');
  // --watch without --until-idle never returns by itself: it stands in for a scheduler that loops.
  const run = f.orchestrate({ untilIdle: false, timeoutMs: 4000 });
  assert.equal(run.timedOut, true);
  assert.deepEqual(violations(f, run, { epic, maxSessions: { lisa: 1 }, status: 'planned' }), [
    'orchestrate --until-idle did not return by itself',
  ]);
});
