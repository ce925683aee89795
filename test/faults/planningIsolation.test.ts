// Planning in isolation (docs/lifecycle.md): each planning run has a worktree and an index of its own,
// detached at main's tip; what the planner proposes reaches the store only; main and the epic's branch
// stay untouched until a person approves — from any worktree — and the worktree (with the empty
// `<repo>.springfield/` it was made in) is gone after the run.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { approve, faultRepo, sessionsOf, violations, type FaultRepo } from './harness.ts';

function worktrees(f: FaultRepo): string[] {
  return f
    .git('worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice(9));
}

test(
  'two epics plan at once, each in its own worktree and index; main is untouched; approval from main; both built and merged, main clean',
  { timeout: 300_000 },
  (t) => {
    const f = faultRepo(t);
    const a = f.epic('Alpha search');
    const b = f.epic('Beta export');
    const mainHead = f.git('rev-parse', 'HEAD');
    f.behave({ lisa: { do: 'stage-plan', n: 2 } });

    const planning = f.orchestrate();
    for (const epic of [a, b])
      assert.deepEqual(
        violations(f, planning, { epic, maxSessions: { lisa: 1 }, status: 'planned' }),
        [],
        planning.stderr,
      );
    const seen = f.records().filter((r) => r.event === 'planning') as {
      epic: string;
      toplevel: string;
      head: string;
      branch: string;
      staged: string;
    }[];
    assert.equal(seen.length, 2, 'both planners ran');
    for (const epic of [a, b]) {
      const s = seen.find((r) => r.epic === epic);
      assert.ok(s, `${epic} planned`);
      assert.equal(s.toplevel, join(`${f.repo}.springfield`, `${epic}-plan`), 'in its own planning worktree');
      assert.deepEqual([s.head, s.branch], [mainHead, 'HEAD'], "detached at main's tip");
      assert.equal(
        s.staged,
        `plans/${epic === a ? 'alpha-search' : 'beta-export'}-draft.md`,
        'its index holds its own staged file only, while the other planner had staged hers',
      );
      const v = f.sf('plan', 'show', epic).json.version as { status: string; body: string; plan_path: string };
      assert.equal(v.status, 'proposed');
      assert.match(
        v.body,
        new RegExp(`^# Plan: drafted for ${epic}$`, 'm'),
        'the proposal was read from her worktree into the store',
      );
    }
    assert.equal(f.git('status', '--porcelain'), '', 'nothing reached the main worktree');
    assert.equal(f.git('rev-parse', 'HEAD'), mainHead);
    assert.deepEqual(worktrees(f), [f.repo], 'the planning worktrees are removed after the runs');
    assert.ok(!existsSync(`${f.repo}.springfield`), 'and no empty <repo>.springfield/ is left beside the repository');
    assert.equal(f.git('branch', '--list', 'springfield/*'), '', 'no epic branch exists before approval');
    assert.ok(!existsSync(join(f.repo, 'plans', 'alpha-search-draft.md')));

    // A person approves from the main worktree, where the drafts do not exist: the stored proposal is approved.
    for (const epic of [a, b]) approve(f, epic);
    assert.equal(f.git('status', '--porcelain'), '', 'approval writes nothing into main (no TODO-<epic>.md)');
    f.behave({});
    const build = f.orchestrate();
    for (const epic of [a, b]) {
      assert.deepEqual(
        violations(f, build, { epic, maxSessions: { lisa: 1, ralph: 2, bart: 1 }, status: 'done' }),
        [],
        build.stderr,
      );
      assert.equal(f.git('ls-files', `TODO-${epic}.md`), '', 'the handoff never lands on main');
    }
    assert.equal(f.git('status', '--porcelain'), '', 'main is clean after both merges');
    assert.match(
      f.git('show', 'HEAD:plans/alpha-search-draft.md').concat(f.git('show', 'HEAD:plans/beta-export-draft.md')),
      /drafted for/,
      'the approved plans arrive with the merges',
    );
    assert.deepEqual(worktrees(f), [f.repo]);
    assert.ok(!existsSync(`${f.repo}.springfield`), 'nor after the merges');
  },
);

test(
  'a planner that keeps failing in her planning worktree: blocked after the limit, no planning worktree or claim left, main untouched',
  { timeout: 180_000 },
  (t) => {
    const f = faultRepo(t, { retryLimit: 2 });
    const epic = f.epic('Failing plan');
    f.behave({ lisa: { do: 'exit1' } });
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, {
        epic,
        maxSessions: { lisa: 2 },
        status: 'blocked',
        reason: /^agent_failed: Lisa failed 2 times in a row/,
      }),
      [],
      run.stderr,
    );
    assert.equal(sessionsOf(f, epic).lisa, 2);
    assert.deepEqual(worktrees(f), [f.repo], 'every planning worktree was removed, failures included');
    assert.ok(!existsSync(`${f.repo}.springfield`), 'nor the empty folder it was made in');
    assert.equal(f.git('status', '--porcelain'), '');
  },
);
