// A planning worktree is removed when Lisa's run ends while a retry without backoff may already be
// making a fresh one (docs/lifecycle.md): the two must not trip over each other.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import {
  createPlanningWorktree,
  planningWorktreePath,
  removePlanningWorktree,
} from '../../src/core/orchestrate/planningWorktree.ts';
import { makeRepo } from '../helpers/gitRepo.ts';

test("removing a run's planning worktree while the next run makes a fresh one: both succeed, one worktree remains", async (t) => {
  const repo = makeRepo({ files: { 'README.md': 'x\n' } });
  t.after(() => repo.cleanup());
  const epic = 'sf-abcd';
  const path = planningWorktreePath(repo.root, epic);
  for (let round = 0; round < 5; round++) {
    await createPlanningWorktree(repo.root, epic, false);
    const [removed, fresh] = await Promise.all([
      removePlanningWorktree(repo.root, epic),
      createPlanningWorktree(repo.root, epic, false),
      removePlanningWorktree(repo.root, epic).then(() => undefined),
    ]);
    assert.equal(removed, true, `round ${round}: the first removal found the old worktree`);
    assert.equal(fresh.path.endsWith(`${epic}-plan`), true);
  }
  assert.equal(await removePlanningWorktree(repo.root, epic), false, 'the last removal already took it');
  assert.equal(existsSync(path), false);
  assert.equal(await removePlanningWorktree(repo.root, epic), false, 'removing what is gone is no error');
});
