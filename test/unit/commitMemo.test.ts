// CommitMemo (src/core/git/commitMemo.ts): git's answers about commits named by their ids are kept;
// a name that moves (`main`, `HEAD`) is asked again every time, as is an answer that failed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CommitMemo } from '../../src/core/git/commitMemo.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

test('an answer about two commit ids is asked once; about a name, every time', async () => {
  const memo = new CommitMemo<string>();
  let asked = 0;
  const ask = async () => `answer ${(asked += 1)}`;
  assert.equal(await memo.get([A, B], ask), 'answer 1');
  assert.equal(await memo.get([A, B], ask), 'answer 1');
  assert.equal(await memo.get([B, A], ask), 'answer 2', 'the order of the commits is part of the question');
  assert.equal(await memo.get(['main', B], ask), 'answer 3');
  assert.equal(await memo.get(['main', B], ask), 'answer 4');
  assert.equal(await memo.get([A.slice(0, 12), B], ask), 'answer 5', 'an abbreviated id may grow ambiguous: not kept');
  assert.equal(await memo.get([A.slice(0, 12), B], ask), 'answer 6');
});

test('a failed answer (null) is not kept; past the limit the oldest answer goes first', async () => {
  const memo = new CommitMemo<string>(2);
  let asked = 0;
  assert.equal(await memo.get([A], async () => ((asked += 1), null)), null);
  assert.equal(await memo.get([A], async () => ((asked += 1), 'found')), 'found');
  assert.equal(asked, 2);
  await memo.get([B], async () => 'b');
  await memo.get([C], async () => 'c');
  assert.equal(await memo.get([A], async () => 'asked again'), 'asked again');
  assert.equal(await memo.get([C], async () => 'not asked'), 'c');
});
