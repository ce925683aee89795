// `springfield agents` (which CLIs are on PATH, with versions read from their packages) and
// `springfield agents use` (role commands into .springfield/config.json, safely).
import assert from 'node:assert/strict';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { AGENT_PRESETS, kickoff } from '../../src/core/runs/presets.ts';
import { assertFails, assertOk, makeRepo, planningWorktree, type Repo } from '../helpers/gitRepo.ts';
import { runCli, runJson } from '../helpers/cliInProcess.ts';
import { AGENT_BIN } from '../helpers/realAgents.ts';

interface Listed {
  presets: {
    id: string;
    found: boolean;
    path: string | null;
    version: string | null;
    roles: string[];
    commands: Record<string, string[]>;
  }[];
}

/** A fake npm install of `claude` 9.9.9 and a Cursor-style versioned install, both on their own PATH dir. */
function fakeInstalls(repo: Repo): string {
  const pkg = join(repo.tmp, 'npm', 'node_modules', '@anthropic-ai', 'claude-code');
  mkdirSync(join(pkg, 'bin'), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: '@anthropic-ai/claude-code', version: '9.9.9' }));
  writeFileSync(join(pkg, 'bin', 'claude.js'), '#!/bin/sh\nexit 0\n');
  chmodSync(join(pkg, 'bin', 'claude.js'), 0o755);
  const cursor = join(repo.tmp, 'cursor', 'versions', '2026.01.02-abc', 'cursor-agent');
  mkdirSync(join(cursor, '..'), { recursive: true });
  writeFileSync(cursor, '#!/bin/sh\nexit 0\n');
  chmodSync(cursor, 0o755);
  const bin = join(repo.tmp, 'bin');
  mkdirSync(bin);
  symlinkSync(join(pkg, 'bin', 'claude.js'), join(bin, 'claude'));
  symlinkSync(cursor, join(bin, 'cursor-agent'));
  writeFileSync(join(bin, 'codex'), 'not executable');
  return bin;
}

test('agents lists every preset, which CLIs are on PATH and their versions (read from their packages)', async (t) => {
  const repo = makeRepo();
  t.after(() => repo.cleanup());
  const bin = fakeInstalls(repo);
  const r = assertOk<Listed>(await runJson(repo.root, ['agents'], { PATH: `${bin}:/usr/bin:/bin` }));
  assert.deepEqual(
    r.presets.map((p) => p.id),
    AGENT_PRESETS.map((p) => p.id),
  );
  const byId = new Map(r.presets.map((p) => [p.id, p]));
  assert.deepEqual([byId.get('claude')?.found, byId.get('claude')?.version], [true, '9.9.9']);
  assert.deepEqual([byId.get('cursor')?.found, byId.get('cursor')?.version], [true, '2026.01.02-abc']);
  assert.equal(byId.get('codex')?.found, false, 'a file that is not executable is not a CLI');
  assert.equal(byId.get('gemini')?.found, false);
  assert.deepEqual(byId.get('aider')?.roles, ['ralph']);
  const text = await runCli(repo.root, ['agents'], { PATH: `${bin}:/usr/bin:/bin` });
  assert.match(text.stdout, /● claude +Claude Code .*found .*\/bin\/claude, version 9\.9\.9/);
  assert.match(text.stdout, /○ gemini +Gemini CLI .*not on PATH \(install: npm install -g @google\/gemini-cli\)/);
});

