import { test } from 'node:test';
import assert from 'node:assert/strict';
import { iso } from '../../src/core/clock.ts';

// iso() writes what toISOString() writes without V8 setting up its date cache (src/core/clock.ts).

test('iso() is toISOString() for every millisecond field, month end, leap day and year edge', () => {
  const dates = [
    0,
    Date.UTC(2026, 10, 27, 6, 20, 7, 127),
    Date.UTC(2024, 1, 29, 23, 59, 59, 999),
    Date.UTC(2100, 1, 28, 0, 0, 0, 1),
    Date.UTC(1999, 11, 31, 23, 59, 59, 990),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    -62167219200000, // 0000-01-01T00:00:00.000Z
  ];
  // A spread of instants from 1970 to 2200, each millisecond digit and hour seen.
  let t = 1;
  for (let i = 0; i < 5000; i++) {
    t = (t * 48271) % 2147483647;
    dates.push(Math.floor((t / 2147483647) * Date.UTC(2200, 0, 1)));
  }
  for (const ms of dates) assert.equal(iso(new Date(ms)), new Date(ms).toISOString(), String(ms));
});

test('outside years 0 to 9999 iso() is toISOString(): six-digit years, and an invalid date throws', () => {
  for (const ms of [Date.UTC(10000, 0, 1), -62167219200001, Date.UTC(-5, 3, 1)])
    assert.equal(iso(new Date(ms)), new Date(ms).toISOString());
  assert.throws(() => iso(new Date(NaN)), RangeError);
});
