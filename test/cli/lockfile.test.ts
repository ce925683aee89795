import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROJECT_ROOT } from '../helpers/gitRepo.ts';

// package-lock.json must be exactly what npm would write for package.json: a copy of the two files
// in a scratch directory (no node_modules, no install scripts, the registry only when npm's cache
// lacks something) must come back unchanged.
test('package-lock.json is in sync with package.json (npm install --package-lock-only changes nothing)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-lockfile-'));
  try {
    for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(PROJECT_ROOT, f), join(dir, f));
    const before = readFileSync(join(dir, 'package-lock.json'), 'utf8');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const r = spawnSync(
      npm,
      [
        'install',
        '--package-lock-only',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        '--loglevel=error',
      ],
      {
        cwd: dir,
        encoding: 'utf8',
        timeout: 120_000,
        env: { ...process.env, npm_config_update_notifier: 'false' },
      },
    );
    assert.equal(r.status, 0, `npm install --package-lock-only failed: ${r.error?.message ?? ''}${r.stderr}`);
    const after = readFileSync(join(dir, 'package-lock.json'), 'utf8');
    if (after !== before) {
      const a = before.split('\n');
      const b = after.split('\n');
      const first = b.findIndex((line, i) => line !== a[i]);
      assert.fail(
        `package-lock.json is out of sync with package.json (first difference at line ${first + 1}: ${JSON.stringify(a[first])} → ${JSON.stringify(b[first])}); run 'npm install --package-lock-only' and commit it`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
