// PR mode ("merge": "pr", docs/lifecycle.md) against a bare repository as origin and a stub `gh` on
// PATH that records its arguments: the branch is pushed, the pull request opened with the summary as
// its body, the epic stays verified (checks rate-limited) until gh says merged, then done and the
// worktree removed. No remote, or no gh: blocked with the reason until a person fixes it and retries.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { approve, faultRepo, violations, type FaultRepo } from './harness.ts';

const URL = 'https://github.test/acme/shop/pull/7';

const GH = (base: string) => `#!${process.execPath}
const fs = require('node:fs');
const args = process.argv.slice(2);
let stdin = '';
try { stdin = args.includes('-') ? fs.readFileSync(0, 'utf8') : ''; } catch {}
fs.appendFileSync(${JSON.stringify(join(base, 'gh.log'))}, JSON.stringify({ args, cwd: process.cwd(), stdin }) + '\\n');
if (args[0] === '--version') { console.log('gh version 2.99.0 (stub)'); process.exit(0); }
if (args[0] === 'pr' && args[1] === 'create') { console.log(${JSON.stringify(URL)}); process.exit(0); }
if (args[0] === 'pr' && args[1] === 'view') { process.stdout.write(fs.readFileSync(${JSON.stringify(join(base, 'gh-state.json'))}, 'utf8')); process.exit(0); }
console.error('stub gh: unexpected ' + args.join(' ')); process.exit(2);
`;

/** A directory holding only what the scheduler needs on PATH (git), plus the stub gh when asked. */
function binDir(base: string, withGh: boolean): string {
  const dir = join(base, withGh ? 'bin' : 'bin-nogh');
  mkdirSync(dir, { recursive: true });
  symlinkSync(execFileSync('which', ['git'], { encoding: 'utf8' }).trim(), join(dir, 'git'));
  if (withGh) {
    writeFileSync(join(dir, 'gh'), GH(base));
    chmodSync(join(dir, 'gh'), 0o755);
  }
  return dir;
}

function ghCalls(f: FaultRepo): { args: string[]; cwd: string; stdin: string }[] {
  const log = join(f.base, 'gh.log');
  return existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { args: string[]; cwd: string; stdin: string })
    : [];
}

function withOrigin(f: FaultRepo): string {
  const origin = join(f.base, 'origin.git');
  execFileSync('git', ['init', '-q', '--bare', origin]);
  f.git('remote', 'add', 'origin', origin);
  f.git('push', '-q', 'origin', 'main');
  return origin;
}

function toVerified(f: FaultRepo, epic: string): void {
  const planning = f.orchestrate();
  assert.equal(planning.code, 0, planning.stderr);
  approve(f, epic);
}

