// Re-planning after Bart's option_viability_failure (docs/lifecycle.md): Lisa re-plans in a worktree at
// the epic branch's tip, a person approves from main, the scheduler commits the new plan and a new
// version of the handoff (what changed and why) on the epic's branch, builders continue from the steps
// still completed, and the squash merge leaves the handoff out: main stays clean throughout.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { approve, faultRepo, sessionsOf, violations } from './harness.ts';

test(
  'option_viability_failure → re-plan → approve from main → finish → merge: new plan and handoff version on the branch only, completed steps kept, main clean',
  { timeout: 300_000 },
  (t) => {
    const f = faultRepo(t);
    // Critical: Bart reviews, and the merge waits for a person, so the branch can be read before it goes.
    const epic = f.epic('Sharded cache', { complexity: 'critical' });
    const planning = f.orchestrate();
    assert.deepEqual(
      violations(f, planning, { epic, maxSessions: { lisa: 1 }, status: 'planned' }),
      [],
      planning.stderr,
    );
    approve(f, epic);
    f.behave({ bart: { do: 'viability', times: 1 }, lisa: { do: 'replan' } });
    const first = f.orchestrate();
    assert.deepEqual(
      violations(f, first, { epic, maxSessions: { lisa: 2, ralph: 2, bart: 1 }, status: 'blocked' }),
      [],
      first.stderr,
    );
    const shown = f.sf('epic', 'show', epic).json as {
      status: string;
      plan_versions: { version: number; status: string }[];
    };
    // Blocked by Bart's signal, then Lisa re-planned in a worktree at the epic branch's tip: v2 waits for a person.
    assert.equal(shown.status, 'blocked');
    assert.deepEqual(
      shown.plan_versions.map((v) => [v.version, v.status]),
      [
        [1, 'approved'],
        [2, 'proposed'],
      ],
    );
    const replanned = f.records().find((r) => r.event === 'replanning') as {
      toplevel: string;
      head: string;
      text: string;
    };
    assert.equal(replanned.toplevel, join(`${f.repo}.springfield`, `${epic}-plan`));
    assert.equal(replanned.head, f.git('rev-parse', `springfield/${epic}`), "re-planned at the epic branch's tip");
    assert.doesNotMatch(replanned.text, /Step 3/, 'starting from the approved v1 the branch carries');
    assert.equal(f.git('status', '--porcelain'), '', 'nothing reached main while re-planning');
    const branchBefore = f.git('rev-parse', `springfield/${epic}`);

    // A person approves v2 from the main worktree (where the plan file is v1 or absent): the stored proposal.
    approve(f, epic);
    assert.equal(f.git('status', '--porcelain'), '', 'approval writes nothing into main');
    assert.equal(
      f.git('rev-parse', `springfield/${epic}`),
      branchBefore,
      'nor onto the branch: the scheduler does that when the epic starts',
    );
    f.behave({});
    const rebuild = f.orchestrate();
    assert.deepEqual(
      violations(f, rebuild, { epic, maxSessions: { lisa: 2, ralph: 3, bart: 2 }, status: 'verified' }),
      [],
      rebuild.stderr,
    );
    assert.deepEqual(
      f
        .records()
        .filter((r) => r.role === 'ralph' && r.event === 'start')
        .map((r) => r.step),
      ['step-1', 'step-2', 'step-3'],
      'only the new step was built after the re-plan',
    );

    // The branch carries the new plan and a new version of the handoff: what changed and why.
    const branch = `springfield/${epic}`;
    assert.match(f.git('show', `${branch}:plans/sharded-cache.md`), /## Step 3: Sharded store/);
    const handoff = f.git('show', `${branch}:TODO-${epic}.md`);
    assert.match(
      handoff,
      /^## Approach \(decided at plan approval\)\n\nOne file per step\.$/m,
      'the first version stays as it was',
    );
    assert.match(handoff, /^## Re-plan: version 2 of the plan/m);
    assert.match(handoff, /^Why: option viability failure — the approach cannot scale past one file$/m);
    assert.match(handoff, /^- step-3 added/m);
    assert.match(handoff, /^Shard the store; one file per step\.$/m);
    assert.equal(f.git('ls-files', `TODO-${epic}.md`), '', 'no handoff on main');

    assert.equal(f.sf('epic', 'approve-merge', epic).code, 0);
    const merge = f.orchestrate();
    assert.deepEqual(
      violations(f, merge, { epic, maxSessions: { lisa: 2, ralph: 3, bart: 2 }, status: 'done' }),
      [],
      merge.stderr,
    );
    assert.equal(f.git('status', '--porcelain'), '', 'main is clean after the merge');
    assert.doesNotMatch(f.git('show', '--stat', '--format=', 'HEAD'), /TODO-/, 'the squash merge left the handoff out');
    assert.match(f.git('show', 'HEAD:plans/sharded-cache.md'), /Step 3/, 'the approved plan arrives with the merge');
    assert.equal(sessionsOf(f, epic).total, 7);
  },
);
