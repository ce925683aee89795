// Fault suite: agents that leave the worktree in a bad state — a git lock from a killed commit,
// uncommitted leftovers, another branch checked out, a plan file that drifted.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { approve, faultRepo, sessionsOf, violations } from './harness.ts';

function approved(f: ReturnType<typeof faultRepo>, title: string): string {
  const epic = f.epic(title);
  assert.equal(f.orchestrate().code, 0);
  approve(f, epic);
  return epic;
}

function tidyEvents(f: ReturnType<typeof faultRepo>, epic: string): string[] {
  return (
    f.sf('events', '--epic', epic, '--limit', '500').json.events as {
      entity: string;
      action: string;
      reason: string | null;
    }[]
  )
    .filter((e) => e.entity === 'worktree' && e.action === 'tidy')
    .map((e) => e.reason ?? '');
}

test(
  'a builder killed mid-commit leaves .git/index.lock: the next run starts after the stale lock is cleared',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = approved(f, 'Killed mid commit');
    f.behave({ ralph: { do: 'killed-mid-commit', times: 1 } });
    const run = f.orchestrate();
    assert.deepEqual(violations(f, run, { epic, maxSessions: { ralph: 3 }, status: 'done' }), [], run.stderr);
    const killed = (
      f.sf('runs', '--epic', epic).json.runs as { status: string; exit_code: number; outcome_reason: string }[]
    ).filter((r) => r.status !== 'succeeded');
    assert.deepEqual(
      killed.map((r) => [r.status, r.exit_code, r.outcome_reason]),
      [['failed', 137, 'ended by SIGKILL']],
    );
    const tidied = tidyEvents(f, epic);
    assert.ok(
      tidied.some((r) => /removed a stale \.git index\.lock/.test(r)),
      tidied.join('\n'),
    );
    assert.equal(sessionsOf(f, epic).ralph, 3);
  },
);

test(
  'a builder that leaves uncommitted work: kept in a marked WIP commit on the epic branch, merged with the epic',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = approved(f, 'Dirty builder');
    f.behave({ ralph: { do: 'dirty', times: 1 } });
    const run = f.orchestrate();
    assert.deepEqual(violations(f, run, { epic, maxSessions: { ralph: 3 }, status: 'done' }), [], run.stderr);
    const leftover = f.records().find((r) => r.event === 'leftover');
    assert.ok(leftover);
    assert.equal(
      f.git('show', `main:${String(leftover.file)}`),
      String(leftover.text).trimEnd(),
      'the leftover reached main with the epic',
    );
    const tidied = tidyEvents(f, epic);
    assert.ok(
      tidied.some((r) => /committed uncommitted leftovers as WIP [0-9a-f]{12}/.test(r)),
      tidied.join('\n'),
    );
    assert.match(f.git('log', '-1', '--format=%B', 'main'), /Springfield-Epic: /);
  },
);

test(
  'a builder that commits on another branch: run failed with the reason, the epic branch restored, the stray commit kept, the step rebuilt',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = approved(f, 'Wrong branch');
    f.behave({ ralph: { do: 'wrong-branch', times: 1 } });
    const run = f.orchestrate();
    assert.deepEqual(violations(f, run, { epic, maxSessions: { ralph: 3 }, status: 'done' }), [], run.stderr);
    const failed = (f.sf('runs', '--epic', epic).json.runs as { status: string; outcome_reason: string }[]).filter(
      (r) => r.status !== 'succeeded',
    );
    assert.equal(failed.length, 1);
    assert.equal(
      failed[0]?.outcome_reason,
      `left springfield/${epic}: the worktree is now on rogue-${epic} (the scheduler restores springfield/${epic}; commits made there stay reachable)`,
    );
    const stray = f.records().find((r) => r.event === 'commit' && /wrong branch/.test(String(r.text)));
    assert.ok(stray);
    assert.equal(
      f.git('branch', '--contains', String(stray.commit)).trim(),
      `rogue-${epic}`,
      'the stray commit is reachable from the branch it was made on',
    );
    const stepEvents = (
      f.sf('events', `plans/wrong-branch.md`, '--step', 'step-1').json.events as { action: string }[]
    ).map((e) => e.action);
    assert.ok(stepEvents.includes('reopen'), `step-1 was reopened: ${stepEvents.join(', ')}`);
    assert.equal(
      f.git('show', `main:work/${epic}/step-1.txt`),
      `${epic} step-1`,
      'the step was rebuilt on the epic branch and merged',
    );
    assert.ok(tidyEvents(f, epic).some((r) => r.includes(`the worktree was on rogue-${epic}: switched back`)));
  },
);

test(
  "a builder that changes the plan's structure: the next builder is not started, the epic is blocked with the diff; restored and retried, it finishes",
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = approved(f, 'Drifting plan');
    f.behave({ ralph: { do: 'drift', times: 1 } });
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, {
        epic,
        maxSessions: { ralph: 1 },
        status: 'blocked',
        reason:
          /^plan_drift: plans\/drifting-plan\.md in .+ differs from the approved v1 \(step-3 added.*\); restore it \(springfield plan show sf-[0-9a-f]+ has the approved text\) and retry$/,
      }),
      [],
      run.stderr,
    );
    assert.equal(sessionsOf(f, epic).ralph, 1, 'no builder started on the drifted plan');
    // The person restores the approved plan in the worktree and retries.
    const worktree = join(`${f.repo}.springfield`, epic);
    f.git('-C', worktree, 'checkout', 'HEAD~1', '--', 'plans/drifting-plan.md');
    f.git('-C', worktree, 'commit', '-qm', 'Restore the approved plan');
    assert.equal(f.sf('epic', 'retry', epic).json.to, 'in_progress');
    const after = f.orchestrate();
    // The person reverted the drifting commit on purpose: its content is the one thing meant not to reach main.
    const reverted = (v: string) => v.includes('(plans/drifting-plan.md) by ralph is lost');
    assert.deepEqual(
      violations(f, after, { epic, maxSessions: { ralph: 2 }, status: 'done' }).filter((v) => !reverted(v)),
      [],
      after.stderr,
    );
    assert.ok(existsSync(join(f.repo, 'work', epic, 'step-2.txt')));
  },
);
