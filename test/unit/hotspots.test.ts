// Hotspots don't serialize (docs/files.md): files whose conflicts resolve mechanically — the built-in
// kinds and the config's `mergeable` and `regenerate` globs — overlap nothing in files-aware scheduling.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hotspotsOf } from '../../src/core/orchestrate/filesAware.ts';
import { decide } from '../../src/core/scheduler/decide.ts';
import { withoutHotspots } from '../../src/core/scheduler/filesRule.ts';
import type { EpicFiles, EpicSnapshot } from '../../src/core/scheduler/types.ts';
import { DEFAULT_RUN_CONFIG } from '../../src/core/runs/runConfig.ts';
import { FILES_CONFIG, oneStepEpic } from '../helpers/epicSnapshot.ts';

const NOW = new Date('2025-03-01T12:00:00.000Z');

const kinds = (epics: EpicSnapshot[]) =>
  decide({ epics, runs: [] }, FILES_CONFIG, NOW).map((a) => `${a.kind} ${'epicId' in a ? a.epicId : ''}`);

test('steps sharing only hotspots run side by side; sharing a real file still waits', () => {
  const hotspot = hotspotsOf({
    ...DEFAULT_RUN_CONFIG,
    mergeable: ['docs/index.md'],
    regenerate: { 'gen/**': ['gen'] },
  });
  const shared = ['CHANGELOG.md', 'package-lock.json', 'Cargo.toml', 'docs/index.md', 'gen/api.ts'];
  const epics = [oneStepEpic('sf-1', ['src/a.ts', ...shared]), oneStepEpic('sf-2', ['src/b.ts', ...shared])];
  assert.deepEqual(kinds(epics), ['run sf-1', 'wait sf-2'], 'without the hotspot rule the second waits');
  const relieved = epics.map((e) => ({ ...e, files: withoutHotspots(e.files as EpicFiles, hotspot) }));
  assert.deepEqual(kinds(relieved), ['run sf-1', 'run sf-2']);
  const real = [oneStepEpic('sf-1', ['src/a.ts', 'CHANGELOG.md']), oneStepEpic('sf-2', ['src/a.ts', 'CHANGELOG.md'])];
  assert.deepEqual(kinds(real.map((e) => ({ ...e, files: withoutHotspots(e.files as EpicFiles, hotspot) }))), [
    'run sf-1',
    'wait sf-2',
  ]);
});

test('what counts as a hotspot: built-in kinds and configured globs; a glob naming more is kept', () => {
  const hotspot = hotspotsOf({ ...DEFAULT_RUN_CONFIG, mergeable: ['src/routes.ts'] });
  for (const f of ['CHANGELOG.md', 'web/yarn.lock', 'go.sum', 'pyproject.toml', 'package.json', 'src/routes.ts'])
    assert.equal(hotspot(f), true, f);
  for (const f of ['src/a.ts', 'README.md', 'docs/index.md']) assert.equal(hotspot(f), false, f);
  const files = withoutHotspots(
    {
      openSteps: { 'step-1': ['src/**', 'CHANGELOG.md'] },
      changed: ['CHANGELOG.md', 'src/a.ts'],
      createdAt: '',
      conflictsWith: [
        { epicId: 'sf-2', files: ['CHANGELOG.md'] },
        { epicId: 'sf-3', files: ['CHANGELOG.md', 'src/a.ts'] },
        { epicId: 'sf-4', files: [] },
      ],
    },
    hotspot,
  );
  assert.deepEqual(files.openSteps, { 'step-1': ['src/**'] });
  assert.deepEqual(files.changed, ['src/a.ts']);
  assert.deepEqual(files.conflictsWith, [
    { epicId: 'sf-3', files: ['src/a.ts'] },
    { epicId: 'sf-4', files: [] },
  ]);
});
