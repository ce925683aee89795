// The additive rule of the conflicts that resolve themselves (src/core/git/mergeKinds.ts): both sides'
// insertions kept when that is exact, a real conflict when it is not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveHunk } from '../../src/core/git/mergeKinds.ts';

const additive = (ours: string[], theirs: string[]) => resolveHunk('src/registry.js', { base: [], ours, theirs });

test('one-line entries: both kept, ours first; an entry both sides added is kept once', () => {
  assert.deepEqual(additive(["  'gamma',"], ["  'delta',"])?.lines, ["  'gamma',", "  'delta',"]);
  assert.deepEqual(additive(["  'gamma',", "  'delta',"], ["  'delta',"])?.lines, ["  'gamma',", "  'delta',"]);
});

test('multi-line blocks: two different ones are both kept whole, punctuation lines and all', () => {
  const a = ['  {', "    name: 'a',", '  },'];
  const b = ['  {', "    name: 'b',", '  },'];
  assert.deepEqual(additive(a, b)?.lines, [...a, ...b]);
});

test('the same block added by both is kept once', () => {
  const a = ['  {', "    name: 'a',", '  },'];
  assert.deepEqual(additive(['  x,', ...a], a)?.lines, ['  x,', ...a]);
});

test('blocks that partly overlap are a real conflict, never half-merged', () => {
  const a = ['  {', "    name: 'a',", '    size: 1,', '  },'];
  const b = ['  {', "    name: 'a',", '    size: 2,', '  },'];
  assert.equal(additive(a, b), null);
});
