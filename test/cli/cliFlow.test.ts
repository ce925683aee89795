import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  ArtifactResult,
  CompleteResult,
  EventView,
  HeartbeatResult,
  InitResult,
  ReadyResult,
  ResetResult,
  StartResult,
  StepView,
  UpdateResult,
} from '../../src/core/store/types.ts';
import { STEP_COMMANDS } from '../../src/cli/fastPath/stepNames.ts';
import { assertClaimed, assertFails, assertNotClaimed, assertOk, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runCli, runJson, showSteps } from '../helpers/cliInProcess.ts';

const PLAN = `# Plan: Flow

## Step 1: Scaffold {#step-1}
**Tasks:**
- [ ] Create the package
- [ ] Add a README
**Tests:**
- [ ] Smoke test

### Step 1.1: Lint config {#step-1-1}
**Tasks:**
- [ ] Add eslint

## Step 2: Parser {#step-2}
**Depends on:** #step-1
**Tasks:**
- [ ] Write the parser

## Step 3: Docs {#step-3}
**Tasks:**
- [ ] Write docs

## Step 4: Release {#step-4}
**Depends on:** #step-2, #step-3
**Checkpoints:**
- [ ] Tag pushed
`;

const P = 'plans/flow.md';

const sf = runJson;
const claimed = assertClaimed;
const notClaimed = assertNotClaimed;

async function step(cwd: string, anchor: string): Promise<StepView> {
  const s = (await showSteps(cwd, P)).get(anchor);
  assert.ok(s, `no step ${anchor}`);
  return s;
}

