// Trying Springfield without an agent subscription: `springfield agents use demo` writes the demo agents
// (the stand-in agent bundled as dist/standInAgent.cjs, run by this CLI's runtime) for every role, and
// `orchestrate --watch --until-idle` in a fresh repository takes a new epic to a plan waiting for approval.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  assertFails,
  assertOk,
  cleanEnv,
  ensureCli,
  makeRepo,
  PROJECT_ROOT,
  runCli,
  runJson,
} from '../helpers/gitRepo.ts';

ensureCli();

const STAND_IN = join(PROJECT_ROOT, 'dist', 'standInAgent.cjs');

interface Config {
  roles: Record<string, string[]>;
  usage?: Record<string, string>;
}

test(
  'agents use demo writes the stand-in for every role, and the scheduler takes an epic to a proposed plan with it',
  { timeout: 120_000 },
  (t) => {
    const repo = makeRepo();
    t.after(() => repo.cleanup());
    const used = assertOk<{ preset: string; created: boolean; allowed: boolean; roles: Record<string, string[]> }>(
      runJson(repo.root, ['agents', 'use', 'demo'], { PATH: '/usr/bin:/bin' }),
    );
    assert.deepEqual(
      [used.preset, used.created, used.allowed],
      ['demo', true, true],
      'no CLI on PATH is needed, and what was written counts as allowed',
    );
    const config = JSON.parse(readFileSync(join(repo.root, '.springfield', 'config.json'), 'utf8')) as Config;
    for (const role of ['lisa', 'ralph', 'bart'])
      assert.deepEqual(config.roles[role], [process.execPath, STAND_IN, '$SPRINGFIELD_CONTEXT_FILE'], role);
    assert.equal(config.usage, undefined, 'the demo agents report no usage');

    const epic = assertOk<{ id: string }>(
      runJson(repo.root, ['epic', 'create', 'Greeting command', '--brief', 'Print a friendly greeting.']),
    ).id;
    const r = runCli(repo.root, ['orchestrate', '--watch', '--until-idle', '--interval', '1']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout + r.stderr, /waiting for a person's approval/);
    const shown = assertOk<{ versions: { status: string }[]; version: { body: string } }>(
      runJson(repo.root, ['plan', 'show', epic]),
    );
    assert.deepEqual(
      shown.versions.map((v) => v.status),
      ['proposed'],
    );
    assert.match(
      shown.version.body,
      /^# Plan: Greeting command$/m,
      "the stand-in Lisa titled the prompt's example plan for the epic",
    );
    const runs = assertOk<{ runs: { role: string; status: string }[] }>(
      runJson(repo.root, ['runs', '--epic', epic]),
    ).runs;
    assert.deepEqual(
      runs.map((x) => [x.role, x.status]),
      [['lisa', 'succeeded']],
    );
  },
);

test('agents lists the demo agents; agents use demo replaces a preset, drops its usage reader and refuses a bad role', (t) => {
  const repo = makeRepo();
  t.after(() => repo.cleanup());
  const listed = runCli(repo.root, ['agents'], { PATH: '/usr/bin:/bin' });
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(
    listed.stdout,
    /● demo +Demo agents \(no model; they follow the plan mechanically\) · .*dist\/standInAgent\.cjs/,
  );
  assert.equal(
    assertOk<{ demo: { script: string; found: boolean } }>(runJson(repo.root, ['agents'], { PATH: '/usr/bin:/bin' }))
      .demo.script,
    STAND_IN,
  );

  runJson(repo.root, ['agents', 'use', 'claude'], { PATH: '/usr/bin:/bin' });
  const one = runCli(repo.root, ['agents', 'use', 'demo', '--role', 'ralph'], { PATH: '/usr/bin:/bin' });
  assert.equal(one.code, 0, one.stderr);
  assert.equal(one.stderr, '', 'no warning: nothing to install');
  assert.match(
    one.stdout,
    /Updated .*config\.json: ralph → Demo agents \(no model; they follow the plan mechanically\)/,
  );
  const config = JSON.parse(readFileSync(join(repo.root, '.springfield', 'config.json'), 'utf8')) as Config;
  assert.equal(config.roles.ralph?.[1], STAND_IN);
  assert.equal(config.roles.lisa?.[0], 'claude', 'the other roles are kept');
  assert.deepEqual(config.usage, { lisa: 'claude', bart: 'claude' }, "Ralph's usage reader is gone");

  const before = readFileSync(join(repo.root, '.springfield', 'config.json'), 'utf8');
  assert.match(
    assertFails(runJson(repo.root, ['agents', 'use', 'demo', '--role', 'lovejoy']), 2, 'bad_option').message,
    /--role must be one of lisa, ralph, bart, got 'lovejoy'/,
  );
  assert.equal(readFileSync(join(repo.root, '.springfield', 'config.json'), 'utf8'), before, 'nothing written');
});

test('a CLI without the stand-in beside it says so in one line and writes nothing', (t) => {
  const repo = makeRepo();
  const copy = mkdtempSync(join(tmpdir(), 'sf-no-demo-'));
  t.after(() => {
    repo.cleanup();
    rmSync(copy, { recursive: true, force: true });
  });
  cpSync(join(PROJECT_ROOT, 'dist'), join(copy, 'dist'), {
    recursive: true,
    filter: (src) => !src.endsWith('standInAgent.cjs'),
  });
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'));
  const r = spawnSync(process.execPath, [join(copy, 'dist', 'cli.cjs'), 'agents', 'use', 'demo', '--json'], {
    cwd: repo.root,
    encoding: 'utf8',
    env: cleanEnv(),
  });
  const result = { code: r.status, stdout: r.stdout, stderr: r.stderr, json: <T>() => JSON.parse(r.stdout) as T };
  assert.match(
    assertFails(result, 3, 'demo_agents_missing').message,
    /^the demo agents are not installed: .*\/sf-no-demo-[^/]+\/dist\/standInAgent\.cjs is missing \(npm run build makes it\)$/,
  );
  assert.equal(existsSync(join(repo.root, '.springfield', 'config.json')), false);
});
