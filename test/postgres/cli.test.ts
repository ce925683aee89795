// The CLI on PostgreSQL end to end: SPRINGFIELD_DATABASE_URL or --db selects it; two clones acting
// as two hosts share plans by path; doctor names the backend; the password is never printed or
// stored; a server that is down is exit 3 with one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  assertClaimed,
  assertFails,
  assertOk,
  ensureCli,
  makeRepo,
  runCli,
  runJson,
  type CliResult,
} from '../helpers/gitRepo.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { PG_SCHEMA_VERSION } from '../../src/core/store/postgres/migrations.ts';

const PLAN =
  '# Plan: Shared\n## Step 1: One\n- [ ] a\n## Step 2: Two\n**Depends on:** #step-1\n- [ ] b\n## Step 3: Three\n- [ ] c\n';
const pgServer = postgresForFile({ durability: 'fast' });

/** Two clones of one repository (same root commit), each its own working copy, as on two machines. */
function twoClones(t: { after(fn: () => void): void }) {
  const origin = makeRepo({ files: { 'plans/p.md': PLAN } });
  t.after(() => origin.cleanup());
  const clone = join(origin.tmp, 'clone-b');
  execFileSync('git', ['clone', '-q', origin.root, clone], { stdio: 'ignore' });
  return { a: origin.root, b: clone };
}

test('two clones on two hosts share one plan through PostgreSQL: claim, heartbeat, update, complete, ready, show', (t) => {
  ensureCli();
  const url = pgServer.server.createDatabase('cli_flow');
  const { a, b } = twoClones(t);
  const hostA = { SPRINGFIELD_DATABASE_URL: url, SPRINGFIELD_HOST: 'host-a' };
  const hostB = { SPRINGFIELD_HOST: 'host-b' };
  assertOk(runJson(a, ['init', 'plans/p.md'], hostA));
  assert.equal(existsSync(join(a, '.springfield', 'state.db')), false, 'no SQLite file is created');
  const first = assertClaimed(runJson(a, ['claim', 'plans/p.md'], hostA));
  const second = assertClaimed(runJson(b, ['claim', 'plans/p.md', '--db', url], hostB));
  assert.deepEqual(
    [first.step_anchor, second.step_anchor],
    ['step-1', 'step-3'],
    'the clone on host b sees the plan host a initialised, by its path',
  );
  assertFails(runJson(b, ['heartbeat', 'plans/p.md', 'step-1', '--db', url], hostB), 1, 'not_holder');
  assertOk(runJson(a, ['heartbeat', 'plans/p.md', 'step-1'], hostA));
  assertOk(runJson(a, ['start', 'plans/p.md', 'step-1'], hostA));
  assertFails(runJson(a, ['complete', 'plans/p.md', 'step-1'], hostA), 1, 'incomplete');
  assertOk(runJson(a, ['update', 'plans/p.md', 'step-1', '--task', '0', 'completed'], hostA));
  const done = assertOk<{ completed: boolean; remaining_steps: number }>(
    runJson(a, ['complete', 'plans/p.md', 'step-1'], hostA),
  );
  assert.deepEqual([done.completed, done.remaining_steps], [true, 2]);
  const ready = assertOk<{ ready_steps: string[]; claimed_steps: string[]; completed_steps: string[] }>(
    runJson(b, ['ready', 'plans/p.md', '--db', url], hostB),
  );
  assert.deepEqual(
    [ready.ready_steps, ready.claimed_steps, ready.completed_steps],
    [['step-2'], ['step-3'], ['step-1']],
  );
  const show = runCli(b, ['show', 'plans/p.md', '--db', url], hostB);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /Step 1: One \[completed\]/);
  const repoFile = readFileSync(join(a, '.git', 'springfield', 'repository'), 'utf8');
  assert.match(repoFile, /^[0-9a-f]{40} root_commit\n$/, 'the repository id is the root commit, cached in the git dir');
});

