// "filesAware" in .springfield/config.json (docs/files.md, "The switch"): on unless it says false.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filesAwareOf, parseRunConfig } from '../../src/core/runs/runConfig.ts';

test('files-aware scheduling is on by default, off with "filesAware": false, and anything else is refused in one line', () => {
  assert.equal(filesAwareOf(parseRunConfig({}, 'config.json')), true);
  assert.equal(filesAwareOf(parseRunConfig({ filesAware: true }, 'config.json')), true);
  assert.equal(filesAwareOf(parseRunConfig({ filesAware: false }, 'config.json')), false);
  assert.throws(
    () => parseRunConfig({ filesAware: 'no' }, 'config.json'),
    (e: unknown) =>
      e instanceof Error &&
      (e as { code?: string }).code === 'invalid_config' &&
      /^config\.json: filesAware: /.test(e.message) &&
      !e.message.includes('\n'),
  );
});
