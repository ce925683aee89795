// Where an epic's work happens (docs/lifecycle.md, "Where work happens"): never in a person's checkout.
// An epic a person started, or one an older Springfield started without a worktree, is built in a
// worktree of its own; one whose branch a person has checked out waits for it, and says so.
import assert from 'node:assert/strict';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadSqlite } from '../../src/core/store/sqlite/sqlite.ts';
import { CLI_PATH } from '../helpers/gitRepo.ts';
import { approve, faultRepo, violations } from './harness.ts';

/** An approved epic moved to in_progress the way an older Springfield did: no worktree recorded. */
function startedWithoutWorktree(f: ReturnType<typeof faultRepo>, title: string): string {
  const epic = f.epic(title);
  assert.equal(f.orchestrate().code, 0);
  approve(f, epic);
  const db = new (loadSqlite())(join(f.repo, '.springfield', 'state.db'));
  try {
    db.prepare(
      `UPDATE epics SET status = 'in_progress', worktree_path = NULL, branch = NULL, iteration = 1 WHERE id = ?`,
    ).run(epic);
  } finally {
    db.close();
  }
  return epic;
}

test(
  "an epic in progress without a worktree of its own gets one before anything runs: nothing is built in the person's checkout",
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = startedWithoutWorktree(f, 'Old epic');
    const head = f.git('rev-parse', 'HEAD');
    const run = f.orchestrate();
    assert.deepEqual(violations(f, run, { epic, maxSessions: { ralph: 2 }, status: 'done' }), [], run.stderr);
    assert.match(
      run.stderr,
      new RegExp(
        `${epic}: it had no worktree of its own; gave it .*/repo\\.springfield/${epic} on springfield/${epic}`,
      ),
    );
    const runs = f.sf('runs', '--epic', epic).json.runs as { role: string; worktree: string }[];
    for (const r of runs) assert.notEqual(r.worktree, f.repo, `${r.role} ran in the person's checkout`);
    for (const c of f.records().filter((r) => r.event === 'commit'))
      assert.throws(
        () => f.git('merge-base', '--is-ancestor', String(c.commit), head),
        'each build commit was made off main',
      );
    assert.equal(f.git('rev-parse', 'HEAD~1'), head, 'main gained one commit: the merge');
  },
);

test(
  'an epic whose branch a person has checked out waits, saying where; once the person moves on, it is built in its own worktree',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = startedWithoutWorktree(f, 'Branch in use');
    const mine = join(f.base, 'mine');
    f.git('worktree', 'add', '-q', '-b', `springfield/${epic}`, mine);
    const waiting = f.orchestrate();
    assert.equal(waiting.code, 0, waiting.stderr);
    assert.match(
      waiting.stderr,
      new RegExp(
        `waiting: branch springfield/${epic} is checked out in ${realpathSync(mine)}; ${epic} is built in a worktree of its own`,
      ),
    );
    assert.deepEqual(
      (f.sf('runs', '--epic', epic).json.runs as { role: string }[]).filter((r) => r.role !== 'lisa'),
      [],
      'no builder ran',
    );
    assert.equal(f.sf('epic', 'show', epic).json.worktree_path, null);

    f.git('-C', mine, 'checkout', '-q', '--detach');
    const run = f.orchestrate();
    assert.deepEqual(violations(f, run, { epic, maxSessions: { ralph: 2 }, status: 'done' }), [], run.stderr);
  },
);

test(
  "a step whose lease expired in the epic's worktree is taken over there by the scheduler's builder and committed on the epic's branch",
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = f.epic('Taken over');
    assert.equal(f.orchestrate().code, 0);
    approve(f, epic);
    // A person started it and claimed its first step in its worktree, then walked away: the lease ran out.
    const wt = String(f.sf('epic', 'start', epic).json.worktree_path);
    assert.equal(f.sf('claim', 'plans/taken-over.md', '--worktree', wt, '--agent', 'a-person').code, 0);
    const db = new (loadSqlite())(join(f.repo, '.springfield', 'state.db'));
    try {
      db.prepare(
        `UPDATE steps SET lease_expires_at = '2000-01-01T00:00:00.000Z' WHERE plan_path = 'plans/taken-over.md' AND anchor = 'step-1'`,
      ).run();
    } finally {
      db.close();
    }
    const main = f.git('rev-parse', 'HEAD');
    const run = f.orchestrate();
    assert.deepEqual(violations(f, run, { epic, maxSessions: { ralph: 2 }, status: 'done' }), [], run.stderr);
    const events = f.sf('events', 'plans/taken-over.md', '--step', 'step-1').json.events as {
      action: string;
      worktree: string;
      reason: string | null;
    }[];
    const takeover = events.find((e) => e.action === 'reclaim');
    assert.ok(takeover, `a reclaim event: ${events.map((e) => e.action).join(', ')}`);
    assert.equal(takeover.worktree, wt, "taken over in the epic's worktree, not the scheduler's checkout");
    const commits = f.records().filter((r) => r.event === 'commit');
    assert.ok(commits.length >= 2);
    for (const c of commits)
      assert.throws(
        () => f.git('merge-base', '--is-ancestor', String(c.commit), main),
        'built off main, on the epic branch',
      );
    assert.equal(f.git('rev-parse', 'HEAD~1'), main, 'main gained only the merge');
  },
);

