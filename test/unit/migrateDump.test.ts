// migrate's id map and canonical dump (docs/postgres-design.md, "springfield migrate: to PostgreSQL and back"), on rows as both backends hand them
// over: the same state under other ids, another time spelling and another JSON key order dumps to the
// same text; ids in event data (a retrospective's failed runs included) follow their rows; a row that
// differs is named by table, row and column.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalDump, firstDifference } from '../../src/core/store/migrate/dump.ts';
import { renumber } from '../../src/core/store/migrate/renumber.ts';
import { emptySnapshot, type Snapshot } from '../../src/core/store/migrate/tables.ts';

function state(
  runIds: [number, number],
  signalId: number,
  eventIds: [number, number, number],
  at: string,
  data: (run: number) => Record<string, unknown>,
): Snapshot {
  const s = emptySnapshot();
  s.epics.push({ id: 'sf-1a2b', title: 'E', status: 'done', created_at: at, updated_at: at });
  s.runs.push(
    { id: runIds[0], epic_id: 'sf-1a2b', role: 'ralph', command: ['claude', '-p', 'x'], started_at: at },
    { id: runIds[1], epic_id: 'sf-1a2b', role: 'bart', command: ['x'], started_at: at },
  );
  s.verifications.push({
    id: 7,
    run_id: runIds[1],
    command: 'npm test',
    verdict: 'pass',
    duration_ms: 3,
    created_at: at,
  });
  s.signals.push({ id: signalId, epic_id: 'sf-1a2b', type: 'pass', summary: 'ok', created_at: at, status: 'applied' });
  s.signal_locations.push({ id: 1, signal_id: signalId, file: 'a.ts', line: 2 });
  s.events.push(
    { id: eventIds[0], at, entity: 'run', action: 'start', data: { run_id: runIds[0], role: 'ralph' } },
    { id: eventIds[1], at, entity: 'signal', action: 'record', data: { signal_id: signalId, locations: 1 } },
    { id: eventIds[2], at, entity: 'epic', action: 'retrospective', data: data(runIds[1]) },
  );
  return s;
}

test('the same state under other ids, time spellings and key orders dumps to the same text; references follow their rows', () => {
  const sqlite = state([1, 2], 1, [1, 2, 3], '2026-05-20T10:14:03.118Z', (run) => ({
    epic_id: 'sf-1a2b',
    failed_runs: [{ id: run, role: 'bart' }],
  }));
  const postgres = state([5003, 5001], 9000, [71, 72, 73], '2026-05-20T12:14:03.118+02:00', (run) => ({
    failed_runs: [{ role: 'bart', id: run }],
    epic_id: 'sf-1a2b',
  }));
  // 5003 > 5001: the first run (rank 1) is 5001 here, so the runs swap roles and the dumps must differ…
  assert.notEqual(canonicalDump(sqlite).sha256, canonicalDump(postgres).sha256);
  // …and agree once the ids keep the order.
  const ordered = state([5001, 5003], 9000, [71, 72, 73], '2026-05-20T12:14:03.118+02:00', (run) => ({
    failed_runs: [{ role: 'bart', id: run }],
    epic_id: 'sf-1a2b',
  }));
  assert.equal(canonicalDump(ordered).text, canonicalDump(sqlite).text);
  assert.equal(firstDifference(canonicalDump(sqlite), canonicalDump(ordered), 'SQLite', 'PostgreSQL'), null);

  const copy = renumber(sqlite, (table, n) => Array.from({ length: n }, (_, i) => (table === 'runs' ? 300 : 100) + i));
  assert.deepEqual(
    copy.snapshot.runs.map((r) => r.id),
    [300, 301],
  );
  assert.equal(copy.snapshot.verifications[0]?.run_id, 301);
  assert.equal(copy.snapshot.signal_locations[0]?.signal_id, 100);
  assert.deepEqual(
    copy.snapshot.events.map((e) => e.data),
    [
      { run_id: 300, role: 'ralph' },
      { signal_id: 100, locations: 1 },
      { epic_id: 'sf-1a2b', failed_runs: [{ id: 301, role: 'bart' }] },
    ],
  );
  assert.equal(canonicalDump(copy.snapshot).text, canonicalDump(sqlite).text);
});

test('an id in event data whose row is gone becomes null; a dangling reference in a column is reported', () => {
  const s = state([1, 2], 1, [1, 2, 3], '2026-05-20T10:14:03.118Z', () => ({ failed_runs: [{ id: 99 }] }));
  s.events.push({
    id: 4,
    at: '2026-05-20T10:14:03.118Z',
    entity: 'item',
    action: 'update',
    data: { item_id: 12, text: 'gone' },
  });
  s.verifications.push({
    id: 8,
    run_id: 77,
    command: 'x',
    verdict: 'fail',
    duration_ms: 1,
    created_at: '2026-05-20T10:14:03.118Z',
  });
  const r = renumber(s, (_t, n) => Array.from({ length: n }, (_, i) => i + 1));
  assert.equal(r.eventIdsCleared, 2);
  assert.deepEqual(
    [r.snapshot.events[2]?.data, r.snapshot.events[3]?.data],
    [{ failed_runs: [{ id: null }] }, { item_id: null, text: 'gone' }],
  );
  assert.deepEqual(r.dangling, ['verifications 8: run_id 77 names no row of runs']);
});

test('the first difference names the table, the row by its key, and the column; a missing row names the side', () => {
  const a = state([1, 2], 1, [1, 2, 3], '2026-05-20T10:14:03.118Z', () => ({}));
  const b = state([1, 2], 1, [1, 2, 3], '2026-05-20T10:14:03.118Z', () => ({}));
  (b.runs[1] as { role: string }).role = 'lisa';
  assert.equal(
    firstDifference(canonicalDump(a), canonicalDump(b), 'SQLite', 'PostgreSQL'),
    'table runs, row 2 (rank 2): role is "bart" in SQLite and "lisa" in PostgreSQL',
  );
  b.runs[1] = { ...a.runs[1] };
  b.signal_locations.pop();
  assert.equal(
    firstDifference(canonicalDump(a), canonicalDump(b), 'SQLite', 'PostgreSQL'),
    'table signal_locations, row 1 (signal_id 1, rank 1) is missing in PostgreSQL',
  );
});
