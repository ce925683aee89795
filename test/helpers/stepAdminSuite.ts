// The step-admin tests (reopen, reset on a completed step, repeated complete; ready while an epic
// waits, plan propose/approve and epic start) through the CLI, on a backend chosen by `env`: run by
// test/cli/stepAdmin.test.ts on SQLite and by test/postgres/stepAdmin.test.ts on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type {
  CompleteResult,
  ReopenResult,
  EventView,
  HeartbeatResult,
  ReadyResult,
} from '../../src/core/store/types.ts';
import { assertClaimed, assertFails, assertOk, makeRepo, runCli, runJson, showSteps, type Repo } from './gitRepo.ts';

/** The CLI environment selecting the backend (called once per suite, after the server is up). */
export type BackendEnv = () => Readonly<Record<string, string>>;

const P = 'plans/admin.md';
const PLAN = `# Plan: Admin

## Step 1: Base {#step-1}
- [ ] base

### Step 1.1: Part {#step-1-1}
- [ ] part

## Step 2: On top {#step-2}
**Depends on:** #step-1
- [ ] top
`;

/** Reopen and its neighbours, on the backend `env` selects. */
export function reopenSuite(backend: string, backendEnv: BackendEnv): void {
  describe(`reopen, reset on a completed step, repeated complete (${backend})`, () => {
    let env: BackendEnv = () => ({});
    let repo: Repo;
    let a: string;
    let b: string;
    before(() => {
      const fixed = backendEnv();
      env = () => fixed;
      repo = makeRepo({ files: { [P]: PLAN }, worktrees: ['a', 'b'] });
      a = repo.worktree('a');
      b = repo.worktree('b');
      assertOk(runJson(repo.root, ['init', P], env()));
    });
    after(() => repo.cleanup());

    test('a repeated complete is a no-op only for the completing holder: another agent in the same worktree is refused', () => {
      const claim = assertClaimed(runJson(a, ['claim', P, '--agent', 'ralph-1'], env()));
      assertOk(runJson(a, ['update', P, 'step-1', '--all', 'completed', '--agent', 'ralph-1'], env()));
      assertOk(runJson(a, ['update', P, 'step-1-1', '--all', 'completed', '--agent', 'ralph-1'], env()));
      const first = assertOk<CompleteResult>(
        runJson(a, ['complete', P, 'step-1', '--agent', 'ralph-1', '--token', String(claim.claim_token)], env()),
      );

      const same = assertOk<CompleteResult>(
        runJson(a, ['complete', P, 'step-1', '--agent', 'ralph-1', '--token', String(claim.claim_token)], env()),
      );
      const other = runJson(
        a,
        ['complete', P, 'step-1', '--agent', 'ralph-2', '--token', String(claim.claim_token)],
        env(),
      );
      const otherNoToken = runJson(a, ['complete', P, 'step-1', '--agent', 'ralph-2'], env());

      assert.deepEqual([first.already_completed, same.already_completed], [false, true]);
      assert.equal(
        assertFails(other, 1, 'already_completed').message,
        `step-1 is already completed by ${a} (agent ralph-1) with token ${claim.claim_token}`,
      );
      assertFails(otherNoToken, 1, 'already_completed');
    });

    test('reset on a completed step says what is recorded (no commit here) and points to reopen', () => {
      const r = runJson(repo.root, ['reset', P, 'step-1'], env());
      const message = assertFails(r, 1, 'already_completed').message;
      assert.equal(
        message,
        `cannot reset step-1: it is completed (with no commit recorded); to undo a completion use 'springfield reopen ${P} step-1 --reason TEXT'`,
      );
      assert.doesNotMatch(message, /is in git/);
    });

    test('reopen needs a reason and a completed step', () => {
      assert.match(
        assertFails(runJson(repo.root, ['reopen', P, 'step-1'], env()), 2, 'missing_option').message,
        /--reason/,
      );
      assert.match(
        assertFails(runJson(repo.root, ['reopen', P, 'step-2', '--reason', 'x'], env()), 1, 'not_completed').message,
        /step-2: it is pending, not completed/,
      );
      assertFails(runJson(repo.root, ['reopen', P, 'nope', '--reason', 'x'], env()), 2, 'unknown_step');
    });

    test('reopen takes a completed step (with its substep) back to pending, fences the claimed dependent and records why', () => {
      const dependent = assertClaimed(runJson(b, ['claim', P, '--agent', 'ralph-b'], env()));
      assert.equal(dependent.step_anchor, 'step-2');

      const r = assertOk<ReopenResult>(
        runJson(repo.root, ['reopen', P, 'step-1', '--reason', 'completed by mistake'], env()),
      );

      assert.deepEqual([r.steps_reopened, r.status, r.previous_completer], [['step-1'], 'pending', a]);
      assert.deepEqual(r.dependents_fenced, [
        { step_anchor: 'step-2', previous_holder: b, claim_token: dependent.claim_token + 1 },
      ]);
      const steps = showSteps(repo.root, P, env());
      assert.deepEqual(
        ['step-1', 'step-1-1', 'step-2'].map((s) => [steps.get(s)?.status, steps.get(s)?.commit_hash ?? null]),
        [
          ['pending', null],
          ['completed', null],
          ['pending', null],
        ],
        'the substep finished with its parent stays completed (reopen it too to redo it)',
      );
      const fenced = runJson(b, ['heartbeat', P, 'step-2', '--token', String(dependent.claim_token)], env());
      assertFails(fenced, 1, 'not_claimed');
      const { events } = assertOk<{ events: EventView[] }>(runJson(repo.root, ['events', P], env()));
      const reopen = events.find((e) => e.action === 'reopen');
      assert.deepEqual(
        [reopen?.step_anchor, reopen?.from_status, reopen?.to_status, reopen?.reason],
        ['step-1', 'completed', 'pending', 'completed by mistake'],
      );
      const reset = events.filter((e) => e.action === 'reset').at(-1);
      assert.deepEqual([reset?.step_anchor, reset?.reason], ['step-2', 'its dependency step-1 was reopened']);

      const ready = assertOk<ReadyResult>(runJson(repo.root, ['ready', P], env()));
      assert.deepEqual([ready.ready_steps, ready.blocked_steps], [['step-1'], ['step-2']]);
      const again = assertClaimed(runJson(a, ['claim', P], env()));
      assert.equal(again.step_anchor, 'step-1');
      assert.ok(again.claim_token > 1, 'the reopened step gets a fresh token');
      const hb = assertOk<HeartbeatResult>(runJson(a, ['heartbeat', P, 'step-1'], env()));
      assert.equal(hb.claim_token, again.claim_token);
    });

    test('reopening a substep of a live claim puts it back under that claim', () => {
      const r = assertOk<ReopenResult>(
        runJson(repo.root, ['reopen', P, 'step-1-1', '--reason', 'redo the part'], env()),
      );
      const steps = showSteps(repo.root, P, env());
      assert.equal(r.status, 'claimed');
      assert.deepEqual(
        [steps.get('step-1-1')?.status, steps.get('step-1-1')?.claimed_by, steps.get('step-1-1')?.claim_token],
        ['claimed', a, steps.get('step-1')?.claim_token],
      );
    });

    test('reopening the last step of a finished plan makes the plan active again', () => {
      assertOk(runJson(a, ['update', P, 'step-1-1', '--all', 'completed'], env()));
      assertOk(runJson(a, ['complete', P, 'step-1'], env()));
      assertClaimed(runJson(b, ['claim', P], env()));
      assertOk(runJson(b, ['complete', P, 'step-2', '--force', 'done elsewhere'], env()));
      assert.equal(
        assertOk<{ plans: { status: string }[] }>(runJson(repo.root, ['show', P], env())).plans[0]?.status,
        'done',
      );

      const r = assertOk<ReopenResult>(runJson(repo.root, ['reopen', P, 'step-2', '--reason', 'regression'], env()));
      const text = runCli(repo.root, ['reopen', P, 'step-1', '--reason', 'and this one'], env());

      assert.equal(r.plan_reopened, true);
      assert.equal(
        assertOk<{ plans: { status: string }[] }>(runJson(repo.root, ['show', P], env())).plans[0]?.status,
        'active',
      );
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /^Reopened step-1 \(pending now\)/);
    });
  });
}

