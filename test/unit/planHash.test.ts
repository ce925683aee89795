import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeDrift, parsePlan, planHash, planStructure } from '../../src/core/plan/index.ts';

const BASE = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'plans', 'valid-full.md'), 'utf8');

function hashOf(text: string): string {
  return planHash(parsePlan(text, 'PLAN.md'));
}

function replaced(text: string, from: string, to: string): string {
  assert.ok(text.includes(from), `fixture does not contain ${JSON.stringify(from)}`);
  return text.replace(from, to);
}

function driftBetween(before: string, after: string): string[] {
  return describeDrift(planStructure(parsePlan(before, 'PLAN.md')), planStructure(parsePlan(after, 'PLAN.md')));
}

test('the structure holds title, anchors, parents, titles, deps and items but no checkmarks or lines', () => {
  // Arrange
  const plan = parsePlan(
    '# Plan: T\n## Step 1: A\n- [x] Do\n### Step 1.1: B\n**Depends on:** none\n**Tests:**\n- [ ] Check\n',
    'PLAN.md',
  );

  // Act
  const structure = planStructure(plan);

  // Assert
  assert.deepEqual(structure, {
    title: 'T',
    steps: [
      { anchor: 'step-1', parent: null, title: 'A', deps: [], items: [['task', 'Do']] },
      { anchor: 'step-1-1', parent: 'step-1', title: 'B', deps: [], items: [['test', 'Check']] },
    ],
  });
});

test('the hash is the sha256 hex of the structure', () => {
  // Arrange
  const plan = parsePlan(BASE, 'PLAN.md');

  // Act
  const hash = planHash(plan);

  // Assert
  assert.match(hash, /^[0-9a-f]{64}$/);
  assert.equal(hash, planHash(parsePlan(BASE, 'other/PLAN.md')));
});

const unchanged: readonly (readonly [string, (text: string) => string])[] = [
  ['ticking a box', (t) => replaced(t, '- [ ] Implement the client', '- [x] Implement the client')],
  ['unticking a box', (t) => replaced(t, '* [X] Per-request timeout', '* [ ] Per-request timeout')],
  [
    're-wrapping an item over two lines',
    (t) => replaced(t, '- [ ] Unit tests for the client', '- [ ] Unit tests\n    for   the client'),
  ],
  [
    'joining a wrapped item onto one line',
    (t) => replaced(t, 'from the\n  upstream service', 'from the upstream service'),
  ],
  ['adding blank lines', (t) => t.replaceAll('\n', '\n\n')],
  ['adding trailing whitespace', (t) => t.replaceAll('\n', '  \t\n')],
  ['switching to CRLF line endings', (t) => t.replaceAll('\n', '\r\n')],
  ['editing the Approach prose', (t) => replaced(t, 'Keep it small.', 'Keep it very small, and fast.')],
  ['editing the Constraints prose', (t) => replaced(t, 'No new dependencies.', 'Only one new dependency.')],
  ['editing prose inside a step', (t) => replaced(t, 'Prose inside a step is ignored.', 'Different prose.')],
  ['extra spaces inside a step title', (t) => replaced(t, 'Add cache {#cache}', 'Add    cache   {#cache}')],
  [
    'writing a derived anchor explicitly',
    (t) => replaced(t, '## Step 3: Wire it up', '## Step 3: Wire it up {#step-3}'),
  ],
];

for (const [name, edit] of unchanged) {
  test(`${name} does not change the hash`, () => {
    // Arrange
    const edited = edit(BASE);

    // Act
    const hash = hashOf(edited);

    // Assert
    assert.equal(hash, hashOf(BASE));
  });
}