test('doctor says which backend and server; the password appears in no output, event or file', (t) => {
  ensureCli();
  const url = pgServer.server.createDatabase('cli_secret');
  const password = /:\/\/[^:]+:([^@]+)@/.exec(url)?.[1] ?? '';
  assert.ok(password.length >= 16);
  const { a } = twoClones(t);
  const env = { SPRINGFIELD_DATABASE_URL: url, SPRINGFIELD_HOST: 'host-a' };
  const outputs: CliResult[] = [];
  const run = (args: string[]) => {
    const r = runCli(a, args, env);
    outputs.push(r);
    return r;
  };
  run(['init', 'plans/p.md']);
  run(['claim', 'plans/p.md', '--json']);
  run(['complete', 'plans/p.md', 'step-1']);
  run(['complete', 'plans/p.md', 'step-1', '--force', 'reviewed', '--json']);
  run(['show', 'plans/p.md', '--json']);
  run(['events', 'plans/p.md', '--json']);
  run(['runs']);
  const reopened = run(['reopen', 'plans/p.md', 'step-1', '--reason', 'check']);
  const doctor = run(['doctor']);
  const doctorJson = run(['doctor', '--json']);
  run(['claim', 'plans/p.md', '--db', url.replace(/port=\d+/, 'port=1')]);
  assert.equal(doctor.code, 0, doctor.stderr);
  assert.match(
    doctor.stdout,
    /^ok +backend +PostgreSQL 15\.\d+.* at postgres:\/\/springfield@\/cli_secret\?host=[^ ]+&port=\d+ as springfield \(password from the URL\); this host is host-a$/m,
  );
  assert.match(doctor.stdout, /^ok +repository +[0-9a-f]{40} \(root commit\)$/m);
  assert.match(doctor.stdout, new RegExp(`^ok +schema +version ${PG_SCHEMA_VERSION}$`, 'm'));
  assert.equal((JSON.parse(doctorJson.stdout) as { db_path: string }).db_path.includes('cli_secret'), true);
  for (const r of outputs) {
    assert.ok(
      !r.stdout.includes(password) && !r.stderr.includes(password),
      `the password leaked in: ${r.stdout}${r.stderr}`,
    );
  }
  const stored = pgServer.server.psql(
    "SELECT string_agg(coalesce(data::text, '') || coalesce(reason, '') || coalesce(worktree, ''), ' ') FROM springfield.events",
    'cli_secret',
  );
  assert.ok(stored.length > 0 && !stored.includes(password), 'not in the event log either');
  assert.ok(!readFileSync(join(a, '.git', 'springfield', 'repository'), 'utf8').includes(password));
  assert.equal(outputs[6]?.code, 0, 'runs works on PostgreSQL');
  assert.doesNotMatch(reopened.stderr, /not available on PostgreSQL/, 'every operation is on PostgreSQL');
});

test('a server that is down: exit 3 and one line naming it; retrying once it is back loses and doubles nothing', (t) => {
  ensureCli();
  const url = pgServer.server.createDatabase('cli_down');
  const { a } = twoClones(t);
  const env = { SPRINGFIELD_DATABASE_URL: url, SPRINGFIELD_HOST: 'host-a' };
  assertOk(runJson(a, ['init', 'plans/p.md'], env));
  assertClaimed(runJson(a, ['claim', 'plans/p.md'], env));
  pgServer.server.down('fast');
  let back = false;
  try {
    const down = runCli(a, ['complete', 'plans/p.md', 'step-1', '--force', 'done'], env);
    const err = assertFails(down, 3, 'database_unreachable');
    assert.match(
      err.message,
      /^PostgreSQL at postgres:\/\/springfield@\/cli_down\?host=[^ ]+ is unreachable \(.*\); nothing was changed/,
    );
    pgServer.server.up();
    back = true;
  } finally {
    if (!back) pgServer.server.up();
  }
  const retried = assertOk<{ completed: boolean; already_completed: boolean }>(
    runJson(a, ['complete', 'plans/p.md', 'step-1', '--force', 'done'], env),
  );
  assert.deepEqual(
    [retried.completed, retried.already_completed],
    [true, false],
    'the first attempt changed nothing; the retry completes it',
  );
  const again = assertOk<{ already_completed: boolean }>(
    runJson(a, ['complete', 'plans/p.md', 'step-1', '--force', 'done'], env),
  );
  assert.equal(again.already_completed, true);
  const count = pgServer.server
    .psql(`SELECT count(*) FROM springfield.events WHERE action = 'complete' AND entity = 'step'`, 'cli_down')
    .trim();
  assert.equal(count, '1', 'one completion event');
});