test('agents use writes the role commands, keeps other settings, and refuses what it must not touch', async (t) => {
  const repo = makeRepo();
  t.after(() => repo.cleanup());
  const config = join(repo.root, '.springfield', 'config.json');
  const created = await runJson(repo.root, ['agents', 'use', 'claude'], { PATH: '/usr/bin:/bin' });
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stderr, /warning: claude is not on PATH yet: npm install -g @anthropic-ai\/claude-code/);
  const first = JSON.parse(readFileSync(config, 'utf8')) as { roles: Record<string, string[]> };
  assert.deepEqual(Object.keys(first.roles), ['lisa', 'ralph', 'bart']);
  assert.equal(first.roles.ralph?.[0], 'claude');
  assert.ok(first.roles.ralph?.includes(kickoff('ralph')), 'the kickoff prompt names the context file');
  assert.match(
    readFileSync(join(repo.root, '.gitignore'), 'utf8'),
    /^\.springfield\/$/m,
    'the config is kept out of git',
  );

  writeFileSync(config, JSON.stringify({ ...first, verification: [['npm', 'test']], maxParallelAgents: 5 }));
  const one = await runJson(repo.root, ['agents', 'use', 'codex', '--role', 'bart'], { PATH: '/usr/bin:/bin' });
  assert.equal(one.code, 0, one.stderr);
  assert.equal(one.json<{ created: boolean }>().created, false);
  const second = JSON.parse(readFileSync(config, 'utf8')) as {
    roles: Record<string, string[]>;
    verification: string[][];
    maxParallelAgents: number;
  };
  assert.equal(second.roles.bart?.[0], 'codex', 'bart now runs Codex');
  assert.equal(second.roles.ralph?.[0], 'claude', 'the other roles are kept');
  assert.deepEqual(
    [second.verification, second.maxParallelAgents],
    [[['npm', 'test']], 5],
    'the other settings are kept',
  );
  assert.ok(!lstatSync(config).isSymbolicLink());

  const before = readFileSync(config, 'utf8');
  assertFails(await runJson(repo.root, ['agents', 'use', 'nope']), 2, 'unknown_preset');
  assertFails(await runJson(repo.root, ['agents', 'use', 'claude', '--role', 'lovejoy']), 2, 'bad_option');
  const aider = assertFails(
    await runJson(repo.root, ['agents', 'use', 'aider', '--role', 'bart']),
    1,
    'role_not_supported',
  );
  assert.match(aider.message, /cannot act as bart: Aider edits files but does not run shell commands/);
  assert.equal(readFileSync(config, 'utf8'), before, 'refusals write nothing');

  writeFileSync(config, '{ "roles": ');
  assertFails(await runJson(repo.root, ['agents', 'use', 'claude']), 2, 'invalid_config');
  assert.equal(readFileSync(config, 'utf8'), '{ "roles": ', 'a broken config is left for the person to fix');
  writeFileSync(config, JSON.stringify({ maxParallelAgents: 0 }));
  assertFails(await runJson(repo.root, ['agents', 'use', 'claude']), 2, 'invalid_config');
});

test("agents use writes each role's usage reader, so a run's cost is kept; a preset that reports none drops it", async (t) => {
  const repo = makeRepo();
  t.after(() => repo.cleanup());
  const config = join(repo.root, '.springfield', 'config.json');
  const read = () =>
    JSON.parse(readFileSync(config, 'utf8')) as { roles: Record<string, string[]>; usage?: Record<string, unknown> };
  const use = async (...args: string[]) => {
    const r = await runJson(repo.root, ['agents', 'use', ...args], { PATH: '/usr/bin:/bin' });
    assert.equal(r.code, 0, r.stderr);
  };
  await use('claude');
  assert.deepEqual(read().usage, { lisa: 'claude', ralph: 'claude', bart: 'claude' });

  // The reader is what `springfield run` stores cost and tokens by: a Claude Code result event.
  const { id } = assertOk<{ id: string }>(await runJson(repo.root, ['epic', 'create', 'Costed']));
  const result = { type: 'result', total_cost_usd: 0.25, usage: { input_tokens: 300, output_tokens: 40 } };
  const agent = [process.execPath, '-e', `console.log(JSON.stringify(${JSON.stringify(result)}))`];
  await runCli(planningWorktree(repo, id), ['run', '--role', 'lisa', '--epic', id, '--', ...agent]);
  const runs = assertOk<{
    runs: { role: string; cost_usd: number | null; input_tokens: number | null; output_tokens: number | null }[];
  }>(await runJson(repo.root, ['runs', '--epic', id])).runs;
  assert.deepEqual(
    runs.map((r) => [r.role, r.cost_usd, r.input_tokens, r.output_tokens]),
    [['lisa', 0.25, 300, 40]],
  );

  await use('codex', '--role', 'bart');
  assert.deepEqual(
    read().usage,
    { lisa: 'claude', ralph: 'claude', bart: 'codex' },
    'one role: only its reader changes',
  );
  const cursor = AGENT_PRESETS.find((p) => p.usage === null && p.roles.ralph);
  assert.ok(cursor, 'a preset whose CLI reports no usage');
  await use(cursor.id, '--role', 'ralph');
  assert.deepEqual(
    read().usage,
    { lisa: 'claude', bart: 'codex' },
    "no reader for another CLI's output is left behind",
  );
  assert.equal(read().roles.ralph?.[0], cursor.program);
});