test(
  "a person's uncommitted change in the main worktree holds the merge: it waits, saying so once, and is not tried again every pass; committed, it merges",
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = f.epic('Held merge');
    assert.equal(f.orchestrate().code, 0);
    approve(f, epic);
    appendFileSync(join(f.repo, '.gitignore'), '*.swp\n');
    const head = f.git('rev-parse', 'HEAD');
    const held = f.orchestrate();
    assert.equal(held.code, 0, held.stderr);
    assert.equal(held.timedOut, false, 'until-idle returns: only a person can go on');
    assert.equal(f.sf('epic', 'show', epic).json.status, 'verified');
    const said = held.stderr
      .split('\n')
      .filter((l) => l.includes('its merge waits: the main worktree has uncommitted changes (.gitignore)'));
    assert.equal(
      said.length >= 1 && said.filter((l) => !/^\s+sf-/.test(l)).length,
      1,
      `said once in the log, not every pass:\n${held.stderr}`,
    );
    assert.doesNotMatch(held.stderr, /merge .* failed|cannot merge/, 'no merge was attempted');
    assert.equal(f.git('rev-parse', 'HEAD'), head, 'main did not move');
    assert.equal(
      readFileSync(join(f.repo, '.gitignore'), 'utf8').endsWith('*.swp\n'),
      true,
      "the person's change is untouched",
    );
    const dry = f.sf('orchestrate', '--dry-run');
    assert.match(JSON.stringify(dry.json), /its merge waits/);

    f.git('commit', '-qam', 'my ignore');
    const merged = f.orchestrate();
    assert.equal(merged.code, 0, merged.stderr);
    assert.equal(f.sf('epic', 'show', epic).json.status, 'done');
  },
);

/** A pre-commit hook for the main worktree only: its first commit (a squash merge) waits, bounded, until both epics are verified, then two passes more. */
const HOLD_FIRST_MERGE = String.raw`
const { execFileSync } = require('node:child_process');
const { existsSync, writeFileSync } = require('node:fs');
const [cli, main, marker, ...epics] = process.argv.slice(2);
const top = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
if (top !== main || existsSync(marker)) process.exit(0);
writeFileSync(marker, 'held\n');
const status = (id) => JSON.parse(execFileSync(process.execPath, [cli, 'epic', 'show', id, '--json'], { encoding: 'utf8' })).status;
const wait = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
for (let i = 0; i < 600 && !epics.every((id) => status(id) === 'verified'); i++) wait(200);
wait(3000);
`;

test(
  "Springfield's own merge in progress is not a person's uncommitted change: the next verified epic's merge queues behind it, no wait for a person is said",
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const first = f.epic('First merge');
    const second = f.epic('Second merge');
    assert.equal(f.orchestrate().code, 0);
    approve(f, first);
    approve(f, second);
    const hook = join(f.base, 'hold-first-merge.cjs');
    writeFileSync(hook, HOLD_FIRST_MERGE);
    const hooks = join(f.repo, '.git', 'hooks');
    const args = [CLI_PATH, f.repo, join(f.base, 'held'), first, second].map((a) => `'${a}'`).join(' ');
    writeFileSync(join(hooks, 'pre-commit'), `#!/bin/sh\nexec '${process.execPath}' '${hook}' ${args}\n`, {
      mode: 0o755,
    });
    const run = f.orchestrate();
    assert.equal(run.code, 0, run.stderr);
    assert.ok(existsSync(join(f.base, 'held')), 'a merge commit was held while both epics were verified');
    assert.equal(f.sf('epic', 'show', first).json.status, 'done');
    assert.equal(f.sf('epic', 'show', second).json.status, 'done');
    assert.doesNotMatch(run.stderr, /uncommitted changes/, 'no wait for a person while Springfield merges');
  },
);

test(
  'an epic that moves between the pass that chose its builder and the start (here deferred by a person meanwhile) gets no builder: the start re-reads it',
  { timeout: 300_000 },
  async (t) => {
    const f = faultRepo(t);
    const epic = f.epic('Moves meanwhile');
    assert.equal(f.orchestrate().code, 0);
    approve(f, epic);
    // Ralph's command is a program named `claude`, so the scheduler checks its login before the start
    // (docs/agents.md, "Preflight"); that check, run after the pass chose Ralph, is where the person's
    // defer lands: deterministically between the choice and the start.
    const bin = join(f.base, 'bin');
    mkdirSync(bin);
    const ran = join(f.base, 'ralph-ran');
    const claude = join(bin, 'claude');
    writeFileSync(
      claude,
      `#!${process.execPath}
const { appendFileSync } = require('node:fs');
const { spawnSync } = require('node:child_process');
if (process.argv.includes('auth')) {
  spawnSync(process.execPath, [${JSON.stringify(CLI_PATH)}, 'epic', 'defer', ${JSON.stringify(epic)}, '--reason', 'not now'], { cwd: ${JSON.stringify(f.repo)}, stdio: 'ignore', env: { ...process.env, SPRINGFIELD_AGENT: '' } });
  console.log(JSON.stringify({ loggedIn: true }));
} else appendFileSync(${JSON.stringify(ran)}, 'ran\\n');
`,
    );
    chmodSync(claude, 0o755);
    f.config({ roles: { lisa: [process.execPath, join(f.base, 'agent.cjs')], ralph: [claude] } });
    const run = f.orchestrate();
    assert.equal(run.code, 0, run.stderr);
    const shown = f.sf('epic', 'show', epic).json;
    assert.equal(shown.status, 'deferred', 'the defer landed while the scheduler was starting Ralph');
    assert.equal(existsSync(ran), false, 'Ralph never ran on the deferred epic');
    assert.match(run.stderr, new RegExp(`${epic}: not starting Ralph: it is deferred now`), run.stderr);
    const runs = f.sf('runs', '--epic', epic).json as { runs?: { role: string }[] };
    assert.deepEqual(
      (runs.runs ?? []).filter((r) => r.role === 'ralph'),
      [],
      'no Ralph run recorded',
    );
  },
);