describe('the full flow across two worktrees', () => {
  let repo: Repo;
  let main: string;
  let a: string;
  let b: string;
  before(() => {
    repo = makeRepo({ files: { [P]: PLAN }, worktrees: ['a', 'b'] });
    main = repo.root;
    a = repo.worktree('a');
    b = repo.worktree('b');
  });
  after(() => repo.cleanup());

  test('init reports the plan it recorded and adds .springfield/ to .gitignore', async () => {
    const r = assertOk<InitResult>(await sf(main, ['init', P]));
    assert.equal(r.plan_path, P);
    assert.match(r.plan_hash, /^[0-9a-f]{64}$/);
    assert.equal(r.steps_created, 5);
    assert.equal(r.checklist_items_created, 7);
    assert.equal(r.already_initialized, false);
    assert.deepEqual(
      readFileSync(join(main, '.gitignore'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('springfield')),
      ['.springfield/'],
    );
  });

  test('init again (from any worktree) is a no-op reporting already_initialized', async () => {
    const first = assertOk<InitResult>(await sf(main, ['init', P]));
    const fromA = assertOk<InitResult>(await sf(a, ['init', P]));
    for (const r of [first, fromA]) {
      assert.equal(r.already_initialized, true);
      assert.equal(r.steps_created, 0);
      assert.equal(r.checklist_items_created, 0);
    }
    assert.equal(first.plan_hash, fromA.plan_hash);
    assert.equal(
      readFileSync(join(main, '.gitignore'), 'utf8').match(/\.springfield\//g)?.length,
      1,
      '.gitignore entry is not duplicated',
    );
  });

  test('claims go by step_index, respect dependencies, and carry the documented fields', async () => {
    const before = Date.now();
    const first = claimed(await sf(a, ['claim', P]));
    const second = claimed(await sf(b, ['claim', P]));
    const third = notClaimed(await sf(b, ['claim', P]));
    assert.deepEqual(
      {
        anchor: first.step_anchor,
        title: first.step_title,
        index: first.step_index,
        token: first.claim_token,
        substeps: first.substeps,
      },
      { anchor: 'step-1', title: 'Scaffold', index: 0, token: 1, substeps: ['step-1-1'] },
    );
    assert.equal(first.remaining_ready, 1, 'step-3 is still ready');
    assert.equal(first.total_remaining, 4);
    assert.equal(first.reclaimed_from_expired, false);
    assert.equal(first.claimed_by, a);
    const lease = Date.parse(first.lease_expires_at) - before;
    assert.ok(lease > 7190_000 && lease < 7260_000, `default lease is 7200 s, got ${lease} ms`);
    assert.deepEqual(
      [second.step_anchor, second.step_index, second.claim_token, second.remaining_ready],
      ['step-3', 3, 1, 0],
    );
    assert.equal(second.claimed_by, b);
    assert.equal(third.reason, 'no_ready_steps');
    assert.deepEqual(third.blocked_steps, ['step-2', 'step-4']);
    const ready = assertOk<ReadyResult>(await sf(main, ['ready', P]));
    assert.deepEqual(ready.claimed_steps, ['step-1', 'step-3']);
    assert.deepEqual(ready.ready_steps, []);
    const sub = await step(main, 'step-1-1');
    assert.deepEqual(
      [sub.status, sub.claimed_by, sub.claim_token],
      ['claimed', a, 1],
      'substeps are claimed with their parent',
    );
  });

  test('the holder can start, heartbeat, update and record artifacts', async () => {
    const started = assertOk<StartResult>(await sf(a, ['start', P, 'step-1']));
    const beforeBeat = Date.now();
    const beat = assertOk<HeartbeatResult>(await sf(a, ['heartbeat', P, 'step-1', '--lease', '600']));
    const afterBeat = Date.now();
    const updated = assertOk<UpdateResult>(
      await sf(a, ['update', P, 'step-1', '--task', '0', 'completed', '--task', '1', 'in_progress']),
    );
    const artifact = assertOk<ArtifactResult>(
      await sf(a, ['artifact', P, 'step-1', '--kind', 'note', '--summary', 'scaffold chosen']),
    );
    assert.equal(started.status, 'in_progress');
    assert.equal(beat.claim_token, 1);
    const lease = Date.parse(beat.lease_expires_at) - 600_000;
    assert.ok(lease >= beforeBeat - 1000 && lease <= afterBeat + 1000, 'heartbeat set the new lease: 600 s from then');
    assert.equal(updated.updated, 2);
    assert.deepEqual(updated.tasks, { open: 0, in_progress: 1, completed: 1 });
    assert.equal(artifact.recorded, true);
    assert.equal(artifact.kind, 'note');
    const s = await step(main, 'step-1');
    assert.equal(s.status, 'in_progress');
    assert.deepEqual(
      s.items.map((i) => i.status),
      ['completed', 'in_progress', 'open'],
    );
  });

  test('a non-holder is refused with not_holder for every mutation, and nothing changes', async () => {
    const before = await showSteps(main, P);
    const attempts = [
      ['start', P, 'step-1'],
      ['heartbeat', P, 'step-1'],
      ['update', P, 'step-1', '--all', 'completed'],
      ['artifact', P, 'step-1', '--kind', 'note', '--summary', 'sneaky'],
      ['complete', P, 'step-1', '--force', 'take over'],
      ['update', P, 'step-1-1', '--task', '0', 'completed'],
    ];

    for (const args of attempts) {
      const r = await sf(b, args);
      const error = assertFails(r, 1, 'not_holder');
      assert.ok(error.message.includes(a) && error.message.includes(b), error.message);
    }
    assert.deepEqual(await showSteps(main, P), before);
  });

  test('a stale --token or SPRINGFIELD_CLAIM_TOKEN is refused, a token never given is unknown; the current one is honoured', async () => {
    const flag = await sf(a, ['heartbeat', P, 'step-1', '--token', '0']);
    const env = await sf(a, ['update', P, 'step-1', '--task', '1', 'completed'], { SPRINGFIELD_CLAIM_TOKEN: '0' });
    const future = await sf(a, ['heartbeat', P, 'step-1', '--token', '7']);
    const good = await sf(a, ['heartbeat', P, 'step-1'], { SPRINGFIELD_CLAIM_TOKEN: '1' });
    assert.match(assertFails(flag, 1, 'stale_token').message, /token 0 is stale \(current 1\)/);
    assertFails(env, 1, 'stale_token');
    const unknown = assertFails(future, 2, 'unknown_token').message;
    assert.match(unknown, /claim token 7 is unknown/);
    assert.doesNotMatch(unknown, /reclaimed/, 'a token no claim was given says so, not that the lease was reclaimed');
    assert.equal(assertOk<HeartbeatResult>(good).claim_token, 1);
    assert.equal((await step(main, 'step-1')).items[1]?.status, 'in_progress', 'the stale update changed nothing');
  });

  test('complete is strict: open items and substeps are refused with incomplete', async () => {
    const r = await sf(a, ['complete', P, 'step-1']);
    const error = assertFails(r, 1, 'incomplete');
    assert.match(
      error.message,
      /3 open items \(task 1 "Add a README", test 0 "Smoke test", step-1-1 task 0 "Add eslint"\)/,
      "the substep's item counts too",
    );
    assert.match(error.message, /step-1-1/);
    assert.match(error.message, /--force/);
    assert.equal((await step(main, 'step-1')).status, 'in_progress');
  });

  test('update leaves a finished substep claimed; the parent completes with it, its token and a commit git resolves to the full hash', async () => {
    const sub = assertOk<UpdateResult>(await sf(a, ['update', P, 'step-1-1', '--all-tasks', 'completed']));
    assertOk(await sf(a, ['update', P, 'step-1', '--all', 'completed']));
    repo.git(['commit', '-q', '--allow-empty', '-m', 'scaffold'], a);
    const full = repo.git(['rev-parse', 'HEAD'], a);
    const unknown = await sf(a, ['complete', P, 'step-1', '--token', '1', '--commit', 'abc1234']);
    const done = assertOk<CompleteResult>(
      await sf(a, ['complete', P, 'step-1', '--token', '1', '--commit', full.slice(0, 8)]),
    );
    const again = assertOk<CompleteResult>(await sf(a, ['complete', P, 'step-1', '--token', '1']));
    assert.equal(sub.step_status, 'claimed', 'update never completes a step, a substep included');
    assert.match(assertFails(unknown, 2, 'unknown_commit').message, /^--commit abc1234: no such commit in /);
    assert.deepEqual(
      [done.completed, done.already_completed, done.forced, done.plan_completed, done.remaining_steps],
      [true, false, false, false, 3],
    );
    assert.equal(done.commit_hash, full, 'the full hash is stored, not the abbreviation given');
    assert.equal(again.already_completed, true, 'completing again as the same holder is a no-op success');
    assert.equal((await step(main, 'step-1')).commit_hash, full);
    assert.equal((await step(main, 'step-1-1')).status, 'completed', 'the finished substep went with its parent');
  });

  test('show prints progress bars and the overall line', async () => {
    const r = await runCli(main, ['show', P]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes('█') && r.stdout.includes('░'), r.stdout);
    assert.match(r.stdout, /Overall: 1\/4 steps complete/);
    assert.match(r.stdout, /Step 1: Scaffold \[completed\]/);
  });

  test('complete --force records its reason and completes the open items', async () => {
    const forced = assertOk<CompleteResult>(await sf(b, ['complete', P, 'step-3', '--force', 'docs move to the wiki']));
    assert.deepEqual(
      [forced.forced, forced.force_reason, forced.incomplete_items_auto_completed],
      [true, 'docs move to the wiki', 1],
    );
    const s = await step(main, 'step-3');
    assert.equal(s.complete_reason, 'docs move to the wiki');
    assert.deepEqual(
      s.items.map((i) => i.status),
      ['completed'],
    );
  });

  test('reset returns a step to pending and fences the old holder', async () => {
    const held = claimed(await sf(a, ['claim', P]));
    assert.deepEqual([held.step_anchor, held.claim_token], ['step-2', 1]);
    assertOk(await sf(a, ['start', P, 'step-2']));
    const reset = assertOk<ResetResult>(await sf(main, ['reset', P, 'step-2', '--reason', 'worktree a went away']));
    const afterReset = await step(main, 'step-2');
    const oldHolder = await sf(a, ['complete', P, 'step-2', '--token', '1', '--force', 'late']);
    const again = claimed(await sf(a, ['claim', P]));
    const staleAfterReclaim = await sf(a, ['update', P, 'step-2', '--all', 'completed', '--token', '1']);
    assert.deepEqual([reset.from_status, reset.previous_holder], ['in_progress', a]);
    assert.deepEqual([afterReset.status, afterReset.claimed_by, afterReset.lease_expires_at], ['pending', null, null]);
    assertFails(oldHolder, 1, 'not_claimed');
    assert.equal(again.step_anchor, 'step-2');
    assert.ok(again.claim_token > held.claim_token, `token must grow: ${held.claim_token} → ${again.claim_token}`);
    assertFails(staleAfterReclaim, 1, 'stale_token');
  });

  test('the last step completes the plan; then claim reports all_completed', async () => {
    assertOk(await sf(a, ['update', P, 'step-2', '--all', 'completed']));
    assertOk(await sf(a, ['complete', P, 'step-2']));
    assert.equal(claimed(await sf(b, ['claim', P])).step_anchor, 'step-4');
    assertOk(await sf(b, ['update', P, 'step-4', '--checkpoint', '0', 'completed']));
    const last = assertOk<CompleteResult>(await sf(b, ['complete', P, 'step-4']));
    const none = notClaimed(await sf(a, ['claim', P]));
    assert.equal(last.plan_completed, true);
    assert.equal(last.remaining_steps, 0);
    assert.equal(none.reason, 'all_completed');
    assert.equal(none.all_completed, true);
    assert.match((await runCli(main, ['show', P])).stdout, /Overall: 4\/4 steps complete \(100%\)/);
  });

  test('events --json lists claims and completions with worktree and from/to', async () => {
    const { events } = assertOk<{ events: EventView[] }>(await sf(main, ['events', P]));
    const claims = events.filter((e) => e.entity === 'step' && e.action === 'claim');
    assert.deepEqual(
      claims.map((e) => [e.step_anchor, e.worktree, e.from_status, e.to_status]),
      [
        ['step-1', a, 'pending', 'claimed'],
        ['step-3', b, 'pending', 'claimed'],
        ['step-2', a, 'pending', 'claimed'],
        ['step-2', a, 'pending', 'claimed'],
        ['step-4', b, 'pending', 'claimed'],
      ],
    );
    const completes = events.filter((e) => e.entity === 'step' && e.action === 'complete');
    assert.deepEqual(
      completes.map((e) => [e.step_anchor, e.worktree, e.to_status]),
      [
        ['step-1', a, 'completed'],
        ['step-3', b, 'completed'],
        ['step-2', a, 'completed'],
        ['step-4', b, 'completed'],
      ],
    );
    assert.deepEqual(
      (completes[0]?.data as { substeps_completed?: string[] }).substeps_completed,
      ['step-1-1'],
      'the substep completed with its parent, in its event',
    );
    assert.equal(completes.find((e) => e.step_anchor === 'step-3')?.reason, 'docs move to the wiki');
    const reset = events.find((e) => e.action === 'reset');
    assert.deepEqual(
      [reset?.worktree, reset?.from_status, reset?.to_status, reset?.reason],
      [main, 'in_progress', 'pending', 'worktree a went away'],
    );
    assert.deepEqual(
      events.map((e) => e.id),
      [...events.map((e) => e.id)].sort((x, y) => x - y),
    );
  });
});

describe('an expired lease', () => {
  let repo: Repo;
  before(async () => {
    repo = makeRepo({ files: { [P]: PLAN }, worktrees: ['a', 'b'] });
    assertOk(await sf(repo.root, ['init', P]));
  });
  after(() => repo.cleanup());

  test('is reclaimed by another worktree with a higher token; the old holder can no longer complete', async () => {
    const a = repo.worktree('a');
    const b = repo.worktree('b');
    const first = claimed(await sf(a, ['claim', P, '--lease', '1']));
    assertOk(await sf(a, ['update', P, 'step-1', '--task', '0', 'in_progress']));
    await sleep(1200);
    const second = claimed(await sf(b, ['claim', P]));
    const oldComplete = await sf(a, ['complete', P, 'step-1', '--force', 'i was here first']);
    const oldWithToken = await sf(a, ['heartbeat', P, 'step-1', '--token', String(first.claim_token)]);
    assert.equal(second.step_anchor, 'step-1');
    assert.equal(second.reclaimed_from_expired, true);
    assert.equal(second.previous_holder, a);
    assert.ok(second.claim_token > first.claim_token);
    assertFails(oldComplete, 1, 'not_holder');
    assertFails(oldWithToken, 1, 'not_holder');
    const s = await step(repo.root, 'step-1');
    assert.deepEqual([s.status, s.claimed_by, s.claim_token], ['claimed', b, second.claim_token]);
    assert.equal(s.items[0]?.status, 'open', 'in-progress items of the expired holder are reopened');
    assert.deepEqual((await step(repo.root, 'step-1-1')).claimed_by, b, 'the substep moves with its parent');
  });

  test('a takeover says from whom, by agent id, and how long ago the lease ran out', async () => {
    const a = repo.worktree('a');
    const b = repo.worktree('b');
    assertOk(await sf(b, ['reset', P, 'step-1']));
    claimed(await sf(a, ['claim', P, '--lease', '1'], { SPRINGFIELD_AGENT: 'ralph-b' }));
    await sleep(1200);
    const text = await runCli(b, ['claim', P]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^Claimed step-1: Scaffold \(taken over from ralph-b, lease expired \d+ s ago\)$/m);
    assert.doesNotMatch(
      text.stdout,
      new RegExp(a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
      'no worktree path in the text',
    );
  });
});

describe('plan drift', () => {
  let repo: Repo;
  let a: string;
  let b: string;
  const edit = (dir: string, from: string, to: string) => {
    const file = join(dir, P);
    const text = readFileSync(file, 'utf8');
    assert.ok(text.includes(from), `plan has no '${from}'`);
    writeFileSync(file, text.replace(from, to));
  };
  before(async () => {
    repo = makeRepo({ files: { [P]: PLAN }, worktrees: ['a', 'b'] });
    a = repo.worktree('a');
    b = repo.worktree('b');
    assertOk(await sf(repo.root, ['init', P]));
  });
  after(() => repo.cleanup());

  test('ticking a checkbox or re-wrapping text in the file is not drift', async () => {
    edit(b, '- [ ] Create the package', '- [x] Create the package');
    edit(b, '# Plan: Flow\n', '# Plan: Flow\n\nSome prose that\nwraps over lines.\n');
    const c = claimed(await sf(b, ['claim', P]));
    const done = assertOk<CompleteResult>(await sf(b, ['complete', P, 'step-1', '--force', 'bootstrap']));
    assert.equal(c.step_anchor, 'step-1');
    assert.equal(done.completed, true);
  });

  test('a changed step title is drift: claim, update and complete are refused with what changed', async () => {
    claimed(await sf(a, ['claim', P]));
    edit(a, '## Step 3: Docs {#step-3}', '## Step 3: Documentation {#step-3}');

    for (const args of [
      ['claim', P],
      ['update', P, 'step-2', '--all', 'completed'],
      ['complete', P, 'step-2', '--force', 'x'],
    ]) {
      const r = await sf(a, args);
      const error = assertFails(r, 1, 'plan_drift');
      assert.ok(
        error.message.includes('step-3 title changed') &&
          error.message.includes('Docs') &&
          error.message.includes('Documentation'),
        error.message,
      );
      assert.match(error.message, /init --force/);
    }
    assert.equal((await step(repo.root, 'step-2')).status, 'claimed');
  });

  test('init without --force on a drifted plan is refused with what changed, and writes nothing', async () => {
    const events = async () => assertOk<{ events: unknown[] }>(await sf(repo.root, ['events', '--json'])).events.length;
    const before = [await events(), JSON.stringify([...(await showSteps(repo.root, P))])];
    const error = assertFails(await sf(a, ['init', P]), 1, 'plan_drift');
    assert.ok(
      error.message.startsWith(`${P}: plan changed since init (`) && error.message.includes('step-3 title changed'),
      error.message,
    );
    assert.match(error.message, /init --force/);
    assert.deepEqual([await events(), JSON.stringify([...(await showSteps(repo.root, P))])], before);
  });

  test('init --force re-initialises from the edited file, keeping completed steps', async () => {
    const r = assertOk<InitResult>(await sf(a, ['init', P, '--force']));
    const nowOk = claimed(await sf(a, ['claim', P]));
    const otherCopy = await sf(b, ['claim', P]);
    assert.equal(r.reinitialized, true);
    assert.equal(r.steps_kept_completed, 2, 'step-1 and its substep step-1-1');
    const all = await showSteps(repo.root, P);
    assert.equal(all.get('step-1')?.status, 'completed');
    assert.equal(all.get('step-1')?.complete_reason, 'bootstrap');
    assert.equal(all.get('step-3')?.title, 'Documentation');
    assert.ok(['step-2', 'step-3'].includes(nowOk.step_anchor));
    assertFails(otherCopy, 1, 'plan_drift');
  });
});

test('--help for every command exits 0 with its usage line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'springfield-help-'));
  try {
    for (const name of STEP_COMMANDS) {
      const r = await runCli(dir, [name, '--help']);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      assert.ok(r.stdout.includes(`Usage: springfield ${name}`), `${name}: ${r.stdout}`);
      assert.equal(r.stderr, '');
    }
    const main = await runCli(dir, ['--help']);
    assert.equal(main.code, 0);
    assert.match(main.stdout, /Usage: springfield <command>/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
