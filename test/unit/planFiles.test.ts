// A step's **Files:** line (docs/plan-grammar.md, "Files"): the globs it will touch, part of the
// structural hash when present, absent from the structure (and the hash) when not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PlanError } from '../../src/core/errors.ts';
import { describeDrift, planHash, planStructure } from '../../src/core/plan/hash.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';

const plan = (files: string) =>
  `# Plan: Auth\n\n## Step 1: Users {#step-1}\n${files}**Tasks:**\n- [ ] Add the user table\n\n## Step 2: Login {#step-2}\n**Depends on:** #step-1\n**Tasks:**\n- [ ] Add login\n`;

test('a Files line lists repository-relative globs, backticks and duplicates tidied', () => {
  const p = parsePlan(plan('**Files:** `src/auth/**`, src/db/user.ts, ./src/db/user.ts\n'), 'plans/a.md');
  assert.deepEqual(
    p.steps.map((s) => s.files),
    [['src/auth/**', 'src/db/user.ts'], []],
  );
  assert.deepEqual(parsePlan(plan('**Files:** none\n'), 'plans/a.md').steps[0]?.files, []);
});

test('a plan without Files lines keeps the structure and hash it always had; adding or changing files is drift', () => {
  const without = parsePlan(plan(''), 'plans/a.md');
  assert.equal(JSON.stringify(planStructure(without)).includes('files'), false);
  assert.equal(planHash(without), planHash(parsePlan(plan('**Files:** none\n'), 'plans/a.md')), 'none is no files');
  const withFiles = parsePlan(plan('**Files:** src/db/user.ts\n'), 'plans/a.md');
  assert.notEqual(planHash(withFiles), planHash(without));
  assert.deepEqual(
    describeDrift(planStructure(withFiles), planStructure(parsePlan(plan('**Files:** src/db/*.ts\n'), 'plans/a.md'))),
    ['step-1 files changed: src/db/user.ts → src/db/*.ts'],
  );
});

test('a glob outside the repository, with spaces, or a Files line outside a step is refused at its line', () => {
  for (const [bad, why] of [
    ['/etc/passwd', /repository-relative/],
    ['../x.ts', /repository-relative/],
    ['src/a b.ts', /no spaces/],
  ] as const) {
    assert.throws(
      () => parsePlan(plan(`**Files:** ${bad}\n`), 'plans/a.md'),
      (e: unknown) => e instanceof PlanError && /plans\/a\.md:4:/.test(e.message) && why.test(e.message),
    );
  }
  assert.throws(
    () => parsePlan(`# Plan: X\n**Files:** src/x.ts\n\n## Step 1: S\n- [ ] t\n`, 'plans/x.md'),
    /plans\/x\.md:2: files line outside a step/,
  );
});