test('an epic on PostgreSQL through the CLI: plan propose, request-changes, note, approve, epic start, context, debt, reopen and prune', (t) => {
  ensureCli();
  const url = pgServer.server.createDatabase('cli_epic');
  const { a, b } = twoClones(t);
  const hostA = { SPRINGFIELD_DATABASE_URL: url, SPRINGFIELD_HOST: 'host-a' };
  const hostB = { SPRINGFIELD_DATABASE_URL: url, SPRINGFIELD_HOST: 'host-b' };
  const epic = assertOk<{ id: string }>(runJson(a, ['epic', 'create', 'Shared work'], hostA));
  assertOk(runJson(a, ['plan', 'propose', epic.id, 'plans/p.md', '--agent', 'lisa'], hostA));
  assertOk(runJson(a, ['plan', 'request-changes', epic.id, '--feedback', 'name the risks'], hostA));
  assertOk(
    runJson(
      a,
      ['plan', 'note', epic.id, '--kind', 'risk', '--summary', 'the API pages at 100', '--agent', 'lisa'],
      hostA,
    ),
  );
  const planner = assertOk<{ previous_proposal: { feedback: string } | null; research: { summary: string }[] }>(
    runJson(b, ['context', '--epic', epic.id, '--role', 'lisa'], hostB),
  );
  assert.deepEqual(
    [planner.previous_proposal?.feedback, planner.research.map((n) => n.summary)],
    ['name the risks', ['the API pages at 100']],
    'host b reads what host a recorded',
  );
  assertOk(runJson(a, ['plan', 'propose', epic.id, 'plans/p.md', '--agent', 'lisa'], hostA));
  assertFails(runJson(a, ['plan', 'approve', epic.id, '--agent', 'lisa'], hostA), 1, 'self_approval');
  const approved = assertOk<{ version: number; transition: { to: string } }>(
    runJson(b, ['plan', 'approve', epic.id], hostB),
  );
  assert.deepEqual([approved.version, approved.transition.to], [2, 'ready']);
  const started = assertOk<{ to: string; worktree_path: string }>(runJson(a, ['epic', 'start', epic.id], hostA));
  assert.equal(started.to, 'in_progress');
  // The epic's work lives in its own worktree (docs/lifecycle.md): its builder claims there.
  const wt = started.worktree_path;
  const claim = assertClaimed(runJson(wt, ['claim', 'plans/p.md'], hostA));
  const builder = assertOk<{ epic: { id: string }; step: { anchor: string; held_by_you: boolean } }>(
    runJson(wt, ['context'], hostA),
  );
  assert.deepEqual(
    [builder.epic.id, builder.step.anchor, builder.step.held_by_you],
    [epic.id, claim.step_anchor, true],
  );
  const elsewhere = assertOk<{ step: unknown }>(runJson(b, ['context'], hostB));
  assert.equal(elsewhere.step, null, 'clone b on host b holds no step');
  assertOk(runJson(wt, ['complete', 'plans/p.md', 'step-1', '--force', 'done'], hostA));
  const reopened = assertOk<{ steps_reopened: string[]; status: string }>(
    runJson(b, ['reopen', 'plans/p.md', 'step-1', '--reason', 'regressed'], hostB),
  );
  assert.deepEqual([reopened.steps_reopened, reopened.status], [['step-1'], 'pending']);
  const deferred = assertOk<{ id: string }>(runJson(a, ['epic', 'create', 'Later'], hostA));
  assertOk(runJson(a, ['epic', 'defer', deferred.id, '--reason', 'after the launch'], hostA));
  const debt = assertOk<{ debt: { epic_id: string; reason: string }[] } | { epic_id: string; reason: string }[]>(
    runJson(b, ['debt'], hostB),
  );
  const rows = Array.isArray(debt) ? debt : debt.debt;
  assert.deepEqual(
    rows.map((d) => [d.epic_id, d.reason]),
    [[deferred.id, 'after the launch']],
  );

  // Prune looks at this clone's worktrees only, and the plan is every clone's (docs/postgres.md, "Repositories, hosts and holders").
  execFileSync('git', ['rm', '-q', 'plans/p.md'], { cwd: b });
  const dry = assertOk<{ pruned: string[]; dry_run: boolean }>(runJson(b, ['prune', '--dry-run'], hostB));
  assert.deepEqual([dry.pruned, dry.dry_run], [['plans/p.md'], true]);
  assertOk(runJson(a, ['show', 'plans/p.md'], hostA));
  const pruned = assertOk<{ pruned: string[]; dry_run: boolean }>(runJson(b, ['prune'], hostB));
  assert.deepEqual([pruned.pruned, pruned.dry_run], [['plans/p.md'], false]);
  assertFails(runJson(a, ['show', 'plans/p.md'], hostA), 2, 'unknown_plan');
  const history = assertOk<{ events: { action: string }[] }>(runJson(b, ['events', 'plans/p.md'], hostB));
  assert.equal(history.events.at(-1)?.action, 'prune', 'the pruned plan keeps its history');
});

