// Fault suite: worktrees made ready to work in — .worktreeinclude, setup commands (and their
// failure, a fault like any other), archive commands before removal.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { approve, faultRepo, sessionsOf, violations } from './harness.ts';

test(
  'a setup command that fails: retried within the limit, then blocked (agent_failed, Setup) with its output; no agent ever starts there',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = f.epic('Broken setup');
    assert.equal(f.orchestrate().code, 0);
    // Broken after planning (the planning worktree's own setup is the next test's).
    f.config({
      setup: [
        [
          process.execPath,
          '-e',
          "console.log('installing'); console.error('npm ERR! 404 Not Found - left-pad'); process.exit(1)",
        ],
      ],
    });
    approve(f, epic);
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, {
        epic,
        maxSessions: { ralph: 0 },
        status: 'blocked',
        reason:
          /^agent_failed: Setup failed 3 times in a row \(last: run \d+ failed: setup command `.+` exited 1\); last output: npm ERR! 404 Not Found - left-pad$/,
      }),
      [],
      run.stderr,
    );
    const runs = f.sf('runs', '--epic', epic).json.runs as {
      role: string;
      status: string;
      exit_code: number;
      output_tail: string;
    }[];
    const setups = runs.filter((r) => r.role === 'setup');
    assert.deepEqual(
      setups.map((r) => [r.status, r.exit_code]),
      [
        ['failed', 1],
        ['failed', 1],
        ['failed', 1],
      ],
    );
    assert.match(setups[0]?.output_tail ?? '', /\(exit 1, [\d.]+ s\)\ninstalling\nnpm ERR! 404 Not Found - left-pad$/);
    assert.deepEqual(
      sessionsOf(f, epic),
      { lisa: 1, ralph: 0, bart: 0, lovejoy: 0, total: 1 },
      'setup runs are no agent sessions',
    );
    // The person fixes the command and retries: setup passes once, the epic is built.
    f.config({ setup: [[process.execPath, '-e', "console.log('installed')"]] });
    assert.equal(f.sf('epic', 'retry', epic).json.to, 'in_progress');
    const after = f.orchestrate();
    assert.deepEqual(violations(f, after, { epic, maxSessions: { ralph: 2 }, status: 'done' }), [], after.stderr);
  },
);

test(
  "a planning worktree is set up like an epic's; a setup that fails there is Lisa's failed run, bounded by the limit, and leaves no planning worktree",
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t, {
      setup: [
        [
          process.execPath,
          '-e',
          "console.log('installing'); console.error('npm ERR! 404 Not Found - left-pad'); process.exit(1)",
        ],
      ],
    });
    const epic = f.epic('Broken setup before planning');
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, {
        epic,
        maxSessions: { lisa: 3, ralph: 0 },
        status: 'blocked',
        reason:
          /^agent_failed: Lisa failed 3 times in a row \(last: run \d+ failed: .*setup of the planning worktree failed: setup command `.+` exited 1\); last output: .*setup of the planning worktree failed/,
      }),
      [],
      run.stderr,
    );
    const runs = f.sf('runs', '--epic', epic).json.runs as { role: string; status: string; output_tail: string }[];
    assert.deepEqual(
      runs.map((r) => [r.role, r.status]),
      [
        ['lisa', 'failed'],
        ['lisa', 'failed'],
        ['lisa', 'failed'],
      ],
    );
    assert.match(
      runs[0]?.output_tail ?? '',
      /installing\nnpm ERR! 404 Not Found - left-pad\n.*setup of the planning worktree failed/s,
      "the setup's output is kept with the run",
    );
    assert.ok(!existsSync(join(`${f.repo}.springfield`, `${epic}-plan`)), 'no planning worktree left');
    assert.equal(f.records().length, 0, 'Lisa never started');
  },
);

