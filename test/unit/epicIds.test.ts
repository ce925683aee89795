import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isEpicId, newEpicId, parsePriority } from '../../src/core/epics/index.ts';
import { RefusedError, UsageError } from '../../src/core/errors.ts';

/** A deterministic `random` returning bytes 0, 1, 2… in order, recording each requested size. */
function counter(sizes: number[] = []) {
  let next = 0;
  return (size: number): Uint8Array => {
    sizes.push(size);
    return Uint8Array.from({ length: size }, () => next++ & 0xff);
  };
}

test('a new id is sf- and 4 hex chars', () => {
  for (let i = 0; i < 50; i++) {
    const id = newEpicId(() => false);
    assert.match(id, /^sf-[0-9a-f]{4}$/);
    assert.ok(isEpicId(id));
  }
  assert.equal(
    newEpicId(() => false, counter()),
    'sf-0001',
  );
});

test('collisions grow the id to 5 then 6 hex chars', () => {
  const sizes: number[] = [];
  const four = newEpicId((id) => id.length === 7, counter(sizes));
  assert.match(four, /^sf-[0-9a-f]{5}$/);
  assert.deepEqual(sizes.slice(0, 5), [2, 2, 2, 2, 2]);
  assert.equal(sizes[5], 3);

  const six = newEpicId((id) => id.length < 9, counter());
  assert.match(six, /^sf-[0-9a-f]{6}$/);
});

test('a collision at one length retries with fresh random bytes', () => {
  const seen: string[] = [];
  const id = newEpicId((candidate) => {
    seen.push(candidate);
    return seen.length < 3;
  }, counter());
  assert.deepEqual(seen, ['sf-0001', 'sf-0203', 'sf-0405']);
  assert.equal(id, 'sf-0405');
});

test('throws when every length collides', () => {
  let calls = 0;
  assert.throws(
    () =>
      newEpicId(() => {
        calls++;
        return true;
      }, counter()),
    (err: unknown) => {
      assert.ok(err instanceof RefusedError);
      assert.equal(err.code, 'epic_id_exhausted');
      return true;
    },
  );
  assert.ok(calls >= 6);
});

test('isEpicId', () => {
  for (const ok of ['sf-a3f8', 'sf-0000', 'sf-abcde', 'sf-123456']) assert.ok(isEpicId(ok), ok);
  for (const bad of ['sf-a3f', 'sf-1234567', 'SF-a3f8', 'sf-A3F8', 'sf-g123', 'xsf-a3f8', 'sf-a3f8 ']) {
    assert.ok(!isEpicId(bad), bad);
  }
});

test('parsePriority accepts P0-P3 case-insensitively', () => {
  assert.equal(parsePriority('P0'), 'P0');
  assert.equal(parsePriority('p3'), 'P3');
  for (const bad of ['P4', '1', 'high', '', 'P-1']) {
    assert.throws(
      () => parsePriority(bad),
      (err: unknown) => {
        assert.ok(err instanceof UsageError);
        assert.equal(err.code, 'invalid_priority');
        assert.match(err.message, /P0, P1, P2, P3/);
        return true;
      },
    );
  }
});
