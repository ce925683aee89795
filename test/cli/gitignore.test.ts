// The state store never shows in Source Control: the first write of any kind that creates the
// database (init, epic create, plan propose; the editor's first write too, see the UI tests) adds
// `.springfield/` to the main worktree's .gitignore, once, and never writes through a symlink.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureGitignored } from '../../src/core/git/gitignore.ts';
import { locateRepo } from '../../src/core/git/repo.ts';
import { assertOk, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';

let repos: Repo[] = [];
after(() => repos.forEach((r) => r.cleanup()));
function repo(options: Parameters<typeof makeRepo>[0] = {}): Repo {
  const r = makeRepo(options);
  repos = [...repos, r];
  return r;
}

test('epic create before any init ignores .springfield/ in git and says so', async () => {
  const r = repo({ worktrees: ['a'] });
  const created = await runCli(r.worktree('a'), ['epic', 'create', 'Add search', '--brief', 'Find things.']);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /Added \.springfield\/ to \.gitignore/);
  assert.equal(readFileSync(join(r.root, '.gitignore'), 'utf8'), '.springfield/\n');
  assert.ok(existsSync(join(r.root, '.springfield', 'state.db')));
  const status = r.git(['status', '--porcelain', '--untracked-files=all']);
  assert.doesNotMatch(status, /\.springfield/, `git status shows no state files:\n${status}`);
  const again = await runCli(r.root, ['epic', 'create', 'Another']);
  assert.doesNotMatch(again.stdout, /gitignore/, 'only the first write adds it');
  assert.equal(readFileSync(join(r.root, '.gitignore'), 'utf8'), '.springfield/\n');
});

test('the entry goes on its own line after an existing .gitignore without a final newline', async () => {
  const r = repo({ files: { '.gitignore': 'node_modules' } });
  assertOk(await runCli(r.root, ['epic', 'create', 'P', '--json']));
  assert.equal(readFileSync(join(r.root, '.gitignore'), 'utf8'), 'node_modules\n.springfield/\n');
});

test('a database moved elsewhere (SPRINGFIELD_DB) leaves .gitignore alone', async () => {
  const r = repo();
  const created = await runCli(r.root, ['epic', 'create', 'Elsewhere'], { SPRINGFIELD_DB: join(r.tmp, 'state.db') });
  assert.equal(created.code, 0, created.stderr);
  assert.equal(existsSync(join(r.root, '.gitignore')), false);
});

test('an existing entry in any of its spellings is respected; a symlinked .gitignore is never written through', () => {
  const r = repo();
  const location = locateRepo(r.root, {});
  writeFileSync(join(r.root, '.gitignore'), 'dist\n/.springfield\n');
  assert.equal(ensureGitignored(location), false);
  assert.equal(readFileSync(join(r.root, '.gitignore'), 'utf8'), 'dist\n/.springfield\n');

  const target = join(r.tmp, 'elsewhere.txt');
  writeFileSync(target, 'outside the repository\n');
  const s = repo();
  symlinkSync(target, join(s.root, '.gitignore'));
  assert.equal(ensureGitignored(locateRepo(s.root, {})), false);
  assert.equal(readFileSync(target, 'utf8'), 'outside the repository\n', 'the symlink target is untouched');
});
