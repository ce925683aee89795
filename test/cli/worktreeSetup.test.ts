// Worktree preparation and repair on real git repositories: .worktreeinclude copies (never through
// a link, never over a file), the approved plan written without following a planted link, and
// tidyWorktree's stale lock, detached HEAD and leftovers.
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { RefusedError } from '../../src/core/errors.ts';
import { copyIncluded } from '../../src/core/orchestrate/setup.ts';
import { depositApprovedPlan } from '../../src/core/orchestrate/epicWorktree.ts';
import { describeTidy, tidyWorktree } from '../../src/core/orchestrate/worktreeState.ts';
import { makeRepo } from '../helpers/gitRepo.ts';

function repoWithWorktree(t: { after: (fn: () => void) => void }, files: Record<string, string> = {}) {
  const repo = makeRepo({ files: { '.gitignore': '.springfield/\n.env*\nconf/\n*.key\n', ...files } });
  t.after(() => repo.cleanup());
  const wt = repo.addWorktree('epic');
  return { repo, wt };
}

test('copyIncluded copies ignored listed files once, and never through a link or out of either tree', (t) => {
  const { repo, wt } = repoWithWorktree(t, {
    '.worktreeinclude': '.env*\nconf/*.json\n*.key\n.springfield/\ntracked.txt\n',
    'tracked.txt': 'tracked\n',
  });
  const outside = join(repo.tmp, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'target.txt'), 'outside\n');
  writeFileSync(join(repo.root, '.env'), 'A=1\n');
  writeFileSync(join(repo.root, '.env.local'), 'B=2\n');
  mkdirSync(join(repo.root, 'conf'));
  writeFileSync(join(repo.root, 'conf', 'db.json'), '{}\n');
  symlinkSync(join(outside, 'target.txt'), join(repo.root, 'stolen.key'));
  mkdirSync(join(repo.root, '.springfield'), { recursive: true });
  writeFileSync(join(repo.root, '.springfield', 'state.db'), 'not for copying');
  // Planted in the worktree: a link where .env.local would go, and a folder that leads outside.
  symlinkSync(join(outside, 'target.txt'), join(wt, '.env.local'));
  symlinkSync(outside, join(wt, 'conf'));

  const first = copyIncluded(repo.root, wt);
  assert.deepEqual(first.copied, ['.env']);
  assert.deepEqual(first.skipped.sort(), [
    '.env.local (already there)',
    'conf/db.json (its folder in the worktree resolves outside it)',
    'stolen.key (not a regular file)',
  ]);
  assert.equal(readFileSync(join(wt, '.env'), 'utf8'), 'A=1\n');
  assert.equal(readFileSync(join(outside, 'target.txt'), 'utf8'), 'outside\n', 'nothing was written through a link');
  assert.ok(!existsSync(join(outside, 'db.json')));
  assert.ok(!existsSync(join(wt, '.springfield')), 'the state database is never copied');

  writeFileSync(join(wt, '.env'), 'changed in the worktree\n');
  const again = copyIncluded(repo.root, wt);
  assert.deepEqual(again.copied, []);
  assert.equal(
    readFileSync(join(wt, '.env'), 'utf8'),
    'changed in the worktree\n',
    'an existing file is never overwritten',
  );
});

test('the approved plan replaces a planted link instead of writing through it, and refuses a folder that leads outside', async (t) => {
  const { repo, wt } = repoWithWorktree(t);
  const outside = join(repo.tmp, 'victim.md');
  writeFileSync(outside, 'keep me\n');
  mkdirSync(join(wt, 'plans'));
  symlinkSync(outside, join(wt, 'plans', 'p.md'));
  assert.equal(
    await depositApprovedPlan(wt, 'sf-abcd', { planPath: 'plans/p.md', body: '# Plan: P\n', version: 2 }),
    true,
  );
  assert.equal(readFileSync(outside, 'utf8'), 'keep me\n');
  assert.ok(lstatSync(join(wt, 'plans', 'p.md')).isFile());
  assert.equal(repo.git(['show', 'HEAD:plans/p.md'], wt), '# Plan: P');
  assert.match(
    repo.git(['log', '-1', '--format=%s%n%b'], wt),
    /^Approved plan v2 for sf-abcd\n+Springfield-Epic: sf-abcd/,
  );
  assert.equal(
    await depositApprovedPlan(wt, 'sf-abcd', { planPath: 'plans/p.md', body: '# Plan: P\n', version: 2 }),
    false,
    'nothing to do when the branch has it',
  );

  symlinkSync(repo.tmp, join(wt, 'elsewhere'));
  await assert.rejects(
    depositApprovedPlan(wt, 'sf-abcd', { planPath: 'elsewhere/p.md', body: 'x', version: 2 }),
    (err: unknown) => err instanceof RefusedError && err.code === 'unsafe_path',
  );
  await assert.rejects(
    depositApprovedPlan(wt, 'sf-abcd', { planPath: '../p.md', body: 'x', version: 2 }),
    (err: unknown) => err instanceof RefusedError && err.code === 'unsafe_path',
  );
});

test("tidyWorktree clears a stale index.lock, brings back the branch keeping a detached HEAD's commits, and commits leftovers as WIP", async (t) => {
  const { repo, wt } = repoWithWorktree(t);
  const branch = repo.git(['rev-parse', '--abbrev-ref', 'HEAD'], wt);
  assert.equal(describeTidy(await tidyWorktree(wt, branch, 'after run 1')), null, 'a clean worktree is left alone');

  const gitDir = repo.git(['rev-parse', '--absolute-git-dir'], wt);
  repo.git(['checkout', '-q', '--detach'], wt);
  writeFileSync(join(gitDir, 'index.lock'), '');
  writeFileSync(join(wt, 'lost-and-found.txt'), 'work on a detached HEAD\n');
  const report = await tidyWorktree(wt, branch, 'after run 7 (ralph on step-1, failed)');
  assert.equal(report.clearedLock, true);
  assert.equal(report.leftBranch, 'a detached HEAD');
  assert.ok(report.strayBranch?.startsWith('springfield-stray/'));
  assert.ok(report.wipCommit);
  assert.equal(repo.git(['rev-parse', '--abbrev-ref', 'HEAD'], wt), branch, 'back on the epic branch');
  assert.equal(
    repo.git(['show', `${report.strayBranch}:lost-and-found.txt`], wt),
    'work on a detached HEAD',
    'the leftovers are kept on the stray branch',
  );
  assert.match(
    repo.git(['log', '-1', '--format=%B', report.strayBranch ?? ''], wt),
    /^WIP: uncommitted leftovers after run 7 \(ralph on step-1, failed\), left on a detached HEAD\n+Springfield-Wip: /,
  );
  assert.ok(!existsSync(join(gitDir, 'index.lock')));

  writeFileSync(join(wt, 'half.txt'), 'half-done\n');
  const dirty = await tidyWorktree(wt, branch, 'after run 8');
  assert.match(describeTidy(dirty) ?? '', /^committed uncommitted leftovers as WIP [0-9a-f]{12}$/);
  assert.equal(repo.git(['status', '--porcelain'], wt), '');
  assert.equal(repo.git(['show', 'HEAD:half.txt'], wt), 'half-done');
});
