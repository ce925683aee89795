import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gitRunAsync } from '../../src/core/git/exec.ts';
import { squashMerge } from '../../src/core/orchestrate/merge.ts';

function repo(t: { after: (fn: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'sf-merge-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const git = (...a: string[]) => execFileSync('git', a, { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 't');
  writeFileSync(join(dir, 'f'), 'base\n');
  writeFileSync(join(dir, 'g'), 'base\n');
  git('add', '-A');
  git('commit', '-qm', 'base');
  git('checkout', '-q', '-b', 'springfield/sf-0001');
  writeFileSync(join(dir, 'f'), 'epic\n');
  git(
    'commit',
    '-qam',
    'epic work',
    '--trailer',
    'Springfield-Step: step-1',
    '--trailer',
    'Springfield-Plan: plans/p.md',
  );
  git('checkout', '-q', 'main');
  return { dir, git };
}

test('squash merge keeps the step trailers and lands one commit', async (t) => {
  const { dir, git } = repo(t);
  writeFileSync(join(dir, 'notes.txt'), 'untracked, kept\n');
  const r = await squashMerge(dir, 'sf-0001', 'Epic');
  assert.equal(r.trailers, 2);
  assert.match(git('log', '-1', '--format=%B'), /Springfield-Epic: sf-0001[\s\S]*Springfield-Step: step-1/);
  assert.equal(readFileSync(join(dir, 'f'), 'utf8'), 'epic\n');
  assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'untracked, kept\n');
});

test('uncommitted tracked changes in main refuse the merge and are left untouched', async (t) => {
  const { dir, git } = repo(t);
  writeFileSync(join(dir, 'f'), 'my edit\n');
  writeFileSync(join(dir, 'g'), 'another edit\n');
  await assert.rejects(squashMerge(dir, 'sf-0001', 'Epic'), { code: 'main_dirty' });
  assert.equal(readFileSync(join(dir, 'f'), 'utf8'), 'my edit\n');
  assert.equal(readFileSync(join(dir, 'g'), 'utf8'), 'another edit\n');
  assert.equal(git('log', '-1', '--format=%s'), 'base');
});

test('a conflicting branch is refused, main is left clean and untracked files stay', async (t) => {
  const { dir, git } = repo(t);
  writeFileSync(join(dir, 'f'), 'main moved\n');
  git('commit', '-qam', 'main moved');
  writeFileSync(join(dir, 'scratch.txt'), 'keep me\n');
  await assert.rejects(squashMerge(dir, 'sf-0001', 'Epic'), { code: 'merge_conflict' });
  assert.equal(git('status', '--porcelain', '--untracked-files=no'), '');
  assert.equal(readFileSync(join(dir, 'f'), 'utf8'), 'main moved\n');
  assert.equal(readFileSync(join(dir, 'scratch.txt'), 'utf8'), 'keep me\n');
});

test("the scheduler's git ignores an inherited GIT_DIR, editor and injected hooks, and never waits for an editor", async (t) => {
  const { dir, git } = repo(t);
  const other = repo(t);
  const marker = join(other.dir, 'ran');
  const program = join(other.dir, 'program.sh');
  writeFileSync(program, `#!/bin/sh\necho "$0" >> '${marker}'\nexit 1\n`);
  chmodSync(program, 0o755);
  const hooks = join(other.dir, 'hooks');
  mkdirSync(hooks);
  writeFileSync(join(hooks, 'pre-commit'), `#!/bin/sh\necho hook >> '${marker}'\nexit 1\n`);
  chmodSync(join(hooks, 'pre-commit'), 0o755);
  const inherited = {
    GIT_DIR: join(other.dir, '.git'),
    GIT_WORK_TREE: other.dir,
    GIT_EDITOR: program,
    EDITOR: program,
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'core.hooksPath',
    GIT_CONFIG_VALUE_0: hooks,
  };
  const saved = { ...process.env };
  Object.assign(process.env, inherited);
  t.after(() => {
    for (const k of Object.keys(inherited)) delete process.env[k];
    Object.assign(process.env, saved);
  });
  const otherHead = other.git('--git-dir', join(other.dir, '.git'), 'rev-parse', 'HEAD');
  const r = await squashMerge(dir, 'sf-0001', 'Epic');
  assert.equal(git('--git-dir', join(dir, '.git'), 'log', '-1', '--format=%H'), r.commit_hash);
  assert.equal(other.git('--git-dir', join(other.dir, '.git'), 'rev-parse', 'HEAD'), otherHead);
  // A commit without a message would open the editor: git's own "no editor" makes it fail at once.
  const edited = await gitRunAsync(dir, ['commit', '--allow-empty'], process.env);
  assert.notEqual(edited.status, 0);
  assert.equal(existsSync(marker), false, 'no inherited editor or injected hook ran');
});
