// `ready` and `claim` without a plan path take the repository's only plan, from any folder of any
// worktree; with none or several recorded they refuse in one line that names them, writing nothing.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ReadyResult } from '../../src/core/store/types.ts';
import { assertClaimed, assertFails, assertOk, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runCli, runJson } from '../helpers/cliInProcess.ts';

const plan = (title: string) =>
  `# Plan: ${title}\n\n## Step 1: First {#step-1}\n**Tasks:**\n- [ ] Do it\n\n## Step 2: Second {#step-2}\n**Depends on:** #step-1\n**Tasks:**\n- [ ] Then this\n`;

let repos: Repo[] = [];
after(() => repos.forEach((r) => r.cleanup()));
function repo(): Repo {
  const r = makeRepo({
    worktrees: ['a'],
    files: { 'plans/cache.md': plan('Cache'), 'plans/search.md': plan('Search'), 'src/x.ts': '' },
  });
  repos = [...repos, r];
  return r;
}

test('with one plan recorded, ready and claim take it, from a subfolder of another worktree', async () => {
  const r = repo();
  assertOk(await runJson(r.root, ['init', 'plans/cache.md']));
  const sub = join(r.worktree('a'), 'src');

  const ready = assertOk<ReadyResult>(await runJson(sub, ['ready']));
  const claim = assertClaimed(await runJson(sub, ['claim']));
  const text = await runCli(sub, ['ready']);

  assert.deepEqual([ready.plan_path, ready.ready_steps], ['plans/cache.md', ['step-1']]);
  assert.deepEqual([claim.plan_path, claim.step_anchor], ['plans/cache.md', 'step-1']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^Claimed: +step-1$/m);
});

test('with several plans, ready and claim without a path refuse in one line naming them, and claim nothing', async () => {
  const r = repo();
  assertOk(await runJson(r.root, ['init', 'plans/cache.md']));
  assertOk(await runJson(r.root, ['init', 'plans/search.md']));

  const ready = assertFails(await runJson(r.root, ['ready']), 2, 'missing_argument');
  const claim = assertFails(await runCli(r.root, ['claim']), 2, 'missing_argument');

  for (const e of [ready, claim])
    assert.match(e.message, /needs <plan>: this repository has 2 plans: plans\/cache\.md, plans\/search\.md$/);
  const after = assertOk<ReadyResult>(await runJson(r.root, ['ready', 'plans/cache.md']));
  assert.deepEqual(after.claimed_steps, [], 'nothing was claimed');
});

test('with no plan recorded, ready and claim say how to record one, and create no database', async () => {
  const r = repo();

  const ready = assertFails(await runCli(r.root, ['ready']), 2, 'missing_argument');
  const claim = assertFails(await runJson(r.root, ['claim']), 2, 'missing_argument');

  for (const e of [ready, claim]) assert.match(e.message, /has no plan yet \(springfield init PLAN records one\)$/);
  assert.equal(existsSync(join(r.root, '.springfield', 'state.db')), false);
});
