import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertFails, assertOk, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runJson } from '../helpers/cliInProcess.ts';

const STEPS = 100_000;

/** `## Step N` for N = 1…n, each depending on the next: the dependency search goes n deep. */
function chain(n: number, closeLoop = false): string {
  const parts = ['# Plan: A long chain\n'];
  for (let i = 1; i <= n; i++) {
    const next = i < n ? `#step-${i + 1}` : closeLoop ? '#step-1' : 'none';
    parts.push(`## Step ${i}: Link ${i}\n**Depends on:** ${next}\n`);
  }
  return parts.join('\n');
}

let repo: Repo;
before(() => {
  repo = makeRepo({ files: { 'plans/chain.md': chain(STEPS), 'plans/loop.md': chain(STEPS, true) } });
});
after(() => repo.cleanup());

test(`a valid ${STEPS.toLocaleString('en')}-step chain (each step depends on the next) initialises through the CLI`, async () => {
  const r = assertOk<{ steps_created: number }>(await runJson(repo.root, ['init', 'plans/chain.md']));
  assert.equal(r.steps_created, STEPS);
  const claim = assertOk<{ claimed: boolean; step_anchor: string }>(
    await runJson(repo.root, ['claim', 'plans/chain.md']),
  );
  assert.equal(claim.step_anchor, `step-${STEPS}`, 'only the last link has no unfinished dependency');
});

test(`the same chain closed into a loop is refused as a cycle at its first step, with one line`, async () => {
  const err = assertFails(await runJson(repo.root, ['init', 'plans/loop.md']), 2, 'invalid_plan');
  assert.equal(
    err.message,
    `plans/loop.md:3: dependency cycle of ${STEPS} steps: step-1 → step-2 → step-3 → step-4 → step-5 → … ${STEPS - 7} more … → step-${STEPS - 1} → step-${STEPS} → step-1`,
  );
});
