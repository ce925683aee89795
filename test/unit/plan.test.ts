import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlanError } from '../../src/core/errors.ts';
import { parsePlan, readPlanFile } from '../../src/core/plan/index.ts';
import type { Plan, PlanItem } from '../../src/core/plan/index.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'plans');

function fixture(name: string): string {
  return readFileSync(join(FIXTURES, name), 'utf8');
}

function parseError(text: string, file = 'PLAN.md'): PlanError {
  try {
    parsePlan(text, file);
  } catch (err) {
    assert.ok(err instanceof PlanError, `expected a PlanError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the plan to be refused');
}

const task = (ordinal: number, text: string, line: number, checked = false): PlanItem => ({
  kind: 'task',
  ordinal,
  text,
  checked,
  line,
});

test('a full valid plan is parsed into its exact structure', () => {
  // Arrange
  const text = fixture('valid-full.md');

  // Act
  const plan = parsePlan(text, 'plans/valid-full.md');

  // Assert
  const expected: Plan = {
    title: 'Add caching layer',
    steps: [
      {
        anchor: 'step-1',
        parentAnchor: null,
        number: '1',
        title: 'Create API client',
        stepIndex: 0,
        dependsOn: [],
        files: [],
        line: 11,
        items: [
          task(0, 'Implement the client', 14),
          task(1, 'Handle errors from the upstream service', 15, true),
          { kind: 'test', ordinal: 0, text: 'Unit tests for the client', checked: false, line: 18 },
          { kind: 'checkpoint', ordinal: 0, text: '`npm test` passes', checked: false, line: 20 },
        ],
      },
      {
        anchor: 'step-1-1',
        parentAnchor: 'step-1',
        number: '1.1',
        title: 'Retry policy',
        stepIndex: 1,
        dependsOn: [],
        files: [],
        line: 22,
        items: [task(0, 'Exponential backoff', 24)],
      },
      {
        anchor: 'step-1-2',
        parentAnchor: 'step-1',
        number: '1.2',
        title: 'Timeouts',
        stepIndex: 2,
        dependsOn: ['step-1-1'],
        files: [],
        line: 26,
        items: [task(0, 'Per-request timeout', 28, true)],
      },
      {
        anchor: 'cache',
        parentAnchor: null,
        number: '2',
        title: 'Add cache',
        stepIndex: 3,
        dependsOn: ['step-1'],
        files: [],
        line: 35,
        items: [
          task(0, 'Cache responses', 38),
          { kind: 'test', ordinal: 0, text: 'Cache hit and miss', checked: false, line: 40 },
        ],
      },
      {
        anchor: 'step-3',
        parentAnchor: null,
        number: '3',
        title: 'Wire it up',
        stepIndex: 4,
        dependsOn: ['step-1', 'cache'],
        files: [],
        line: 45,
        items: [{ kind: 'checkpoint', ordinal: 0, text: 'Smoke test passes', checked: false, line: 49 }],
      },
    ],
    sections: {
      Approach: 'Wrap the API client in a read-through cache.\n\nKeep it small.',
      Constraints: 'No new dependencies.',
    },
  };
  assert.deepEqual(plan, expected);
});

test('a plan without a title, anchors or kind labels is accepted', () => {
  // Arrange
  const text = fixture('valid-minimal.md');

  // Act
  const plan = parsePlan(text, 'PLAN.md');

  // Assert
  assert.equal(plan.title, '');
  assert.deepEqual(plan.sections, {});
  assert.equal(plan.steps.length, 1);
  assert.deepEqual(plan.steps[0], {
    anchor: 'step-1',
    parentAnchor: null,
    number: '1',
    title: 'Only step',
    stepIndex: 0,
    dependsOn: [],
    files: [],
    line: 3,
    items: [task(0, 'Do the thing', 4)],
  });
});

test('a BOM and CRLF line endings parse the same as plain LF text', () => {
  // Arrange
  const text = fixture('valid-full.md');
  const windows = `\uFEFF${text.replaceAll('\n', '\r\n')}`;

  // Act
  const plan = parsePlan(windows, 'plans/valid-full.md');

  // Assert
  assert.deepEqual(plan, parsePlan(text, 'plans/valid-full.md'));
});

test('a first-level heading without the Plan: prefix is the title as written', () => {
  // Arrange
  const text = '# Caching   work\n\n## Step 1: One\n';

  // Act
  const plan = parsePlan(text, 'PLAN.md');

  // Assert
  assert.equal(plan.title, 'Caching work');
});

test('dependencies accept spaces, commas, a missing # and none, and drop repeats', () => {
  // Arrange
  const text =
    '## Step 1: A\n## Step 2: B\n## Step 3: C\n**Depends on:** none\n**Depends on:** step-2 #step-1,step-2\n';

  // Act
  const plan = parsePlan(text, 'PLAN.md');

  // Assert
  assert.deepEqual(plan.steps[2]?.dependsOn, ['step-2', 'step-1']);
});

test('a substep may depend on a sibling substep and on a top-level step', () => {
  // Arrange
  const text =
    '## Step 1: A\n### Step 1.1: A1\n### Step 1.2: A2\n**Depends on:** #step-1-1\n## Step 2: B\n### Step 2.1: B1\n**Depends on:** #step-1\n';

  // Act
  const plan = parsePlan(text, 'PLAN.md');

  // Assert
  assert.deepEqual(
    plan.steps.map((s) => [s.anchor, s.parentAnchor, s.dependsOn]),
    [
      ['step-1', null, []],
      ['step-1-1', 'step-1', []],
      ['step-1-2', 'step-1', ['step-1-1']],
      ['step-2', null, []],
      ['step-2-1', 'step-2', ['step-1']],
    ],
  );
});

test('checkbox lines inside ~~~ fences in a prose section are not items and stay in the section', () => {
  // Arrange
  const text = '## Approach\n~~~\n- [ ] example\n~~~\n## Step 1: A\n';

  // Act
  const plan = parsePlan(text, 'PLAN.md');

  // Assert
  assert.equal(plan.sections.Approach, '~~~\n- [ ] example\n~~~');
  assert.deepEqual(plan.steps[0]?.items, []);
});

const malformed: readonly (readonly [string, string])[] = [
  ['duplicate-anchor.md', '8: duplicate anchor step-2 (first at line 5)'],
  ['unknown-dependency.md', '6: step-2 depends on unknown step step-9'],
  ['self-dependency.md', '4: step-1 depends on itself'],
  ['dependency-cycle.md', '3: dependency cycle: step-1 → step-3 → step-1'],
  ['substep-dependency.md', '10: step-3 depends on step-1-1, a substep of step-1; depend on step-1 instead'],
  ['own-substep-dependency.md', '4: step-1 depends on its own substep step-1-1'],
  ['parent-dependency.md', '6: step-1-1 depends on its own parent step-1'],
  ['item-outside-step.md', '3: checklist item outside a step'],
  ['item-in-section.md', '7: checklist item outside a step'],
  ['substep-outside-step.md', '3: substep outside a step'],
  ['empty-title.md', '5: empty step title'],
  ['invalid-anchor.md', '3: invalid anchor "Step_1" (use lowercase letters, digits and dashes)'],
  ['dependency-outside-step.md', '3: dependency line outside a step'],
  ['empty-item.md', '4: empty checklist item'],
];

for (const [name, expected] of malformed) {
  test(`malformed plan ${name} is refused with file, line and reason`, () => {
    // Arrange
    const text = fixture(name);

    // Act
    const err = parseError(text, `plans/${name}`);

    // Assert
    assert.equal(err.message, `plans/${name}:${expected}`);
    assert.equal(err.code, 'invalid_plan');
  });
}

test('a plan with no steps is refused at line 1 (the whole file is at fault), an empty one too', () => {
  // Arrange
  const text = fixture('no-steps.md');

  // Act
  const err = parseError(text, 'plans/no-steps.md');
  const empty = parseError('', 'plans/empty.md');

  // Assert
  assert.equal(err.line, 1);
  assert.equal(err.message, 'plans/no-steps.md:1: plan has no steps (a step is a "## Step N: Title" heading)');
  assert.equal(empty.line, 1);
  assert.match(empty.message, /^plans\/empty\.md:1: plan has no steps/);
});

test('a cycle through a substep counts its parent as needing it', () => {
  // Arrange
  const text = '## Step 1: A\n### Step 1.1: A1\n**Depends on:** #step-2\n## Step 2: B\n**Depends on:** #step-1\n';

  // Act
  const err = parseError(text);

  // Assert
  assert.equal(err.message, 'PLAN.md:1: dependency cycle: step-1 → step-1-1 → step-2 → step-1');
});

test('a step heading after a prose section has no parent for a substep', () => {
  // Arrange
  const text = '## Step 1: A\n## Notes\n### Step 1.1: A1\n';

  // Act
  const err = parseError(text);

  // Assert
  assert.equal(err.message, 'PLAN.md:3: substep outside a step');
});

test('readPlanFile names the display path when the file is missing', (t) => {
  // Arrange
  const dir = mkdtempSync(join(tmpdir(), 'sf-plan-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  // Act
  const act = () => readPlanFile(join(dir, 'missing.md'), 'docs/missing.md');

  // Assert
  assert.throws(
    act,
    (err: unknown) => err instanceof PlanError && err.message === 'docs/missing.md: cannot read plan: no such file',
  );
});

test('readPlanFile refuses a file that is not valid UTF-8 at the first line holding a bad byte', (t) => {
  // Arrange: lines end in \n, \r\n and \r (each counts once, as the parser counts them); é in UTF-8 is fine
  const dir = mkdtempSync(join(tmpdir(), 'sf-plan-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'latin1.md');
  writeFileSync(
    path,
    Buffer.concat([
      Buffer.from('# Plan: Caf\u00e9\n\r\n## Step 1: Ok\r'),
      Buffer.from('- [ ] Caf\xe9\n- [ ] \xff\n', 'latin1'),
    ]),
  );
  const first = join(dir, 'first.md');
  writeFileSync(first, Buffer.from('\xff', 'latin1'));

  // Act
  const act = () => readPlanFile(path, 'latin1.md');

  // Assert
  assert.throws(act, (err: unknown) => err instanceof PlanError && err.message === 'latin1.md:4: not valid UTF-8');
  assert.throws(
    () => readPlanFile(first, 'first.md'),
    (err: unknown) => err instanceof PlanError && err.message === 'first.md:1: not valid UTF-8',
  );
});

test('readPlanFile reads a UTF-8 file with a BOM', (t) => {
  // Arrange
  const dir = mkdtempSync(join(tmpdir(), 'sf-plan-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'bom.md');
  writeFileSync(path, `\uFEFF# Plan: Café\r\n\r\n## Step 1: Début\r\n- [ ] Écrire\r\n`);

  // Act
  const plan = readPlanFile(path, 'bom.md');

  // Assert
  assert.equal(plan.title, 'Café');
  assert.equal(plan.steps[0]?.title, 'Début');
  assert.equal(plan.steps[0]?.items[0]?.text, 'Écrire');
});
