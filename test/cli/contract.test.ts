import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const script = join(root, '..', 'shared', 'conformance', 'cli-contract.sh');

test(
  'the shared CLI contract check holds against the built CLI',
  { skip: !existsSync(script) && 'shared/conformance is not beside this checkout' },
  () => {
    const run = spawnSync('bash', [script], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
    });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /cli contract: (\d+)\/\1 hold/);
  },
);
