// Conflict ahead compares what each epic changed (issue 36), in real git repositories: an epic that
// left main after main changed a file does not conflict with another epic over that file (the other
// epic's conflict is with main), and the scheduler's forecast forgets a pair once either side merges or moves.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConflictForecast } from '../../src/core/orchestrate/conflictForecast.ts';
import { conflictsAhead } from '../../src/core/orchestrate/conflictsAhead.ts';
import type { EpicSnapshot } from '../../src/core/scheduler/types.ts';
import { makeRepo, type Repo } from '../helpers/gitRepo.ts';

function commitOn(repo: Repo, branch: string, files: Record<string, string>, message: string): void {
  repo.git(['checkout', '-q', branch]);
  for (const [path, text] of Object.entries(files)) writeFileSync(join(repo.root, path), text);
  repo.git(['commit', '-qam', message]);
  repo.git(['checkout', '-q', 'main']);
}

/** "Add caching" (sf-a) left main before main changed src/client.ts; "Loyalty points" (sf-b) left it after. */
function caching(t: { after: (fn: () => void) => void }): Repo {
  const repo = makeRepo({ files: { 'src/client.ts': 'base\n', 'src/points.ts': 'p\n' } });
  t.after(() => repo.cleanup());
  repo.git(['branch', 'springfield/sf-a', 'main']);
  commitOn(repo, 'springfield/sf-a', { 'src/client.ts': 'base\ncache\n' }, 'cache');
  writeFileSync(join(repo.root, 'src/client.ts'), 'base\nretry\n');
  repo.git(['commit', '-qam', 'main: retry']);
  repo.git(['branch', 'springfield/sf-b', 'main']);
  commitOn(repo, 'springfield/sf-b', { 'src/points.ts': 'p\nloyalty\n' }, 'loyalty');
  return repo;
}

const snapshot = (...ids: string[]) => ids.map((id) => ({ id, status: 'in_progress' }) as EpicSnapshot);
const shown = (m: ReadonlyMap<string, readonly { with: string; files: readonly string[] }[]>) =>
  Object.fromEntries([...m].map(([id, cs]) => [id, cs.map((c) => `${c.with}:${c.files.join(',')}`)]));

test("an inherited change of main is main's conflict, not the other epic's", async (t) => {
  const repo = caching(t);
  assert.deepEqual(await conflictsAhead(repo.root, 'sf-a', ['sf-b']), [{ with: 'main', files: ['src/client.ts'] }]);
  assert.deepEqual(await conflictsAhead(repo.root, 'sf-b', ['sf-a']), []);

  commitOn(repo, 'springfield/sf-b', { 'src/client.ts': 'base\nretry\npoints\n' }, 'loyalty: client');
  assert.deepEqual(
    await conflictsAhead(repo.root, 'sf-b', ['sf-a']),
    [{ with: 'sf-a', files: ['src/client.ts'] }],
    'both changed the file: a conflict between them',
  );
});

test('the forecast drops a pair when the other epic merges or either branch moves, and tests again when main moves', async (t) => {
  const repo = caching(t);
  commitOn(repo, 'springfield/sf-b', { 'src/client.ts': 'base\nretry\npoints\n' }, 'loyalty: client');
  const forecast = new ConflictForecast(repo.root, () => undefined);
  await forecast.start(snapshot('sf-a', 'sf-b'));
  assert.deepEqual(shown(forecast.all), {
    'sf-a': ['main:src/client.ts', 'sf-b:src/client.ts'],
    'sf-b': ['sf-a:src/client.ts'],
  });

  commitOn(repo, 'springfield/sf-a', { 'src/client.ts': 'base\ncache\nmore\n' }, 'cache: more');
  await forecast.start(snapshot('sf-a', 'sf-b'));
  assert.deepEqual(shown(forecast.all), { 'sf-a': [], 'sf-b': [] }, 'sf-a moved: what was tested of it is stale');
  await forecast.after('sf-a');
  assert.deepEqual(shown(forecast.all), {
    'sf-a': ['main:src/client.ts', 'sf-b:src/client.ts'],
    'sf-b': ['sf-a:src/client.ts'],
  });

  // sf-b merges (main moves to its tip): it is no longer under way, and sf-a is tested against the new main.
  repo.git(['merge', '-q', '--ff-only', 'springfield/sf-b']);
  await forecast.start(snapshot('sf-a'));
  assert.deepEqual(shown(forecast.all), { 'sf-a': ['main:src/client.ts'] });
});
