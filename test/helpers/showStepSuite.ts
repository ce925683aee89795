// `show PLAN --step ANCHOR` through the CLI on a backend chosen by `env`: run by
// test/cli/planBytes.test.ts on SQLite and by test/postgres/showStep.test.ts on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { StepView } from '../../src/core/store/types.ts';
import { assertClaimed, assertFails, assertOk, makeRepo, runJson, showSteps, type Repo } from './gitRepo.ts';
import type { BackendEnv } from './stepAdminSuite.ts';

/** The plan both suites use: steps, a substep, a dependency. */
export const P = 'plans/bytes.md';
export const PLAN = `# Plan: Bytes

## Step 1: Scaffold {#step-1}
**Tasks:**
- [ ] Create the package
**Tests:**
- [ ] Smoke test

### Step 1.1: Lint config {#step-1-1}
**Tasks:**
- [ ] Add eslint

## Step 2: Parser {#step-2}
**Depends on:** #step-1
**Tasks:**
- [ ] Write the parser

## Step 3: Docs {#step-3}
**Tasks:**
- [ ] Write docs
`;

/** Each step as `show PLAN --step` prints it, equal to its entry in `show PLAN`; refusals exit 2. */
export function showStepSuite(backend: string, backendEnv: BackendEnv): void {
  describe(`show --step (${backend})`, () => {
    let env: Readonly<Record<string, string>> = {};
    let repo: Repo;
    before(() => {
      env = backendEnv();
      repo = makeRepo({ files: { [P]: PLAN } });
      assertOk(runJson(repo.root, ['init', P], env));
      assertClaimed(runJson(repo.root, ['claim', P], env));
      assertOk(runJson(repo.root, ['update', P, 'step-1', '--task', '0', 'completed'], env));
    });
    after(() => repo.cleanup());

    test('prints each step (and substep) as show PLAN lists it', () => {
      const all = showSteps(repo.root, P, env);
      assert.equal(all.size, 4);
      for (const [anchor, expected] of all) {
        const r = assertOk<{ plan_path: string; step: StepView }>(
          runJson(repo.root, ['show', P, '--step', anchor], env),
        );
        assert.equal(r.plan_path, P);
        assert.deepEqual({ ...r.step, lease_expired: expected.lease_expired }, expected, anchor);
      }
    });

    test('an unknown step, or --step without a plan, is refused with exit 2', () => {
      assertFails(runJson(repo.root, ['show', P, '--step', 'step-9'], env), 2, 'unknown_step');
      assertFails(runJson(repo.root, ['show', '--step', 'step-1'], env), 2, 'missing_argument');
    });
  });
}
