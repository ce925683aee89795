// sweepPlanningWorktrees on a real repository: what it removes, keeps, refuses and never looks at.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createPlanningWorktree, sweepPlanningWorktrees } from '../../src/core/orchestrate/planningWorktree.ts';
import { cleanEnv } from '../helpers/gitRepo.ts';

test('the sweep removes only unused <epic>-plan worktrees in the worktree folder; a link, a live run and a live maker keep theirs', async (t) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'sf-sweep-')));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const repo = join(base, 'repo');
  const folder = `${repo}.springfield`;
  mkdirSync(repo);
  const env = cleanEnv();
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env }).trim();
  git('init', '-q', '-b', 'main');
  git('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'start');
  const add = (path: string) => git('worktree', 'add', '-q', '--detach', path, 'HEAD');

  add(join(folder, 'sf-a1-plan')); // left by a scheduler that died: no lock, no run
  add(join(folder, 'sf-b2-plan')); // a live run works in it
  add(join(folder, 'sf-c3')); // an epic's build worktree: not a planning worktree
  add(join(base, 'elsewhere', 'sf-d4-plan')); // named like one, outside the folder
  const mine = await createPlanningWorktree(repo, 'sf-e5', false); // made (and locked) by this live process
  // A planning worktree whose directory was replaced by a link to somewhere else.
  add(join(folder, 'sf-f6-plan'));
  const target = join(base, 'precious');
  renameSync(join(folder, 'sf-f6-plan'), target);
  writeFileSync(join(target, 'keep.txt'), 'not yours\n');
  symlinkSync(target, join(folder, 'sf-f6-plan'));
  // A lock left by a scheduler whose pid is gone.
  add(join(folder, 'sf-a7-plan'));
  git(
    'worktree',
    'lock',
    '--reason',
    'springfield planning worktree of scheduler pid 999999999',
    join(folder, 'sf-a7-plan'),
  );

  const swept = await sweepPlanningWorktrees(repo, new Set([join(folder, 'sf-b2-plan')]), (pid) => pid === process.pid);

  assert.deepEqual([...swept.removed].sort(), [join(folder, 'sf-a1-plan'), join(folder, 'sf-a7-plan')]);
  assert.deepEqual([...swept.kept].sort(), [join(folder, 'sf-b2-plan'), mine.path]);
  assert.deepEqual(swept.refused, [join(folder, 'sf-f6-plan')]);
  const listed = git('worktree', 'list', '--porcelain');
  for (const gone of ['sf-a1-plan', 'sf-a7-plan']) {
    assert.equal(existsSync(join(folder, gone)), false, gone);
    assert.ok(!listed.includes(join(folder, gone)), gone);
  }
  for (const kept of [
    join(folder, 'sf-b2-plan'),
    join(folder, 'sf-c3'),
    join(base, 'elsewhere', 'sf-d4-plan'),
    mine.path,
  ]) {
    assert.ok(existsSync(kept) && listed.includes(kept), kept);
  }
  assert.ok(existsSync(join(target, 'keep.txt')), 'nothing behind the link was touched');
});
