import { test } from 'node:test';
import assert from 'node:assert/strict';
import { msUntilClearOfUtcMidnight } from '../helpers/utcDay.ts';

// The wait that keeps a test counting today's spend off UTC midnight (test/helpers/utcDay.ts).

test('a span that would cross UTC midnight waits until just past it; any other waits not at all', () => {
  const midnight = Date.UTC(2026, 11, 5);
  const minute = 60_000;
  assert.equal(msUntilClearOfUtcMidnight(10 * minute, midnight - 11 * minute), 0, '11 minutes left: no wait');
  assert.equal(msUntilClearOfUtcMidnight(10 * minute, midnight - 10 * minute), 10 * minute + 1000, 'exactly the span');
  assert.equal(msUntilClearOfUtcMidnight(10 * minute, midnight - 1), 1001, 'a millisecond before');
  assert.equal(msUntilClearOfUtcMidnight(10 * minute, midnight), 0, 'at midnight: the whole day ahead');
  assert.equal(msUntilClearOfUtcMidnight(10 * minute, Date.UTC(2026, 11, 5, 12)), 0, 'noon');
  const waited = midnight - 3 * minute + msUntilClearOfUtcMidnight(10 * minute, midnight - 3 * minute);
  assert.ok(waited > midnight && waited - midnight < 10 * minute, 'after the wait the span holds no midnight');
});
