import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { assertFails, CLI_PATH, ensureCli, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';

const PLAN = `# Plan: commit demo

## Step 1: Client {#step-1}
**Tasks:**
- [ ] write the client

## Step 2: Cache {#step-2}
**Tasks:**
- [ ] write the cache
`;

const OTHER = `# Plan: other

## Step 1: Other {#step-1}
**Tasks:**
- [ ] other work
`;

interface CommitJson {
  committed: boolean;
  commit_hash: string;
  step_anchor: string;
  plan_path: string;
  epic_id: string | null;
  state_update_failed: boolean;
  state_error?: { code: string; message: string };
  plan_completed?: boolean;
  remaining_steps?: number;
  forced?: boolean;
}

interface StepJson {
  anchor: string;
  status: string;
  commit_hash: string | null;
  claimed_by: string | null;
}

async function setup(worktrees: string[] = ['a', 'b']): Promise<Repo> {
  const repo = makeRepo({ files: { 'plans/p.md': PLAN, 'plans/q.md': OTHER }, worktrees });
  for (const plan of ['plans/p.md', 'plans/q.md']) assert.equal((await runCli(repo.root, ['init', plan])).code, 0);
  return repo;
}

/** Claims the next step of `plan` in `cwd` and ticks all its items, so complete is not refused. */
async function claimAndFinish(cwd: string, plan = 'plans/p.md'): Promise<string> {
  const claim = (await runCli(cwd, ['claim', plan, '--json'])).json<{ step_anchor: string }>();
  assert.equal((await runCli(cwd, ['update', plan, claim.step_anchor, '--all', 'completed'])).code, 0);
  return claim.step_anchor;
}

async function steps(cwd: string, plan = 'plans/p.md'): Promise<StepJson[]> {
  return (await runCli(cwd, ['show', plan, '--json'])).json<{ plans: { steps: StepJson[] }[] }>().plans[0]?.steps ?? [];
}

function head(repo: Repo, cwd: string): string {
  return repo.git(['rev-parse', 'HEAD'], cwd);
}

describe('springfield commit', () => {
  before(() => ensureCli());
  const repos: Repo[] = [];
  after(() => repos.forEach((r) => r.cleanup()));

  test('commits every change with the step and plan trailers, then completes the step', async () => {
    const repo = await setup();
    repos.push(repo);
    const a = repo.worktree('a');
    const anchor = await claimAndFinish(a);
    writeFileSync(join(a, 'client.ts'), 'export const client = 1;\n');
    const r = await runCli(a, ['commit', '-m', 'feat: add the client', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = r.json<CommitJson>();
    assert.equal(out.committed, true);
    assert.equal(out.state_update_failed, false);
    assert.equal(out.step_anchor, anchor);
    assert.equal(out.plan_path, 'plans/p.md');
    assert.equal(out.epic_id, null);
    assert.equal(out.plan_completed, false);
    assert.equal(out.remaining_steps, 1);
    assert.equal(out.commit_hash, head(repo, a));
    assert.equal(repo.git(['log', '-1', '--format=%(trailers:key=Springfield-Step,valueonly)'], a), 'step-1');
    assert.equal(repo.git(['log', '-1', '--format=%(trailers:key=Springfield-Plan,valueonly)'], a), 'plans/p.md');
    assert.equal(repo.git(['log', '-1', '--format=%(trailers:key=Springfield-Epic)'], a), '');
    assert.equal(repo.git(['log', '-1', '--format=%s'], a), 'feat: add the client');
    assert.deepEqual(repo.git(['show', '--name-only', '--format=', 'HEAD'], a).split('\n'), ['client.ts']);
    assert.equal(repo.git(['status', '--porcelain'], a), '');
    const step = (await steps(a)).find((s) => s.anchor === 'step-1');
    assert.equal(step?.status, 'completed');
    assert.equal(step?.commit_hash, out.commit_hash);
  });

  test('adds a Springfield-Epic trailer when the plan belongs to an epic', async () => {
    const repo = await setup();
    repos.push(repo);
    const db = new Database(join(repo.root, '.springfield', 'state.db'));
    db.prepare(
      `INSERT INTO epics (id, title, status, created_at, updated_at) VALUES ('sf-a3f8', 'Caching', 'in_progress', '2026-01-01', '2026-01-01')`,
    ).run();
    db.prepare(`UPDATE plans SET epic_id = 'sf-a3f8' WHERE plan_path = 'plans/p.md'`).run();
    db.close();
    const a = repo.worktree('a');
    await claimAndFinish(a);
    writeFileSync(join(a, 'client.ts'), 'x\n');
    const out = (await runCli(a, ['commit', '-m', 'client', '--json'])).json<CommitJson>();
    assert.equal(out.epic_id, 'sf-a3f8');
    assert.equal(repo.git(['log', '-1', '--format=%(trailers:key=Springfield-Epic,valueonly)'], a), 'sf-a3f8');
  });

  test('a worktree that does not hold the step is refused before anything is staged or committed', async () => {
    const repo = await setup();
    repos.push(repo);
    const a = repo.worktree('a');
    const b = repo.worktree('b');
    await claimAndFinish(a);
    writeFileSync(join(b, 'intruder.ts'), 'x\n');
    const before = head(repo, b);
    const r = await runCli(b, ['commit', '-m', 'not mine', '--step', 'step-1', '--plan', 'plans/p.md', '--json']);
    assertFails(r, 1, 'not_holder');
    assert.equal(head(repo, b), before);
    assert.equal(repo.git(['status', '--porcelain'], b), '?? intruder.ts');
    assert.equal((await steps(a)).find((s) => s.anchor === 'step-1')?.status, 'claimed');
  });

  test('open items are refused before committing unless --force gives a reason', async () => {
    const repo = await setup();
    repos.push(repo);
    const a = repo.worktree('a');
    await runCli(a, ['claim', 'plans/p.md']);
    writeFileSync(join(a, 'half.ts'), 'x\n');
    const before = head(repo, a);
    assertFails(await runCli(a, ['commit', '-m', 'half done', '--json']), 1, 'incomplete');
    assert.equal(head(repo, a), before);
    const out = (
      await runCli(a, ['commit', '-m', 'half done', '--force', 'items tracked elsewhere', '--json'])
    ).json<CommitJson>();
    assert.equal(out.state_update_failed, false);
    assert.equal(out.forced, true);
    assert.notEqual(head(repo, a), before);
  });

  test('bad input exits 2 with one line and creates no commit', async () => {
    const repo = await setup();
    repos.push(repo);
    const a = repo.worktree('a');
    await claimAndFinish(a);
    writeFileSync(join(a, 'work.ts'), 'x\n');
    const before = head(repo, a);
    const cases: [string[], string][] = [
      [['commit', '--json'], 'missing_option'],
      [['commit', '-m', '   ', '--json'], 'missing_value'],
      [['commit', '-m', 'x', '--bogus', '--json'], 'unknown_option'],
      [['commit', '-m', 'x', 'extra', '--json'], 'unexpected_argument'],
      [['commit', '-m', 'x', '--step', 'step-9', '--json'], 'unknown_step'],
      [['commit', '-m', 'x', '--step', 'step-1', '--plan', 'plans/missing.md', '--json'], 'unknown_plan'],
      [['commit', '-m', 'x', '--plan', '../outside.md', '--json'], 'plan_outside_worktree'],
      [['commit', '-m', 'x', '--force', '', '--json'], 'missing_value'],
      [['commit', '-m', 'x\n\nSpringfield-Step: step-2', '--json'], 'bad_message'],
    ];
    for (const [args, code] of cases) {
      assertFails(await runCli(a, args), 2, code);
      assert.equal(head(repo, a), before, args.join(' '));
    }
    assert.equal(repo.git(['status', '--porcelain'], a), '?? work.ts');
    assert.equal((await steps(a)).find((s) => s.anchor === 'step-1')?.status, 'claimed');
  });

  test('no held step, or several, is a usage error; --step/--plan or SPRINGFIELD_STEP/SPRINGFIELD_PLAN pick one', async () => {
    const repo = await setup();
    repos.push(repo);
    const a = repo.worktree('a');
    writeFileSync(join(a, 'work.ts'), 'x\n');
    assertFails(await runCli(a, ['commit', '-m', 'x', '--json']), 2, 'no_claimed_step');
    await claimAndFinish(a, 'plans/p.md');
    await claimAndFinish(a, 'plans/q.md');
    assertFails(await runCli(a, ['commit', '-m', 'x', '--json']), 2, 'ambiguous_step');
    assertFails(await runCli(a, ['commit', '-m', 'x', '--step', 'step-1', '--json']), 2, 'ambiguous_step');
    const bySub = join(a, 'src');
    mkdirSync(bySub);
    const viaEnv = (
      await runCli(bySub, ['commit', '-m', 'q step', '--json'], {
        SPRINGFIELD_STEP: 'step-1',
        SPRINGFIELD_PLAN: 'plans/q.md',
      })
    ).json<CommitJson>();
    assert.equal(viaEnv.plan_path, 'plans/q.md');
    assert.equal(viaEnv.plan_completed, true);
    writeFileSync(join(a, 'more.ts'), 'y\n');
    const viaPlan = (
      await runCli(bySub, ['commit', '-m', 'p step', '--plan', '../plans/p.md', '--json'])
    ).json<CommitJson>();
    assert.equal(viaPlan.plan_path, 'plans/p.md');
    assert.equal(viaPlan.step_anchor, 'step-1');
  });

  test('nothing to commit exits 1 without an empty commit; --no-add commits only what is staged', async () => {
    const repo = await setup();
    repos.push(repo);
    const a = repo.worktree('a');
    await claimAndFinish(a);
    const before = head(repo, a);
    const empty = assertFails(await runCli(a, ['commit', '-m', 'empty', '--json']), 1, 'nothing_to_commit');
    assert.match(
      empty.message,
      /if the step needs no change, complete it without a commit: springfield complete \S+\.md step-\d+$/,
      "the way out Ralph's prompt names",
    );
    assert.equal(head(repo, a), before);
    writeFileSync(join(a, 'staged.ts'), 's\n');
    writeFileSync(join(a, 'unstaged.ts'), 'u\n');
    assertFails(await runCli(a, ['commit', '-m', 'nothing staged', '--no-add', '--json']), 1, 'nothing_to_commit');
    repo.git(['add', 'staged.ts'], a);
    const out = (await runCli(a, ['commit', '-m', 'only staged', '--no-add', '--json'])).json<CommitJson>();
    assert.equal(out.state_update_failed, false);
    assert.deepEqual(repo.git(['show', '--name-only', '--format=', 'HEAD'], a).split('\n'), ['staged.ts']);
    assert.equal(repo.git(['status', '--porcelain'], a), '?? unstaged.ts');
  });

  test('never stages the state database, even when it sits unignored inside the worktree', async () => {
    const repo = makeRepo({ files: { 'plans/p.md': PLAN }, worktrees: ['a'] });
    repos.push(repo);
    const a = repo.worktree('a');
    const env = { SPRINGFIELD_DB: join(a, 'state', 'sf.db') };
    assert.equal((await runCli(a, ['init', 'plans/p.md'], env)).code, 0);
    const claim = (await runCli(a, ['claim', 'plans/p.md', '--json'], env)).json<{ step_anchor: string }>();
    await runCli(a, ['update', 'plans/p.md', claim.step_anchor, '--all', 'completed'], env);
    writeFileSync(join(a, 'code.ts'), 'c\n');
    const out = (await runCli(a, ['commit', '-m', 'code', '--json'], env)).json<CommitJson>();
    assert.equal(out.state_update_failed, false);
    assert.deepEqual(repo.git(['show', '--name-only', '--format=', 'HEAD'], a).split('\n'), ['code.ts']);
  });

  test('a state update that fails after a good commit exits 0 with state_update_failed, and reconcile repairs it', async () => {
    const repo = await setup();
    repos.push(repo);
    const a = repo.worktree('a');
    await claimAndFinish(a);
    const hook = join(repo.root, '.git', 'hooks', 'post-commit');
    writeFileSync(
      hook,
      '#!/bin/sh\nexec "$SF_NODE" "$SF_CLI" reset plans/p.md step-1 --reason "admin reset during commit" >/dev/null 2>&1\n',
    );
    chmodSync(hook, 0o755);
    writeFileSync(join(a, 'client.ts'), 'x\n');
    const r = await runCli(a, ['commit', '-m', 'raced', '--json'], { SF_NODE: process.execPath, SF_CLI: CLI_PATH });
    assert.equal(r.code, 0, r.stderr);
    const out = r.json<CommitJson>();
    assert.equal(out.committed, true);
    assert.equal(out.state_update_failed, true);
    assert.equal(out.state_error?.code, 'not_claimed');
    assert.match(r.stderr, /^springfield: warning: committed [0-9a-f]{12} but completing step-1 failed/);
    assert.equal(out.commit_hash, head(repo, a));
    assert.equal(repo.git(['log', '-1', '--format=%(trailers:key=Springfield-Step,valueonly)'], a), 'step-1');
    const step = (await steps(a)).find((s) => s.anchor === 'step-1');
    assert.equal(step?.status, 'pending');
    const rec = (await runCli(repo.root, ['reconcile', '--json'])).json<{
      reconciled: { step_anchor: string; commit_hash: string }[];
    }>();
    assert.deepEqual(
      rec.reconciled.map((s) => [s.step_anchor, s.commit_hash]),
      [['step-1', out.commit_hash]],
    );
    assert.equal((await steps(a)).find((s) => s.anchor === 'step-1')?.commit_hash, out.commit_hash);
  });
  test('a failing git call is one line with exit 3; an inherited GIT_DIR, index or injected hook never reaches git', async () => {
    const repo = await setup(['a']);
    repos.push(repo);
    const a = repo.worktree('a');
    await claimAndFinish(a);
    writeFileSync(join(a, 'client.ts'), 'x\n');
    const lock = join(repo.git(['rev-parse', '--absolute-git-dir'], a), 'index.lock');
    writeFileSync(lock, '');
    const before = head(repo, a);
    const failed = assertFails(await runCli(a, ['commit', '-m', 'locked', '--json']), 3, 'git_failed');
    assert.match(failed.message, /^git add failed in \S+: fatal: Unable to create '\S+index\.lock': File exists\.$/);
    assert.equal(head(repo, a), before);
    rmSync(lock);
    // What a parent git process (springfield run from a hook or an alias) or a person's shell leaves behind.
    const marker = join(repo.tmp, 'ran');
    const hooks = join(repo.tmp, 'hooks');
    mkdirSync(hooks);
    for (const program of [join(repo.tmp, 'editor.sh'), join(hooks, 'pre-commit')]) {
      writeFileSync(program, `#!/bin/sh\necho "$0" >> '${marker}'\nexit 1\n`);
      chmodSync(program, 0o755);
    }
    const mainHead = head(repo, repo.root);
    const r = await runCli(a, ['commit', '-m', 'inherited environment', '--json'], {
      GIT_DIR: join(repo.root, '.git'),
      GIT_WORK_TREE: repo.root,
      GIT_INDEX_FILE: join(repo.tmp, 'index'),
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'core.hooksPath',
      GIT_CONFIG_VALUE_0: hooks,
      GIT_EDITOR: join(repo.tmp, 'editor.sh'),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json<CommitJson>().commit_hash, head(repo, a));
    assert.deepEqual(repo.git(['show', '--name-only', '--format=', 'HEAD'], a).split('\n'), ['client.ts']);
    assert.equal(head(repo, repo.root), mainHead);
    assert.equal(existsSync(marker), false, 'no injected hook or editor ran');
  });
});
