// The demo's review epic (issue 36): a person who opens Review changes on "Fix typo in greeting" finds
// Ralph's change on its branch, at the places Bart's signal names, not an empty branch.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildDemoRepo } from '../../scripts/demoRepo.ts';

test("the demo's implemented epic has a change of its own to review", { timeout: 600_000 }, (t) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'sf-demo-')));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const demo = buildDemoRepo(base);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: demo.root, encoding: 'utf8' }).trim();
  const changed = git('diff', '--name-only', `main...springfield/${demo.epics.typo}`, '--', 'src').split('\n');
  assert.deepEqual(changed, ['src/cache.ts', 'src/greeting.ts']);
  assert.match(git('show', `springfield/${demo.epics.typo}:src/greeting.ts`).split('\n')[1] ?? '', /Hallo/);
});