test(
  'PR mode: pushed to origin, opened with the summary, verified until gh says merged (checks rate-limited), then done and the worktree removed',
  { timeout: 300_000 },
  (t) => {
    const f = faultRepo(t, { merge: 'pr', prCheckSeconds: 3600 }, (base) => ({ PATH: binDir(base, true) }));
    const origin = withOrigin(f);
    const epic = f.epic('Gift cards');
    const mainBefore = f.git('rev-parse', 'main');
    writeFileSync(join(f.base, 'gh-state.json'), JSON.stringify({ state: 'OPEN', mergedAt: null }));
    toVerified(f, epic);
    const build = f.orchestrate();
    assert.deepEqual(
      violations(f, build, { epic, maxSessions: { lisa: 1, ralph: 2 }, status: 'verified' }),
      [],
      build.stderr,
    );
    const shown = f.sf('epic', 'show', epic).json as { pr_url: string | null; worktree_path: string };
    assert.equal(shown.pr_url, URL);
    const branch = `springfield/${epic}`;
    assert.equal(
      execFileSync('git', ['rev-parse', `refs/heads/${branch}`], { cwd: origin, encoding: 'utf8' }).trim(),
      f.git('rev-parse', branch),
      'the branch was pushed to origin',
    );
    assert.doesNotMatch(
      execFileSync('git', ['ls-tree', '-r', '--name-only', branch], { cwd: origin, encoding: 'utf8' }),
      /TODO-/,
      'without the handoff',
    );

    const calls = ghCalls(f);
    const create = calls.find((c) => c.args[0] === 'pr' && c.args[1] === 'create');
    assert.ok(create, JSON.stringify(calls));
    assert.deepEqual(create.args, [
      'pr',
      'create',
      '--head',
      branch,
      '--base',
      'main',
      '--title',
      `Gift cards (${epic})`,
      '--body-file',
      '-',
    ]);
    for (const part of [
      '## Steps',
      '- [x] step-1 First part',
      '## Verification evidence',
      '- PASS',
      '## Signals',
      '## Sessions spent',
      '- ralph: 2',
      '## Retrospective',
      '- Sessions by role: lisa 1, ralph 2',
      '- Approval to merge: ',
      '## Commits',
      `Springfield-Epic: ${epic}`,
    ]) {
      assert.ok(create.stdin.includes(part), `the body has ${part}:\n${create.stdin}`);
    }
    assert.equal(
      calls.filter((c) => c.args[1] === 'view').length,
      0,
      'the state is not asked before the rate limit allows',
    );
    assert.ok(existsSync(shown.worktree_path), 'the worktree stays while the pull request is open');
    assert.match(
      JSON.stringify(build.json.waiting),
      /pull request https:\/\/github\.test\/acme\/shop\/pull\/7 is open/,
    );

    // Within the rate limit nothing is asked; with checks allowed, an open PR keeps the epic verified.
    const quiet = f.orchestrate();
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(ghCalls(f).filter((c) => c.args[1] === 'view').length, 0);
    f.config({ prCheckSeconds: 0 });
    const open = f.orchestrate();
    assert.equal(open.code, 0, open.stderr);
    const views = ghCalls(f).filter((c) => c.args[1] === 'view');
    assert.deepEqual(
      views.map((c) => c.args),
      [['pr', 'view', URL, '--json', 'state,mergedAt']],
    );
    assert.equal(f.sf('epic', 'show', epic).json.status, 'verified', 'open is not merged');

    writeFileSync(join(f.base, 'gh-state.json'), JSON.stringify({ state: 'MERGED', mergedAt: '2026-11-23T10:00:00Z' }));
    const merged = f.orchestrate();
    assert.deepEqual(
      violations(f, merged, {
        epic,
        maxSessions: { lisa: 1, ralph: 2 },
        status: 'done',
        reason: /^pull request merged at 2026-11-23T10:00:00Z: https/,
      }).filter((v) => !/is lost/.test(v)),
      [],
      merged.stderr,
    );
    assert.ok(!existsSync(shown.worktree_path), 'the worktree is removed once merged');
    assert.equal(f.git('branch', '--list', branch), '');
    assert.equal(f.git('status', '--porcelain'), '', 'main untouched: the merge happened on GitHub');
    assert.equal(
      f.git('rev-parse', 'main'),
      mainBefore,
      'in PR mode Springfield commits nothing on the default branch',
    );
  },
);

test(
  'PR mode without a remote, then (remote added, retried) without gh: blocked each time with the reason, nothing retried by itself',
  { timeout: 300_000 },
  (t) => {
    const f = faultRepo(t, { merge: 'pr' }, (base) => ({ PATH: binDir(base, false) }));
    const epic = f.epic('Wishlist');
    writeFileSync(join(f.base, 'gh-state.json'), JSON.stringify({ state: 'OPEN', mergedAt: null }));
    toVerified(f, epic);
    const noRemote = f.orchestrate();
    assert.deepEqual(
      violations(f, noRemote, {
        epic,
        maxSessions: { ralph: 2 },
        status: 'blocked',
        reason:
          /^merge_failed: no git remote 'origin' to push springfield\/sf-[0-9a-f]+ to: add it \(git remote add origin <url>\)/,
      }),
      [],
      noRemote.stderr,
    );
    const again = f.orchestrate();
    assert.equal(again.code, 0);
    assert.equal(f.sf('epic', 'show', epic).json.status, 'blocked', 'nothing retries by itself');

    withOrigin(f);
    assert.equal(f.sf('epic', 'retry', epic).code, 0);
    const noGh = f.orchestrate();
    assert.deepEqual(
      violations(f, noGh, {
        epic,
        maxSessions: { ralph: 2 },
        status: 'blocked',
        reason: /^merge_failed: gh \(the GitHub CLI\) is not on PATH/,
      }),
      [],
      noGh.stderr,
    );
    assert.equal(ghCalls(f).length, 0);
  },
);
