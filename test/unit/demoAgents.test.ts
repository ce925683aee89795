import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { demoRoles } from '../../src/core/agents/demoAgents.ts';
import { runsEditorRuntime } from '../../src/core/runs/agentEnv.ts';
import { EnvironmentError, UsageError } from '../../src/core/errors.ts';

test('the demo agents: the runtime runs the stand-in on the context file, for every role or one', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-demo-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'standInAgent.cjs');
  writeFileSync(script, '');
  const argv = ['/opt/node/bin/node', script, '$SPRINGFIELD_CONTEXT_FILE'];
  assert.deepEqual(demoRoles('/opt/node/bin/node', script), { lisa: argv, ralph: argv, bart: argv });
  assert.deepEqual(demoRoles('/opt/node/bin/node', script, 'bart'), { bart: argv });
  assert.throws(
    () => demoRoles('/opt/node/bin/node', script, 'lovejoy'),
    (e: unknown) => e instanceof UsageError && /--role must be one of lisa, ralph, bart/.test(e.message),
  );
  assert.throws(
    () => demoRoles('/opt/node/bin/node', join(dir, 'gone.cjs')),
    (e: unknown) => e instanceof EnvironmentError && e.code === 'demo_agents_missing',
  );
});

test("an agent keeps ELECTRON_RUN_AS_NODE only when it runs the editor's own Electron", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-runtime-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const runtime = join(dir, 'code');
  writeFileSync(runtime, '');
  symlinkSync(runtime, join(dir, 'link'));
  assert.equal(runsEditorRuntime(runtime, runtime, true), true);
  assert.equal(runsEditorRuntime(join(dir, 'link'), runtime, true), true, 'the same file by another path');
  assert.equal(runsEditorRuntime(runtime, runtime, false), false, 'a plain Node needs nothing');
  assert.equal(runsEditorRuntime('claude', runtime, true), false);
  assert.equal(runsEditorRuntime(undefined, runtime, true), false);
});
