// `orchestrate --dry-run`: says what one pass would do, and leaves the store, git and the agents untouched.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { approve, faultRepo, sessionsOf, type FaultRepo } from './harness.ts';

/** Everything a pass could change: the database's bytes, refs, worktrees, the working tree, the agents' log, sibling folders. */
function fingerprint(f: FaultRepo): string {
  const db = join(f.repo, '.springfield', 'state.db');
  // An empty WAL (a read-only open leaves one) holds nothing: the same state as none.
  const bytes = ['', '-wal'].map((s) =>
    existsSync(db + s) && readFileSync(db + s).length > 0
      ? createHash('sha256')
          .update(readFileSync(db + s))
          .digest('hex')
      : 'empty',
  );
  return JSON.stringify({
    bytes,
    refs: f.git('for-each-ref', '--format=%(refname) %(objectname)'),
    worktrees: f.git('worktree', 'list', '--porcelain'),
    status: f.git('status', '--porcelain', '--ignored'),
    agents: readFileSync(f.log, 'utf8'),
    siblings: readdirSync(f.base).sort(),
  });
}

test(
  '--dry-run prints what decide() would do now and changes nothing; the pass that follows does exactly that',
  { timeout: 120_000 },
  async (t) => {
    const f = faultRepo(t);
    const ready = f.epic('Ready one');
    const unplanned = f.epic('Unplanned one');
    assert.equal(f.sf('plan', 'propose', ready, 'plans/ready-one.md', '--agent', 'lisa').code, 0);
    approve(f, ready);

    const before = fingerprint(f);
    const json = f.sf('orchestrate', '--dry-run');
    assert.equal(json.code, 0, json.stderr);
    const plain = (await import('node:child_process')).spawnSync(
      process.execPath,
      [join(import.meta.dirname, '..', '..', 'dist', 'cli.cjs'), 'orchestrate', '--dry-run'],
      { cwd: f.repo, encoding: 'utf8' },
    );
    assert.equal(fingerprint(f), before, 'the database, git, the worktrees and the agents are untouched');
    assert.equal(plain.status, 0, plain.stderr);

    const actions = json.json.actions as { kind: string; epicId: string; role?: string; description: string }[];
    assert.equal(json.json.dry_run, true);
    // decide() orders epics by priority, then id (random here).
    assert.deepEqual(actions.map((a) => [a.kind, a.epicId, a.role ?? null]).sort(), [
      ['run', unplanned, 'lisa'],
      ['start_epic', ready, null],
    ]);
    assert.match(plain.stdout, /^Dry run: a pass would take 2 actions \(nothing was done\):$/m);
    assert.match(
      plain.stdout,
      new RegExp(`^  ${ready}: start the epic \\(ready → in_progress\\) in its own worktree$`, 'm'),
    );
    assert.match(plain.stdout, new RegExp(`^  ${unplanned}: start Lisa \\(write the plan\\)$`, 'm'));
    assert.deepEqual(sessionsOf(f, unplanned), {}, 'no agent started');

    // A real pass takes the same actions.
    const once = f.sf('orchestrate', '--once');
    const taken = (once.json.actions ?? []) as { kind: string; epicId: string }[];
    assert.deepEqual(
      taken.map((a) => [a.kind, a.epicId]),
      actions.map((a) => [a.kind, a.epicId]),
      once.stderr,
    );
    assert.notEqual(fingerprint(f), before, 'the real pass did change things (the fingerprint can see it)');
  },
);

test('--dry-run refuses --once, --watch and --until-idle with exit 2', { timeout: 60_000 }, (t) => {
  const f = faultRepo(t);
  for (const extra of ['--once', '--watch', '--until-idle']) {
    const r = f.sf('orchestrate', '--dry-run', extra);
    assert.equal(r.code, 2, extra);
    assert.match(r.stderr, /--dry-run takes one look and changes nothing/);
  }
});
