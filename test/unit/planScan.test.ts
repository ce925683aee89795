import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  anchorSuffix,
  checkbox,
  dependsOn,
  fence,
  heading,
  isAnchor,
  isContinuation,
  kindLabel,
  listedAnchors,
  splitLines,
  withoutClosingHashes,
  withoutPlanPrefix,
} from '../../src/core/plan/scan.ts';

// Each scanner against the regular expression it stands for, on lines built from the characters
// that matter to those expressions (markdown marks, every kind of whitespace and line terminator,
// letters in both cases, look-alikes such as the Kelvin sign) and fragments of real plan lines.
const CHARS = [
  ' ',
  ' ',
  '\t',
  '\v',
  '\f',
  '\u00a0',
  '\u2003',
  '\u3000',
  '\ufeff',
  '\n',
  '\r',
  '\u2028',
  '\u2029',
  '#',
  '`',
  '~',
  '*',
  '-',
  '+',
  ',',
  ':',
  '[',
  ']',
  '{',
  '}',
  'x',
  'X',
  's',
  'S',
  'a',
  'z',
  '0',
  '9',
  '.',
  'é',
  '\u212a',
  '\ud83d\ude00',
];
const FRAGMENTS = [
  '**',
  '```',
  '~~~',
  '## ',
  '### ',
  '#######',
  '{#',
  '}',
  'Step 1',
  'plan',
  'Plan:',
  'PLAN :',
  'depends on',
  'Depends On',
  'DEPENDS ON',
  'task',
  'Tests',
  'checkpoint',
  'CHECKPOINTS',
  'tasK',
  '- [ ] ',
  '* [x] ',
  '+ [X]',
  '-[ ]',
  '  ',
  'step-1',
  '#a',
  'none',
  '\r\n',
  '**Depends on:**',
  '**depends on',
  '**Tasks:**',
  '**TEST',
  '**checkpoint',
  's',
  ':**',
  '**:',
  '{#a}',
  ' {#step-1} ',
];

function* lines(seed: number, count: number): Generator<string> {
  let state = seed >>> 0;
  const next = (n: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
  for (let i = 0; i < count; i++) {
    let line = '';
    const parts = next(8);
    for (let p = 0; p < parts; p++)
      line += next(3) === 0 ? (CHARS[next(CHARS.length)] as string) : (FRAGMENTS[next(FRAGMENTS.length)] as string);
    yield line;
  }
}

/** Many generated lines plus the hand-picked edge cases given. */
function cases(extra: readonly string[]): string[] {
  return [...extra, ...lines(7, 6000), ...lines(1234567, 6000)];
}

test('splitLines and listedAnchors split as their regular expressions do', () => {
  for (const s of cases(['a\r\nb\rc\nd', '\r\r\n\n', '', 'a,b  c,,#d ,', ' , '])) {
    assert.deepEqual(splitLines(s), s.split(/\r\n|\n|\r/), JSON.stringify(s));
    assert.deepEqual(
      listedAnchors(s),
      s.split(/[\s,]+/).filter((t) => t !== ''),
      JSON.stringify(s),
    );
  }
});

test('fence, heading and checkbox find what their regular expressions capture', () => {
  const fenceRe = /^\s*(`{3,}|~{3,})(.*)$/;
  const headingRe = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/;
  const checkboxRe = /^\s*[-*+]\s+\[([ xX])\](.*)$/;
  const edges = [
    '```',
    '  ~~~~ js',
    '``',
    '```a\u2028b',
    '\u2028```',
    '#',
    '   ### x',
    '    # x',
    '####### x',
    '#\tx #',
    '#x',
    '## \u2028',
    '- [ ] a',
    '-[ ] a',
    '  * [x]',
    '+\u00a0[X] b',
    '- [y] a',
    '- [ ]\u2029',
  ];
  for (const s of cases(edges)) {
    const f = fenceRe.exec(s);
    assert.deepEqual(fence(s), f ? { marker: f[1], info: f[2] } : null, JSON.stringify(s));
    const h = headingRe.exec(s);
    assert.deepEqual(heading(s), h ? { level: (h[1] as string).length, text: h[2] } : null, JSON.stringify(s));
    const c = checkboxRe.exec(s);
    assert.deepEqual(checkbox(s), c ? { box: c[1], text: c[2] } : null, JSON.stringify(s));
  }
});

test('the heading, title and anchor helpers rewrite and match as their regular expressions do', () => {
  const suffixRe = /\{#([^}]*)\}\s*$/;
  const edges = [
    'Title ##',
    'a # #',
    '  ##',
    '###',
    'x##',
    'a ## b',
    'a\u2028##',
    'Plan: x',
    'plan  :x',
    'PlanX',
    'pla',
    '\u212alan:',
    'Step 1 {#a}',
    '{#}',
    '{#a}{#b}',
    '{#a}} ',
    'x {#a} ',
    '{#a}x',
    '}',
    'a-b',
    '-a',
    'A',
    'a_b',
    'step-1-2',
  ];
  for (const s of cases(edges)) {
    assert.equal(withoutClosingHashes(s), s.replace(/(?:^|\s+)#+\s*$/, ''), JSON.stringify(s));
    assert.equal(withoutPlanPrefix(s), s.replace(/^plan\s*:/i, ''), JSON.stringify(s));
    const m = suffixRe.exec(s);
    assert.deepEqual(anchorSuffix(s), m ? { anchor: m[1], index: m.index } : null, JSON.stringify(s));
    assert.equal(isAnchor(s), /^[a-z0-9][a-z0-9-]*$/.test(s), JSON.stringify(s));
    assert.equal(isContinuation(s), /^(?: {2,}|\t)\s*\S/.test(s), JSON.stringify(s));
  }
});

test('dependsOn and kindLabel recognise the labels their regular expressions do, in any letter case', () => {
  const dependsRe = /^\*\*depends on:?\*\*:?(.*)$/i;
  const kindRe = /^\*\*(task|test|checkpoint)s?:?\*\*:?$/i;
  const edges = [
    '**Depends on:** #a, #b',
    '**depends on**: a',
    '**DEPENDS ON**',
    '**depends on:**\u2028a',
    '**depends  on:** a',
    '*depends on:**',
    '**Tasks:**',
    '**tests**:',
    '**TESTS:**',
    '**TaskS**',
    '**Checkpoint**',
    '**taskss**',
    '**tas\u212a:**',
    '**test:** x',
    '**TASK:**:',
  ];
  for (const s of cases(edges)) {
    for (const t of [s, s.trim()]) {
      assert.equal(dependsOn(t), dependsRe.exec(t)?.[1] ?? null, JSON.stringify(t));
      assert.equal(kindLabel(t), kindRe.exec(t)?.[1]?.toLowerCase() ?? null, JSON.stringify(t));
    }
  }
});
