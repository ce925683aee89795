// Waves (docs/files.md, "Scheduling"): of epics whose files meet, which goes first. A chain takes
// two waves, so no epic waits behind one that itself waits; waves are kept while epics are under way,
// and an epic never goes before one that already changed, or is building, a file it touches. Pure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decide } from '../../src/core/scheduler/decide.ts';
import { assignWaves } from '../../src/core/scheduler/waves.ts';
import type { EpicFiles, EpicSnapshot } from '../../src/core/scheduler/types.ts';
import { FILES_CONFIG, oneStepEpic } from '../helpers/epicSnapshot.ts';

const NOW = new Date('2025-03-01T12:00:00.000Z');

/** sf-1 meets sf-2 on x.ts, sf-2 meets sf-3 on y.ts: a chain. */
const CHAIN = [
  oneStepEpic('sf-1', ['src/x.ts']),
  oneStepEpic('sf-2', ['src/x.ts', 'src/y.ts']),
  oneStepEpic('sf-3', ['src/y.ts']),
];

const waved = (epics: EpicSnapshot[], waves: Map<string, number>) =>
  epics.map((e) => (e.files ? { ...e, files: { ...e.files, wave: waves.get(e.id) ?? 0 } } : e));

const acts = (epics: EpicSnapshot[]) =>
  decide({ epics, runs: [] }, FILES_CONFIG, NOW).map((a) => `${a.kind} ${'epicId' in a ? a.epicId : ''}`);

test('a chain takes two waves: the two ends first, the middle after both', () => {
  const waves = assignWaves(CHAIN, new Map(), []);
  assert.deepEqual(Object.fromEntries(waves), { 'sf-1': 0, 'sf-2': 1, 'sf-3': 0 });
  // By age alone the youngest would wait behind the middle one, itself waiting for the oldest.
  assert.deepEqual(acts(CHAIN), ['run sf-1', 'wait sf-2', 'wait sf-3']);
  assert.deepEqual(acts(waved(CHAIN, waves)), ['run sf-1', 'run sf-3', 'wait sf-2']);
  const middle = decide({ epics: waved(CHAIN, waves), runs: [] }, FILES_CONFIG, NOW).find(
    (a) => 'epicId' in a && a.epicId === 'sf-2',
  );
  assert.equal(middle?.kind === 'wait' && middle.message, 'waiting: shares src/x.ts with sf-1 step-1');
});

test('waves are kept: when the first merges, the other two do not trade places', () => {
  const waves = assignWaves(CHAIN, new Map(), []);
  const [, middle, last] = CHAIN as [EpicSnapshot, EpicSnapshot, EpicSnapshot];
  // sf-1 merged and is no longer under way: given afresh by age, the middle one would now go first.
  assert.deepEqual(Object.fromEntries(assignWaves([middle, last], waves, [])), { 'sf-2': 1, 'sf-3': 0 });
  assert.deepEqual(Object.fromEntries(assignWaves([middle, last], new Map(), [])), { 'sf-2': 0, 'sf-3': 1 });
  // A restarted scheduler has no waves to keep: the one that already built the shared file goes first.
  const built = { ...last, files: { ...(last.files as EpicFiles), changed: ['src/y.ts'] } };
  assert.deepEqual(Object.fromEntries(assignWaves([middle, built], new Map(), [])), { 'sf-2': 1, 'sf-3': 0 });
});

test('a new epic goes after one that already changed, or is building, a file it touches', () => {
  const first = oneStepEpic('sf-1', ['src/a.ts'], { changed: ['src/x.ts'] });
  const kept = new Map([['sf-1', 0]]);
  assert.equal(assignWaves([first, oneStepEpic('sf-2', ['src/x.ts'])], kept, []).get('sf-2'), 1);
  assert.equal(
    assignWaves([oneStepEpic('sf-1', ['src/a.ts']), oneStepEpic('sf-2', ['src/a.ts'])], kept, []).get('sf-2'),
    1,
  );
  const building = [{ epicId: 'sf-1', files: ['src/b.ts'] }];
  assert.equal(
    assignWaves([oneStepEpic('sf-1', ['src/b.ts']), oneStepEpic('sf-2', ['src/b.ts'])], kept, building).get('sf-2'),
    1,
  );
  // Meeting nothing, it takes the first wave; meeting one that only plans to touch the file, the lowest free one.
  assert.equal(assignWaves([first, oneStepEpic('sf-2', ['src/z.ts'])], kept, []).get('sf-2'), 0);
  const later = new Map([['sf-1', 1]]);
  assert.equal(
    assignWaves([oneStepEpic('sf-1', ['src/a.ts']), oneStepEpic('sf-2', ['src/a.ts'])], later, []).get('sf-2'),
    0,
  );
});

test('globs meet as the files rule sees them, and an epic with no files known has no wave', () => {
  const epics = [
    oneStepEpic('sf-1', ['src/db/**']),
    oneStepEpic('sf-2', ['src/db/user.ts']),
    { ...oneStepEpic('sf-3', []), files: undefined },
  ];
  assert.deepEqual(Object.fromEntries(assignWaves(epics, new Map(), [])), { 'sf-1': 0, 'sf-2': 1 });
});
