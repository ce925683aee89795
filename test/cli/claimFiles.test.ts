// `springfield claim` run by agents themselves honours the files rule (docs/files.md, "Claims by agents
// themselves"): two worktrees claiming at once on two plans that share a file never hold overlapping
// steps, and `ready` says which step waits and what it shares, in text and --json.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ReadyResult } from '../../src/core/store/types.ts';
import {
  assertClaimed,
  assertNotClaimed,
  assertOk,
  ensureCli,
  makeRepo,
  runCliAsync,
  type Repo,
} from '../helpers/gitRepo.ts';
import { runCli, runJson } from '../helpers/cliInProcess.ts';

const ONE = `# Plan: One

## Step 1: User model {#step-1}
**Files:** src/db/user.ts
- [ ] Add the column

## Step 2: Docs {#step-2}
**Files:** docs/**
- [ ] Document it
`;

const TWO = `# Plan: Two

## Step 1: User queries {#step-1}
**Files:** src/db/*.ts
- [ ] Add the query

## Step 2: Cli {#step-2}
**Files:** src/cli/**
- [ ] Add the flag
`;

before(() => ensureCli());

describe("claims by agents themselves keep off each other's files", () => {
  let repo: Repo;
  before(async () => {
    repo = makeRepo({ files: { 'plans/one.md': ONE, 'plans/two.md': TWO }, worktrees: ['a', 'b'] });
    assertOk(await runJson(repo.root, ['init', 'plans/one.md']));
    assertOk(await runJson(repo.root, ['init', 'plans/two.md']));
  });
  after(() => repo.cleanup());

  test('two worktrees claiming at once on two plans sharing a file get steps that do not overlap; ready says why', async () => {
    const a = repo.worktree('a');
    const b = repo.worktree('b');
    const [ra, rb] = await Promise.all([
      runCliAsync(a, ['claim', 'plans/one.md', '--json']),
      runCliAsync(b, ['claim', 'plans/two.md', '--json']),
    ]);
    const ca = assertClaimed(ra);
    const cb = assertClaimed(rb);
    // Both step-1s touch src/db/user.ts: at most one of them is held.
    assert.ok(
      !(ca.step_anchor === 'step-1' && cb.step_anchor === 'step-1'),
      `both claimed step-1: ${ra.stdout} ${rb.stdout}`,
    );
    assert.ok(ca.step_anchor === 'step-1' || cb.step_anchor === 'step-1', 'the first claimer took its step-1');
    const [first, second, secondPlan, firstPlan] =
      ca.step_anchor === 'step-1' ? [a, b, 'plans/two.md', 'plans/one.md'] : [b, a, 'plans/one.md', 'plans/two.md'];

    const ready = assertOk<ReadyResult>(await runJson(second, ['ready', secondPlan]));
    assert.deepEqual(ready.ready_steps, []);
    assert.equal(ready.files_waiting.length, 1);
    const wait = ready.files_waiting[0];
    assert.deepEqual(
      [wait?.anchor, wait?.with_plan, wait?.with_step, wait?.with_epic],
      ['step-1', firstPlan, 'step-1', null],
    );
    assert.match(wait?.with_holder ?? '', new RegExp(`${first.split('/').pop() ?? ''}$`));
    const text = await runCli(second, ['ready', secondPlan]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /Waiting: +step-1\n +step-1 shares src\/db\/\S+ with plans\/\S+ step-1 \(held by .+\)/);
    // The holder of step-1 is not held back by its own claim.
    assert.deepEqual(assertOk<ReadyResult>(await runJson(first, ['ready', secondPlan])).files_waiting, []);

    const none = assertNotClaimed(await runJson(second, ['claim', secondPlan]));
    assert.equal(none.reason, 'files_busy');
    assert.deepEqual(
      none.files_waiting?.map((w) => w.anchor),
      ['step-1'],
    );
    const said = await runCli(second, ['claim', secondPlan]);
    assert.equal(said.code, 0, said.stderr);
    assert.match(said.stdout, /waiting: step-1 shares src\/db\/\S+ with plans\/\S+ step-1 \(held by /);
  });
});