test('commit and reconcile on PostgreSQL: the held step is found on this host, committed with its trailers and completed; a trailer committed by hand is reconciled', (t) => {
  ensureCli();
  const url = pgServer.server.createDatabase('cli_commit');
  const { a } = twoClones(t);
  const env = { SPRINGFIELD_DATABASE_URL: url, SPRINGFIELD_HOST: 'host-a' };
  const git = (args: string[]) => execFileSync('git', args, { cwd: a, encoding: 'utf8' }).trim();
  git(['config', 'user.email', 't@example.com']);
  git(['config', 'user.name', 'T']);
  assertOk(runJson(a, ['init', 'plans/p.md'], env));
  assertFails(runJson(a, ['commit', '-m', 'nothing held'], env), 2, 'no_claimed_step');
  assertClaimed(runJson(a, ['claim', 'plans/p.md'], env));
  assertOk(runJson(a, ['update', 'plans/p.md', 'step-1', '--all', 'completed'], env));
  writeFileSync(join(a, 'one.txt'), 'one\n');
  const out = assertOk<{ committed: boolean; step_anchor: string; commit_hash: string; state_update_failed: boolean }>(
    runJson(a, ['commit', '-m', 'feat: one'], env),
  );
  assert.deepEqual(
    [out.committed, out.step_anchor, out.state_update_failed, out.commit_hash],
    [true, 'step-1', false, git(['rev-parse', 'HEAD'])],
  );
  assert.equal(git(['log', '-1', '--format=%(trailers:key=Springfield-Step,valueonly)']), 'step-1');
  const shown = assertOk<{ plans: { steps: { anchor: string; status: string; commit_hash: string | null }[] }[] }>(
    runJson(a, ['show', 'plans/p.md'], env),
  );
  assert.deepEqual(
    shown.plans[0]?.steps.map((s) => [s.anchor, s.status, s.commit_hash]),
    [
      ['step-1', 'completed', out.commit_hash],
      ['step-2', 'pending', null],
      ['step-3', 'pending', null],
    ],
  );

  writeFileSync(join(a, 'three.txt'), 'three\n');
  git(['add', 'three.txt']);
  git(['commit', '-q', '-m', 'three by hand', '-m', 'Springfield-Step: step-3\nSpringfield-Plan: plans/p.md']);
  const rec = assertOk<{ reconciled: { step_anchor: string; commit_hash: string; from_status: string }[] }>(
    runJson(a, ['reconcile'], env),
  );
  assert.deepEqual(
    rec.reconciled.map((s) => [s.step_anchor, s.commit_hash, s.from_status]),
    [['step-3', git(['rev-parse', 'HEAD']), 'pending']],
  );
  const again = assertOk<{ reconciled: unknown[]; unchanged: number }>(runJson(a, ['reconcile'], env));
  assert.deepEqual([again.reconciled.length, again.unchanged], [0, 2], 'reconciling twice changes nothing');
});