/** Ready while the plan's epic waits, through plan propose/approve and epic start, on the backend `env` selects. */
export function epicReadySuite(backend: string, backendEnv: BackendEnv): void {
  describe(`ready and an epic's plan (${backend})`, () => {
    let repo: Repo;
    let env: BackendEnv = () => ({});
    before(() => {
      const fixed = backendEnv();
      env = () => fixed;
      repo = makeRepo({ files: { [P]: PLAN } });
    });
    after(() => repo.cleanup());

    test("ready lists an unstarted epic's steps as waiting, with claim's reason, and claim refuses them", () => {
      assertOk(runJson(repo.root, ['init', P], env()));
      const epic = assertOk<{ id: string }>(runJson(repo.root, ['epic', 'create', 'Admin things'], env()));
      assertOk(runJson(repo.root, ['plan', 'propose', epic.id, P, '--agent', 'lisa'], env()));
      assertOk(runJson(repo.root, ['plan', 'approve', epic.id], env()));

      const ready = assertOk<ReadyResult>(runJson(repo.root, ['ready', P], env()));
      const text = runCli(repo.root, ['ready', P], env());
      const claim = assertFails(runJson(repo.root, ['claim', P], env()), 1, 'epic_not_in_progress');

      assert.deepEqual([ready.ready_steps, ready.waiting_steps, ready.epic_status], [[], ['step-1'], 'ready']);
      assert.equal(ready.waiting_reason, claim.message);
      assert.match(
        text.stdout,
        /^Ready: {5}—\nWaiting: {3}step-1\n {11}.*which is ready; steps are claimed while it is in progress \(start it: 'springfield epic start sf-/,
      );

      const wt = assertOk<{ worktree_path: string }>(
        runJson(repo.root, ['epic', 'start', epic.id], env()),
      ).worktree_path;
      assert.deepEqual(assertOk<ReadyResult>(runJson(repo.root, ['ready', P], env())).ready_steps, ['step-1']);
      // Claimed where the epic's work lives: its own worktree (docs/lifecycle.md).
      assert.equal(assertClaimed(runJson(wt, ['claim', P], env())).step_anchor, 'step-1');
    });
  });
}
