import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertFails, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runJson } from '../helpers/cliInProcess.ts';
import { epicReadySuite, reopenSuite } from '../helpers/stepAdminSuite.ts';

const P = 'plans/admin.md';

reopenSuite('sqlite', () => ({}));
epicReadySuite('sqlite', () => ({}));

describe('reconcile', () => {
  let repo: Repo;
  before(() => {
    repo = makeRepo({ files: { [P]: '# Plan: Admin\n\n## Step 1: Base {#step-1}\n- [ ] base\n' } });
  });
  after(() => repo.cleanup());

  test('reconcile before init says to run init first, exits non-zero and creates nothing', async () => {
    const r = await runJson(repo.root, ['reconcile']);
    const error = assertFails(r, 2, 'no_database');
    assert.match(error.message, /nothing to reconcile; run 'springfield init <plan\.md>' first$/);
    assert.equal(existsSync(join(repo.root, '.springfield')), false);
  });
});
