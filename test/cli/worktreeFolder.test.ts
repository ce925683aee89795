// Epic and planning worktrees go in `<repo>.springfield/` beside the repository unless a folder is
// configured. Springfield removes that default folder with the last worktree in it; a configured
// folder, or a symbolic link at the default place, is left alone.
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  addingWorktree,
  ensureEpicWorktree,
  removeEmptyWorktreeFolder,
  removeEpicWorktree,
} from '../../src/core/orchestrate/epicWorktree.ts';
import { createPlanningWorktree, removePlanningWorktree } from '../../src/core/orchestrate/planningWorktree.ts';
import { makeRepo } from '../helpers/gitRepo.ts';

function repo(t: { after(fn: () => void): void }) {
  const r = makeRepo({ files: { 'README.md': 'x\n' } });
  t.after(() => r.cleanup());
  return r;
}

test("a planning run's worktree, made and removed, leaves no <repo>.springfield/ behind", async (t) => {
  const { root } = repo(t);
  const made = await createPlanningWorktree(root, 'sf-abcd', false);
  assert.equal(made.path, join(`${root}.springfield`, 'sf-abcd-plan'));
  assert.equal(await removePlanningWorktree(root, 'sf-abcd'), true);
  assert.equal(existsSync(`${root}.springfield`), false, 'the empty default folder went with its last worktree');
});

test("the default folder stays while another worktree is in it, and goes with the last one (an epic's, after its merge)", async (t) => {
  const { root } = repo(t);
  await ensureEpicWorktree(root, 'sf-0001');
  await createPlanningWorktree(root, 'sf-0002', false);
  await removePlanningWorktree(root, 'sf-0002');
  assert.deepEqual(readdirSync(`${root}.springfield`), ['sf-0001'], "the epic's worktree keeps the folder");
  await removeEpicWorktree(root, 'sf-0001');
  assert.equal(existsSync(`${root}.springfield`), false);
});

test('a configured worktree folder stays, empty, after its last worktree is removed', async (t) => {
  const r = repo(t);
  const location = join(r.tmp, 'trees');
  await createPlanningWorktree(r.root, 'sf-abcd', false, location);
  await ensureEpicWorktree(r.root, 'sf-abcd', location);
  await removePlanningWorktree(r.root, 'sf-abcd', location);
  await removeEpicWorktree(r.root, 'sf-abcd', location);
  assert.deepEqual(readdirSync(location), [], "the person's folder is theirs");
});

test('a symbolic link at <repo>.springfield is not followed: the link and its empty target stay', async (t) => {
  const r = repo(t);
  const target = join(r.tmp, 'elsewhere');
  mkdirSync(target);
  symlinkSync(target, `${r.root}.springfield`);
  await createPlanningWorktree(r.root, 'sf-abcd', false);
  await removePlanningWorktree(r.root, 'sf-abcd');
  assert.equal(lstatSync(`${r.root}.springfield`).isSymbolicLink(), true);
  assert.deepEqual(readdirSync(target), []);
});

test('while this process adds a worktree to the default folder, the folder is not removed; afterwards it is', async (t) => {
  // Seen in the editor's fault suite: two epics planned at once, one run's removal took the then-empty
  // folder between git making it and making the worktree in it, and the other's add failed.
  const { root } = repo(t);
  const folder = `${root}.springfield`;
  await addingWorktree(root, async () => {
    mkdirSync(folder);
    removeEmptyWorktreeFolder(root);
    assert.equal(existsSync(folder), true, 'an add is under way');
  });
  removeEmptyWorktreeFolder(root);
  assert.equal(existsSync(folder), false);
});
