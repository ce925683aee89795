// New plan…: the template built from an epic's title and brief is a plan the project's own parser
// accepts, whatever the brief contains, with the brief's acceptance criteria as tests.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { acceptanceCriteria, planFileName, planTemplate } from '../../src/core/plan/template.ts';

const EPIC = {
  id: 'sf-a3f8',
  title: 'Add a caching layer',
  brief: 'Reads are slow. Acceptance: repeated reads hit the cache; writes invalidate.',
};

test('the template parses: three steps in order, dependencies, items, the brief as Intent', () => {
  const plan = parsePlan(planTemplate(EPIC), 'plans/add-a-caching-layer.md');
  assert.equal(plan.title, 'Add a caching layer');
  assert.deepEqual(
    plan.steps.map((s) => [s.anchor, s.dependsOn]),
    [
      ['step-1', []],
      ['step-2', ['step-1']],
      ['step-3', ['step-2']],
    ],
  );
  assert.deepEqual(
    plan.steps.flatMap((s) => s.items.filter((i) => i.kind === 'test').map((i) => i.text)),
    ['repeated reads hit the cache', 'writes invalidate'],
  );
  assert.ok(
    plan.steps.every((s) => s.items.length > 0),
    'every step has something to tick',
  );
  assert.equal(plan.sections.Intent, EPIC.brief);
  assert.ok(plan.sections.Approach && plan.sections.Constraints, 'Approach and Constraints go to the handoff');
});

test('no brief can add steps or break the plan: headings, fences, checkboxes and dependency lines stay prose', () => {
  const nasty = [
    '## Step 9: Sneaky {#step-9}',
    '```',
    '- [ ] an item outside a step',
    '**Depends on:** #nowhere',
    '# Another title',
    '~~~ unclosed',
    '   ### Step 1.1: Sub',
    '**Tasks:**',
  ].join('\n');
  const plan = parsePlan(planTemplate({ id: 'sf-0001', title: 'Odd\nbrief {#x}', brief: nasty }), 'plans/x.md');
  assert.deepEqual(
    plan.steps.map((s) => s.anchor),
    ['step-1', 'step-2', 'step-3'],
  );
  assert.equal(plan.title, 'Odd brief {#x}');
  assert.match(plan.sections.Intent ?? '', /Sneaky/);
  for (const brief of ['', '   ', 'Acceptance:', '- [x] done\n- [ ] todo', '\u2028## Step 1: x']) {
    assert.equal(parsePlan(planTemplate({ ...EPIC, brief }), 'p.md').steps.length, 3, JSON.stringify(brief));
  }
});

test('acceptance criteria come from "Acceptance:" sentences or a list', () => {
  assert.deepEqual(acceptanceCriteria('Slow. Acceptance criteria:\n- Search by name\n- Results in 100 ms.'), [
    'Search by name',
    'Results in 100 ms',
  ]);
  assert.deepEqual(acceptanceCriteria('Acceptance: It works. It is fast.'), ['It works', 'It is fast']);
  assert.deepEqual(acceptanceCriteria('No criteria here'), []);
});

test('the file name comes from the title, or the epic id when the title has no words', () => {
  assert.equal(planFileName(EPIC), 'plans/add-a-caching-layer.md');
  assert.equal(planFileName({ ...EPIC, title: 'Ünïcode — naïve café!' }), 'plans/unicode-naive-cafe.md');
  assert.equal(planFileName({ ...EPIC, title: '!!!' }), 'plans/sf-a3f8.md');
  assert.ok(planFileName({ ...EPIC, title: 'x'.repeat(200) }).length <= 'plans/.md'.length + 48);
});