test(
  'a new worktree gets the ignored files .worktreeinclude lists (never links, never over a file) and runs setup once before any agent; archive runs before removal',
  { timeout: 300_000 },
  async (t) => {
    const count = 'setup.count';
    const f = faultRepo(t);
    const countFile = join(f.base, count);
    const outside = join(f.base, 'outside-secret.txt');
    writeFileSync(outside, 'must not be copied\n');
    writeFileSync(join(f.repo, '.gitignore'), '.springfield/\n.env\nconfig/\n*.key\nnotes-ignored.txt\n');
    writeFileSync(join(f.repo, '.worktreeinclude'), '.env\nconfig/*.json\n*.key\nnotes.txt\n');
    f.git('add', '.gitignore', '.worktreeinclude');
    f.git('commit', '-qm', 'ignore local files; include some in worktrees');
    writeFileSync(join(f.repo, '.env'), 'API_KEY=local\n');
    mkdirSync(join(f.repo, 'config'));
    writeFileSync(join(f.repo, 'config', 'local.json'), '{"db": "local"}\n');
    writeFileSync(join(f.repo, 'config', 'other.txt'), 'not listed\n');
    symlinkSync(outside, join(f.repo, 'linked.key'));
    writeFileSync(join(f.repo, 'notes.txt'), 'untracked but not ignored\n');
    const check = `const fs = require('node:fs'); fs.appendFileSync(${JSON.stringify(countFile)}, process.cwd() + '\\n');
    if (fs.readFileSync('.env', 'utf8') !== 'API_KEY=local\\n') { console.error('no .env'); process.exit(1); }
    console.log('setup saw .env and config/local.json: ' + fs.existsSync('config/local.json'));`;
    const archived = join(f.base, 'archived');
    f.config({
      setup: [[process.execPath, '-e', check]],
      archive: [
        [process.execPath, '-e', `require('node:fs').writeFileSync(${JSON.stringify(archived)}, process.cwd())`],
      ],
    });
    const epic = f.epic('Ready worktree');
    assert.equal(f.orchestrate().code, 0);
    approve(f, epic);
    const run = f.orchestrate();
    assert.deepEqual(violations(f, run, { epic, maxSessions: { ralph: 2 }, status: 'done' }), [], run.stderr);
    const worktree = join(`${f.repo}.springfield`, epic);
    assert.deepEqual(
      readFileSync(countFile, 'utf8').split('\n').filter(Boolean),
      [`${worktree}-plan`, worktree],
      "setup ran once in each new worktree: the planning one, then the epic's",
    );
    assert.ok(!existsSync(`${worktree}-plan`), 'the planning worktree is gone');
    const setups = (
      f.sf('runs', '--epic', epic).json.runs as {
        role: string;
        status: string;
        output_tail: string;
        started_at: string;
      }[]
    ).filter((r) => r.role === 'setup');
    assert.equal(setups.length, 1);
    assert.equal(setups[0]?.status, 'succeeded');
    assert.match(
      setups[0]?.output_tail ?? '',
      /^copied 2 files listed by \.worktreeinclude: (\.env, config\/local\.json|config\/local\.json, \.env)\nnot copied: linked\.key \(not a regular file\)\n\$ .+\(exit 0, [\d.]+ s\)\nsetup saw \.env and config\/local\.json: true$/,
    );
    const ralphStarts = (f.sf('runs', '--epic', epic).json.runs as { role: string; started_at: string }[])
      .filter((r) => r.role === 'ralph')
      .map((r) => r.started_at);
    assert.ok(
      ralphStarts.every((s) => s > (setups[0]?.started_at ?? '')),
      'no agent before setup',
    );
    assert.equal(readFileSync(archived, 'utf8'), worktree, 'archive ran in the worktree before it was removed');
    assert.ok(!existsSync(worktree));
    assert.equal(f.sf('show').code, 0);
    assert.throws(() => f.git('show', 'main:.env'), 'an included file is never committed');
  },
);

test(
  'an archive command that fails keeps the worktree (the epic is merged and done all the same)',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t, {
      archive: [[process.execPath, '-e', "console.error('cannot upload the logs'); process.exit(3)"]],
    });
    const epic = f.epic('Archive fails');
    assert.equal(f.orchestrate().code, 0);
    approve(f, epic);
    const run = f.orchestrate();
    assert.deepEqual(violations(f, run, { epic, maxSessions: { ralph: 2 }, status: 'done' }), [], run.stderr);
    assert.ok(existsSync(join(`${f.repo}.springfield`, epic)), 'kept for a person to look at');
    assert.match(
      run.stderr,
      /The archive command `.+` exited 3, so the worktree .+ is kept \(fix it, then `springfield worktrees prune` archives and removes it\):\ncannot upload the logs/,
    );
  },
);
