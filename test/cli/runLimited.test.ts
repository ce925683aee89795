// `springfield run` by hand is held by a usage limit known on this host, as the scheduler's runs are
// (docs/agents.md, "Usage limits"): inside the window it says until when, exits 1 and starts nothing;
// after the reset it is the one probe unless another run holds it, and its success clears the limit;
// --ignore-limit starts it anyway. A `claude` on PATH stands for the CLI: it only marks that it started.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';
import { clearLimit, limitOf, recordLimit } from '../../src/core/index.ts';
import { limitGate, releaseProbe } from '../../src/core/limits/hostLimits.ts';
import { assertOk, ensureCli, makeRepo, runCli, runJson } from '../helpers/gitRepo.ts';

test('a manual run is held by a known limit: until when, exit 1, nothing started; after the reset the one probe; --ignore-limit starts it', (t) => {
  ensureCli();
  const repo = makeRepo({
    files: { '.gitignore': '.springfield/\n', 'plans/p.md': '# Plan: P\n\n## Step 1: One {#step-1}\n- [ ] Do it\n' },
  });
  t.after(() => repo.cleanup());
  const state = join(repo.tmp, 'state');
  const bin = join(repo.tmp, 'bin');
  const marks = join(repo.tmp, 'started.log');
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'claude'),
    `#!${process.execPath}\nrequire('node:fs').appendFileSync(${JSON.stringify(marks)}, process.argv.slice(2).join(' ') + '\\n');\n`,
  );
  chmodSync(join(bin, 'claude'), 0o755);
  const env = { XDG_STATE_HOME: state, PATH: [bin, process.env.PATH ?? ''].join(delimiter) };
  const epic = assertOk<{ id: string }>(runJson(repo.root, ['epic', 'create', 'Held'], env)).id;
  assertOk(runJson(repo.root, ['plan', 'propose', epic, 'plans/p.md', '--agent', 'lisa'], env));
  assertOk(runJson(repo.root, ['plan', 'approve', epic], env));
  const wt = assertOk<{ worktree_path: string }>(runJson(repo.root, ['epic', 'start', epic], env)).worktree_path;
  const run = (...extra: string[]) =>
    runCli(wt, ['run', '--role', 'bart', '--epic', epic, ...extra, '--', 'claude', '-p', 'review'], env);
  const started = () => (existsSync(marks) ? readFileSync(marks, 'utf8').split('\n').filter(Boolean).length : 0);
  const runs = () => runJson(repo.root, ['runs'], env).json<{ runs: unknown[] }>().runs.length;
  const resets = (s: number) => ({ message: 'try again', resetAt: new Date(Date.now() + s * 1000).toISOString() });

  recordLimit(env, 'claude', resets(90), null);
  const held = run();
  assert.equal(held.code, 1, held.stderr);
  assert.match(
    held.stderr,
    /^springfield: claude limited until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d on this host: nothing started \(springfield run --ignore-limit starts it anyway\)\n$/,
  );
  assert.equal(held.stdout, '');
  assert.equal(started(), 0, 'the CLI was not started');
  assert.equal(runs(), 0, 'no run recorded');

  // Past the reset, while another process holds the one probe: still held, and it says why.
  clearLimit(env, 'claude');
  recordLimit(env, 'claude', resets(-1), null, new Date(Date.now() - 2000));
  assert.equal(limitGate(env, 'claude', process.pid, 600_000).kind, 'probe');
  const probing = run();
  assert.equal(probing.code, 1, probing.stderr);
  assert.match(
    probing.stderr,
    /claude limited: one run is trying it again after its reset on this host: nothing started/,
  );
  assert.equal(started(), 0);

  // The probe given back: this run is the probe, and, the CLI having answered, the limit is over.
  releaseProbe(env, 'claude');
  const probe = run();
  assert.equal(started(), 1, probe.stderr);
  assert.equal(runs(), 1);
  assert.equal(limitOf(env, 'claude'), null, 'the probe got through: no limit left');

  // --ignore-limit starts it inside a window, and the limit stays.
  recordLimit(env, 'claude', resets(90), null);
  const forced = run('--ignore-limit');
  assert.equal(started(), 2, forced.stderr);
  assert.notEqual(limitOf(env, 'claude'), null);
  rmSync(state, { recursive: true, force: true });
});