test('agents use refuses a symbolic link for the config file or its folder', async (t) => {
  const repo = makeRepo();
  t.after(() => repo.cleanup());
  const outside = join(repo.tmp, 'outside.json');
  mkdirSync(join(repo.root, '.springfield'));
  symlinkSync(outside, join(repo.root, '.springfield', 'config.json'));
  const r = assertFails(await runJson(repo.root, ['agents', 'use', 'claude']), 1, 'symlink_refused');
  assert.match(r.message, /config\.json: the config file is a symbolic link; refusing to write through it/);
  assert.equal(existsSync(outside), false, 'nothing was written where the link points');

  const other = makeRepo();
  t.after(() => other.cleanup());
  mkdirSync(join(other.tmp, 'elsewhere'));
  symlinkSync(join(other.tmp, 'elsewhere'), join(other.root, '.springfield'));
  assertFails(await runJson(other.root, ['agents', 'use', 'claude']), 1, 'state_dir_link');
  assert.equal(existsSync(join(other.tmp, 'elsewhere', 'config.json')), false);
});

test('agents says whether each CLI found can run: the real Claude Code without a login, then with a key', async (t) => {
  const repo = makeRepo();
  t.after(() => repo.cleanup());
  // Claude Code alone on PATH: the other CLIs' checks (Gemini CLI starts for seconds) are not this test's.
  const bin = join(repo.tmp, 'bin');
  mkdirSync(bin);
  symlinkSync(join(AGENT_BIN, 'claude'), join(bin, 'claude'));
  const env = {
    PATH: `${bin}:/usr/bin:/bin`,
    HOME: repo.tmp,
    // The verdict must not depend on how fast a loaded machine starts Claude Code: its status command
    // may take as long as it needs (a check that times out passes, which is what this test refutes).
    SPRINGFIELD_PREFLIGHT_TIMEOUT: '600',
    ANTHROPIC_API_KEY: undefined,
    ANTHROPIC_AUTH_TOKEN: undefined,
    CLAUDE_CODE_OAUTH_TOKEN: undefined,
  };
  type Ready = { presets: { id: string; ready: boolean; unavailable: string | null }[] };
  const claude = (r: Ready) => r.presets.find((p) => p.id === 'claude');
  const out = assertOk<Ready>(await runJson(repo.root, ['agents'], env));
  assert.deepEqual(claude(out), {
    ...claude(out),
    ready: false,
    unavailable: 'Claude Code is not logged in — run claude once to log in, or set ANTHROPIC_API_KEY',
  });
  assert.match(
    (await runCli(repo.root, ['agents'], env)).stdout,
    /claude .*· Claude Code is not logged in — run claude once to log in/,
  );
  const keyed = assertOk<Ready>(await runJson(repo.root, ['agents'], { ...env, ANTHROPIC_API_KEY: 'sk-ant-test' }));
  assert.deepEqual([claude(keyed)?.ready, claude(keyed)?.unavailable], [true, null]);
});
