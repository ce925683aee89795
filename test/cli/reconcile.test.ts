import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { parseTrailerLog } from '../../src/core/git/trailers.ts';
import { assertFails, cleanEnv, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';

const PLAN = `# Plan: reconcile demo

## Step 1: One {#step-1}
**Tasks:**
- [ ] one

## Step 2: Two {#step-2}
**Tasks:**
- [ ] two

## Step 3: Three {#step-3}
**Tasks:**
- [ ] three

### Step 3.1: Three a {#step-3-1}
**Tasks:**
- [ ] three a
`;

interface ReconcileJson {
  reconciled: { plan_path: string; step_anchor: string; commit_hash: string; from_status: string }[];
  conflicts: { plan_path: string; step_anchor: string; db_hash: string; git_hash: string; overwritten: boolean }[];
  unknown: { plan_path: string; step_anchor: string; commit_hash: string; reason: string }[];
  unchanged: number;
  plans_completed: string[];
}

interface StepJson {
  anchor: string;
  status: string;
  commit_hash: string | null;
  substeps: StepJson[];
}

function dbOf(repo: Repo): Database.Database {
  return new Database(join(repo.root, '.springfield', 'state.db'));
}

async function stepHashes(repo: Repo): Promise<Record<string, [string, string | null]>> {
  const plans = (await runCli(repo.root, ['show', 'plans/p.md', '--json'])).json<{ plans: { steps: StepJson[] }[] }>()
    .plans;
  const out: Record<string, [string, string | null]> = {};
  for (const s of plans[0]?.steps ?? []) out[s.anchor] = [s.status, s.commit_hash];
  return out;
}

/** Claims the next step in `cwd`, ticks its items (and its substeps'), writes a file and commits through springfield. */
async function commitNext(repo: Repo, cwd: string, file: string): Promise<{ anchor: string; hash: string }> {
  const claim = (await runCli(cwd, ['claim', 'plans/p.md', '--json'])).json<{
    step_anchor: string;
    substeps: string[];
  }>();
  for (const anchor of [...claim.substeps, claim.step_anchor]) {
    assert.equal((await runCli(cwd, ['update', 'plans/p.md', anchor, '--all', 'completed'])).code, 0);
  }
  writeFileSync(join(cwd, file), `${file}\n`);
  const r = await runCli(cwd, ['commit', '-m', `work on ${claim.step_anchor}`, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const out = r.json<{ commit_hash: string; state_update_failed: boolean }>();
  assert.equal(out.state_update_failed, false);
  return { anchor: claim.step_anchor, hash: out.commit_hash };
}

describe('springfield reconcile', () => {
  const repos: Repo[] = [];
  after(() => repos.forEach((r) => r.cleanup()));

  test('restores completions wiped from the database from commits made in two worktrees', async () => {
    const repo = makeRepo({ files: { 'plans/p.md': PLAN }, worktrees: ['a', 'b'] });
    repos.push(repo);
    assert.equal((await runCli(repo.root, ['init', 'plans/p.md'])).code, 0);
    const made = [
      await commitNext(repo, repo.worktree('a'), 'one.ts'),
      await commitNext(repo, repo.worktree('b'), 'two.ts'),
      await commitNext(repo, repo.worktree('a'), 'three.ts'),
    ];
    assert.deepEqual(
      made.map((m) => m.anchor),
      ['step-1', 'step-2', 'step-3'],
    );
    const expected = Object.fromEntries(made.map((m) => [m.anchor, ['completed', m.hash]]));
    assert.deepEqual(await stepHashes(repo), expected);

    const db = dbOf(repo);
    const wiped = db
      .prepare(
        `UPDATE steps SET status = 'claimed', commit_hash = NULL, completed_at = NULL, completed_by = NULL, completed_token = NULL
      WHERE parent_anchor IS NULL`,
      )
      .run().changes;
    db.prepare(`UPDATE steps SET status = 'pending', completed_at = NULL WHERE parent_anchor IS NOT NULL`).run();
    db.prepare(`UPDATE plans SET status = 'active'`).run();
    db.close();
    assert.equal(wiped, 3);
    assert.deepEqual(
      Object.values(await stepHashes(repo)).map(([status]) => status),
      ['claimed', 'claimed', 'claimed'],
    );

    const r = await runCli(repo.worktree('b'), ['reconcile', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = r.json<ReconcileJson>();
    assert.deepEqual(
      out.reconciled.map((s) => [s.step_anchor, s.commit_hash, s.from_status]).sort(),
      made.map((m) => [m.anchor, m.hash, 'claimed']),
    );
    assert.deepEqual(out.conflicts, []);
    assert.deepEqual(out.unknown, []);
    assert.deepEqual(out.plans_completed, ['plans/p.md']);
    assert.deepEqual(await stepHashes(repo), expected);
    const plan = (await runCli(repo.root, ['show', 'plans/p.md', '--json'])).json<{
      plans: { status: string; steps: StepJson[] }[];
    }>().plans[0];
    assert.equal(plan?.status, 'done');
    assert.equal(plan?.steps[2]?.substeps[0]?.status, 'completed');
    const events = (await runCli(repo.root, ['events', 'plans/p.md', '--json'])).json<{
      events: { action: string; step_anchor: string }[];
    }>().events;
    assert.deepEqual(
      events
        .filter((e) => e.action === 'reconcile')
        .map((e) => e.step_anchor)
        .sort(),
      ['step-1', 'step-2', 'step-3'],
    );

    const again = (await runCli(repo.root, ['reconcile', '--json'])).json<ReconcileJson>();
    assert.deepEqual(again.reconciled, []);
    assert.equal(again.unchanged, 3);
  });

  test('a different hash in the database is reported and kept, and overwritten with --force', async () => {
    const repo = makeRepo({ files: { 'plans/p.md': PLAN }, worktrees: ['a'] });
    repos.push(repo);
    await runCli(repo.root, ['init', 'plans/p.md']);
    const { hash } = await commitNext(repo, repo.worktree('a'), 'one.ts');
    const other = repo.git(['rev-parse', 'main']);
    const db = dbOf(repo);
    db.prepare(`UPDATE steps SET commit_hash = ? WHERE anchor = 'step-1'`).run(other);
    db.close();

    const kept = await runCli(repo.root, ['reconcile', '--json']);
    assert.equal(kept.code, 0);
    assert.match(
      kept.stderr,
      /^springfield: warning: plans\/p\.md step-1: the database has commit [0-9a-f]{40}, git has [0-9a-f]{40}; kept the database hash/,
    );
    const k = kept.json<ReconcileJson>();
    assert.deepEqual(k.conflicts, [
      { plan_path: 'plans/p.md', step_anchor: 'step-1', db_hash: other, git_hash: hash, overwritten: false },
    ]);
    assert.deepEqual(k.reconciled, []);
    assert.deepEqual((await stepHashes(repo))['step-1'], ['completed', other]);

    const forced = (await runCli(repo.root, ['reconcile', '--force', '--json'])).json<ReconcileJson>();
    assert.equal(forced.conflicts[0]?.overwritten, true);
    assert.deepEqual(
      forced.reconciled.map((s) => [s.step_anchor, s.commit_hash]),
      [['step-1', hash]],
    );
    assert.deepEqual((await stepHashes(repo))['step-1'], ['completed', hash]);
  });

  test('the newest commit per step wins, across branches; unknown plans and steps are listed, not applied', async () => {
    const repo = makeRepo({ files: { 'plans/p.md': PLAN }, worktrees: ['a', 'b'] });
    repos.push(repo);
    await runCli(repo.root, ['init', 'plans/p.md']);
    const commit = (cwd: string, file: string, date: string, trailers: string[]) => {
      writeFileSync(join(cwd, file), file);
      repo.git(['add', file], cwd);
      const env = cleanEnv({ GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
      execFileSync('git', ['commit', '-q', '-m', file, ...trailers.flatMap((t) => ['--trailer', t])], { cwd, env });
      return repo.git(['rev-parse', 'HEAD'], cwd);
    };
    const older = commit(repo.worktree('b'), 'old.ts', '2026-01-01T10:00:00Z', [
      'Springfield-Step: step-2',
      'Springfield-Plan: plans/p.md',
    ]);
    const newer = commit(repo.worktree('a'), 'new.ts', '2026-01-02T10:00:00Z', [
      'Springfield-Step: step-2',
      'Springfield-Plan: plans/p.md',
    ]);
    const ghostPlan = commit(repo.worktree('a'), 'ghost.ts', '2026-01-03T10:00:00Z', [
      'Springfield-Step: step-1',
      'Springfield-Plan: plans/ghost.md',
    ]);
    const ghostStep = commit(repo.worktree('a'), 'nine.ts', '2026-01-04T10:00:00Z', [
      'Springfield-Step: step-9',
      'Springfield-Plan: plans/p.md',
    ]);
    commit(repo.worktree('a'), 'plain.ts', '2026-01-05T10:00:00Z', []);
    assert.notEqual(older, newer);

    const out = (await runCli(repo.root, ['reconcile', '--json'])).json<ReconcileJson>();
    assert.deepEqual(
      out.reconciled.map((s) => [s.step_anchor, s.commit_hash, s.from_status]),
      [['step-2', newer, 'pending']],
    );
    assert.deepEqual(out.conflicts, []);
    assert.deepEqual(out.unknown.map((u) => [u.plan_path, u.step_anchor, u.commit_hash, u.reason]).sort(), [
      ['plans/ghost.md', 'step-1', ghostPlan, 'unknown_plan'],
      ['plans/p.md', 'step-9', ghostStep, 'unknown_step'],
    ]);
    assert.deepEqual(await stepHashes(repo), {
      'step-1': ['pending', null],
      'step-2': ['completed', newer],
      'step-3': ['pending', null],
    });
  });

  test('a plan argument limits reconcile to that plan; an unknown plan is a usage error that writes nothing', async () => {
    const repo = makeRepo({ files: { 'plans/p.md': PLAN, 'plans/q.md': PLAN }, worktrees: ['a'] });
    repos.push(repo);
    await runCli(repo.root, ['init', 'plans/p.md']);
    await runCli(repo.root, ['init', 'plans/q.md']);
    const a = repo.worktree('a');
    for (const plan of ['plans/p.md', 'plans/q.md']) {
      writeFileSync(join(a, `${plan.slice(6, 7)}.ts`), plan);
      repo.git(['add', '-A'], a);
      repo.git(
        ['commit', '-q', '-m', plan, '--trailer', 'Springfield-Step: step-1', '--trailer', `Springfield-Plan: ${plan}`],
        a,
      );
    }
    const out = (await runCli(repo.root, ['reconcile', 'plans/q.md', '--json'])).json<ReconcileJson>();
    assert.deepEqual(
      out.reconciled.map((s) => [s.plan_path, s.step_anchor]),
      [['plans/q.md', 'step-1']],
    );
    assert.deepEqual((await stepHashes(repo))['step-1']?.[0], 'pending');
    const eventsBefore = (await runCli(repo.root, ['events', '--json'])).json<{ events: unknown[] }>().events.length;
    assertFails(await runCli(repo.root, ['reconcile', 'plans/none.md', '--json']), 2, 'unknown_plan');
    assertFails(await runCli(repo.root, ['reconcile', '--bogus', '--json']), 2, 'unknown_option');
    assert.equal(
      (await runCli(repo.root, ['events', '--json'])).json<{ events: unknown[] }>().events.length,
      eventsBefore,
    );
  });

  test('parses several steps in one commit, pairing each with its plan', () => {
    const hash = 'a'.repeat(40);
    const log = `${hash}\x1fstep-1\x1dstep-2\x1fplans/p.md\x1f\x1e\n${'b'.repeat(40)}\x1f\x1fplans/p.md\x1f\x1e\n`;
    assert.deepEqual(parseTrailerLog(log), [
      { commit_hash: hash, plan_path: 'plans/p.md', step_anchor: 'step-1', epic_id: null },
      { commit_hash: hash, plan_path: 'plans/p.md', step_anchor: 'step-2', epic_id: null },
    ]);
  });
});