const changed: readonly (readonly [string, (text: string) => string])[] = [
  ['adding a step', (t) => `${t}\n## Step 4: Document it\n`],
  [
    'removing a step',
    (t) =>
      replaced(
        t,
        '## Step 3: Wire it up\n**Depends on:** step-1, #cache\n**Depends on:** #step-1\n**Checkpoint:**\n- [ ] Smoke test passes\n',
        '',
      ),
  ],
  ['renaming a step', (t) => replaced(t, 'Add cache {#cache}', 'Add a cache {#cache}')],
  ['changing an anchor', (t) => replaced(t, '{#cache}', '{#add-cache}').replace('#cache', '#add-cache')],
  ['adding an item', (t) => replaced(t, '- [ ] Cache responses\n', '- [ ] Cache responses\n- [ ] Evict entries\n')],
  ['removing an item', (t) => replaced(t, '- [ ] Cache responses\n', '')],
  ['rewording an item', (t) => replaced(t, 'Cache responses', 'Cache all responses')],
  ['removing a dependency', (t) => replaced(t, '**Depends on:** #step-1-1\n', '')],
  [
    'changing an item kind',
    (t) => replaced(t, '**Test:**\n- [ ] Cache hit and miss', '**Checkpoint:**\n- [ ] Cache hit and miss'),
  ],
  ['changing the plan title', (t) => replaced(t, '# Plan: Add caching layer', '# Plan: Add a caching layer')],
  [
    'turning a substep into a step',
    (t) => replaced(t, '### Step 1.2: Timeouts\n**Depends on:** #step-1-1\n', '## Step 1.2: Timeouts\n'),
  ],
];

for (const [name, edit] of changed) {
  test(`${name} changes the hash`, () => {
    // Arrange
    const edited = edit(BASE);

    // Act
    const hash = hashOf(edited);

    // Assert
    assert.notEqual(hash, hashOf(BASE));
  });
}

test('adding a dependency changes the hash', () => {
  // Arrange
  const withoutDependency = `${BASE}\n## Step 4: Document it\n`;
  const withDependency = `${withoutDependency}**Depends on:** #cache\n`;

  // Act
  const hash = hashOf(withDependency);

  // Assert
  assert.notEqual(hash, hashOf(withoutDependency));
});

test('describeDrift is empty for an unchanged structure', () => {
  // Arrange
  const ticked = replaced(BASE, '- [ ] Implement the client', '- [x] Implement the client');

  // Act
  const drift = driftBetween(BASE, ticked);

  // Assert
  assert.deepEqual(drift, []);
});

test('describeDrift lists added and removed steps and a changed title', () => {
  // Arrange
  const before = '# Plan: Old\n## Step 1: A\n## Step 2: B\n';
  const after = '# Plan: New\n## Step 1: A\n## Step 3: C\n';

  // Act
  const drift = driftBetween(before, after);

  // Assert
  assert.deepEqual(drift, ['plan title changed: "Old" → "New"', 'step-2 removed', 'step-3 added']);
});

test('describeDrift lists title, dependency and item changes per step', () => {
  // Arrange
  const before =
    '## Step 1: A\n- [ ] Foo\n**Tests:**\n- [ ] Bar\n## Step 2: B\n**Depends on:** #step-1\n## Step 3: C\n';
  const after = '## Step 1: A\n- [ ] Foo\n- [ ] Baz\n## Step 2: Bee\n**Depends on:** #step-1, #step-3\n## Step 3: C\n';

  // Act
  const drift = driftBetween(before, after);

  // Assert
  assert.deepEqual(drift, [
    'step-1 task added: "Baz"',
    'step-1 test removed: "Bar"',
    'step-2 title changed: "B" → "Bee"',
    'step-2 dependencies changed: step-1 → step-1, step-3',
  ]);
});

test('describeDrift reports a changed kind, a new parent and reordering', () => {
  // Arrange
  const before = '## Step 1: A\n- [ ] One\n- [ ] Two\n## Step 2: B\n## Step 3: C\n- [ ] Check\n';
  const after = '## Step 1: A\n- [ ] Two\n- [ ] One\n### Step 3: C\n**Checkpoints:**\n- [ ] Check\n## Step 2: B\n';

  // Act
  const drift = driftBetween(before, after);

  // Assert
  assert.deepEqual(drift, [
    'step-1 tasks reordered',
    'step-3 parent changed: none → step-1',
    'step-3 task removed: "Check"',
    'step-3 checkpoint added: "Check"',
    'steps reordered',
  ]);
});

test('describeDrift shortens long item texts', () => {
  // Arrange
  const long = 'x'.repeat(100);
  const before = '## Step 1: A\n';
  const after = `## Step 1: A\n- [ ] ${long}\n`;

  // Act
  const drift = driftBetween(before, after);

  // Assert
  assert.deepEqual(drift, [`step-1 task added: "${'x'.repeat(59)}…"`]);
});
