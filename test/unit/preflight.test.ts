// The preflight's status commands (src/core/agents/preflight.ts) with real processes: a check that
// cannot decide passes, and a status command that hangs is ended with everything it started.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { preflight } from '../../src/core/agents/preflight.ts';

/** Gone: no such process, or a zombie waiting to be reaped. */
function gone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
}

async function until(ok: () => boolean, what: string): Promise<void> {
  // A bound on a hang only: ending a process group takes milliseconds.
  for (let i = 0; !ok(); i++) {
    assert.ok(i < 600, what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test(
  'a status command that hangs: the check passes, and the child it started ends with it',
  { skip: process.platform === 'win32' },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-preflight-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const pidFile = join(dir, 'child.pid');
    // Cursor Agent's check is `cursor-agent status`. This one starts a child that no longer holds its
    // output (the old check returned at its timeout and left such a child running), then hangs.
    const program = join(dir, 'cursor-agent');
    writeFileSync(program, `#!/bin/sh\nsleep 300 >/dev/null 2>&1 &\necho $! > "${pidFile}"\nexec sleep 300\n`);
    chmodSync(program, 0o755);
    // The timeout must fire after the child has started, however slowly this machine starts a shell.
    for (let seconds = 1; !existsSync(pidFile); seconds *= 2) {
      const env = { PATH: `${dir}:/usr/bin:/bin`, HOME: dir, SPRINGFIELD_PREFLIGHT_TIMEOUT: String(seconds) };
      const result = await preflight(['cursor-agent'], env, dir);
      assert.deepEqual(result, { reason: null, checked: `installed (${program}), logged in` }, 'undecided: passes');
    }
    const child = Number(readFileSync(pidFile, 'utf8'));
    await until(() => gone(child), `the status command's child (pid ${child}) was ended with it`);
  },
);

test('a status command that answers: its words decide', { skip: process.platform === 'win32' }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-preflight-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const program = join(dir, 'cursor-agent');
  writeFileSync(program, '#!/bin/sh\necho "Not logged in" >&2\nexit 1\n');
  chmodSync(program, 0o755);
  const result = await preflight(['cursor-agent'], { PATH: `${dir}:/usr/bin:/bin`, HOME: dir }, dir);
  assert.equal(result.reason, 'Cursor Agent is not logged in — run cursor-agent login');
});
