// The role prompts, end to end: stand-in agents (scripts/standInAgent.ts, real processes) that read
// only their context file and do what its prompt says through the CLI take an epic from planned to
// done under `springfield orchestrate`. A prompt whose commands are wrong makes its run fail.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertClaimed, assertOk, ensureCli, makeRepo, PROJECT_ROOT, type Repo } from '../helpers/gitRepo.ts';
import { runCli, runJson } from '../helpers/cliInProcess.ts';

const STAND_IN = join(PROJECT_ROOT, 'scripts', 'standInAgent.ts');
const AGENT = [process.execPath, STAND_IN, '$SPRINGFIELD_CONTEXT_FILE'];
const VERIFY = `const fs = require('node:fs'); if (!fs.existsSync('standin')) { console.error('nothing built yet'); process.exit(1); }`;

ensureCli();

// The scheduler's verification fails once both steps are built, until a fix is committed; Ralph's own
// run of the tests passes (as with a difference of environment), so the epic comes back to him without a step.
const VERIFY_FIX = `const fs = require('node:fs'); const f = fs.existsSync('standin') ? fs.readdirSync('standin') : [];
if (!process.env.SPRINGFIELD_ROLE && f.filter((x) => x.startsWith('step-')).length >= 2 && !f.some((x) => x.startsWith('fix-'))) { console.error('the greeting is wrong'); process.exit(1); }`;

async function setup(verify = VERIFY): Promise<{ repo: Repo; epic: string }> {
  const repo = makeRepo({ files: { '.gitignore': '.springfield/\n', 'verify.cjs': verify } });
  const epic = assertOk<{ id: string }>(
    await runJson(repo.root, [
      'epic',
      'create',
      'Greeting command',
      '--brief',
      'Print a friendly greeting.',
      '--complexity',
      'standard',
    ]),
  ).id;
  mkdirSync(join(repo.root, '.springfield'), { recursive: true });
  writeFileSync(
    join(repo.root, '.springfield', 'config.json'),
    JSON.stringify({
      roles: { lisa: AGENT, ralph: AGENT, bart: AGENT },
      verification: [[process.execPath, 'verify.cjs']],
      maxParallelAgents: 2,
    }),
  );
  assertOk(await runJson(repo.root, ['allow'])); // the person allows the commands the config names
  return { repo, epic };
}

async function orchestrate(repo: Repo): Promise<string> {
  const r = await runCli(repo.root, ['orchestrate', '--watch', '--until-idle', '--interval', '1']);
  assert.equal(r.code, 0, r.stderr);
  return r.stderr;
}

test(
  'stand-in agents following only their prompts take an epic from planned to done',
  { timeout: 240_000 },
  async (t) => {
    const { repo, epic } = await setup();
    t.after(() => repo.cleanup());

    const planning = await orchestrate(repo);
    const versions = assertOk<{ versions: { plan_path: string; status: string }[] }>(
      await runJson(repo.root, ['plan', 'show', epic]),
    ).versions;
    assert.deepEqual(
      versions.map((v) => [v.plan_path, v.status]),
      [[`plans/${epic}.md`, 'proposed']],
      planning,
    );
    // Lisa planned in a worktree of her own (docs/lifecycle.md): the plan is in the store, not in main.
    assert.equal(existsSync(join(repo.root, `plans/${epic}.md`)), false, 'nothing reached the main worktree');
    const plan = assertOk<{ version: { body: string } }>(await runJson(repo.root, ['plan', 'show', epic])).version.body;
    assert.match(plan, /^# Plan: Greeting command$/m, 'Lisa titled the plan from the epic');
    assert.match(planning, /waiting for a person's approval|approval/);

    assertOk(await runJson(repo.root, ['plan', 'approve', epic]));
    const building = await orchestrate(repo);
    const shown = assertOk<{ status: string }>(await runJson(repo.root, ['epic', 'show', epic]));
    assert.equal(shown.status, 'done', building);

    const runs = assertOk<{
      runs: { role: string; status: string; exit_code: number }[];
      sessions: Record<string, Record<string, number>>;
    }>(await runJson(repo.root, ['runs', '--epic', epic]));
    assert.deepEqual(
      runs.runs.filter((r) => r.exit_code !== 0),
      [],
      'every stand-in run succeeded',
    );
    assert.deepEqual(runs.sessions[epic], { lisa: 1, ralph: 2, bart: 1, lovejoy: 0, total: 4 });
    const signals = assertOk<{ signals: { type: string; locations: { file: string; line: number }[] }[] }>(
      await runJson(repo.root, ['signals', epic]),
    ).signals;
    assert.equal(signals.length, 1, 'Bart recorded exactly one signal');
    assert.equal(signals[0]?.type, 'pass');
    assert.ok((signals[0]?.locations.length ?? 0) > 0, 'with a file:line location from the diff');

    const log = repo.git(['log', '-1', '--format=%B']);
    assert.match(log, new RegExp(`Springfield-Epic: ${epic}`));
    assert.deepEqual(
      (log.match(/Springfield-Step: step-\d/g) ?? []).sort(),
      ['Springfield-Step: step-1', 'Springfield-Step: step-2'],
      'both steps were committed by Ralph with trailers',
    );
    assert.ok(
      existsSync(join(repo.root, 'standin', `step-1-${epic}.txt`)) &&
        existsSync(join(repo.root, 'standin', `step-2-${epic}.txt`)),
      "Ralph's edits are merged",
    );
    assert.ok(existsSync(join(repo.root, `plans/${epic}.md`)), 'the approved plan came back with the merge');
  },
);

test(
  "a failed verification after the last step sends the epic back to Ralph's fix-up prompt, which commits a fix",
  { timeout: 240_000 },
  async (t) => {
    const { repo, epic } = await setup(VERIFY_FIX);
    t.after(() => repo.cleanup());
    await orchestrate(repo);
    assertOk(await runJson(repo.root, ['plan', 'approve', epic]));
    const log = await orchestrate(repo);
    assert.match(log, /verification FAILED/);
    assert.equal(assertOk<{ status: string }>(await runJson(repo.root, ['epic', 'show', epic])).status, 'done', log);
    const runs = assertOk<{ sessions: Record<string, Record<string, number>> }>(
      await runJson(repo.root, ['runs', '--epic', epic]),
    );
    assert.deepEqual(runs.sessions[epic], { lisa: 1, ralph: 3, bart: 1, lovejoy: 0, total: 5 });
    assert.ok(
      readdirSync(join(repo.root, 'standin')).some((f) => f.startsWith('fix-')),
      "Ralph's fix is merged",
    );
  },
);

test(
  "a prompt with a wrong command makes the agent's run fail and releases its step",
  { timeout: 120_000 },
  async (t) => {
    const { repo, epic } = await setup();
    t.after(() => repo.cleanup());
    await orchestrate(repo);
    assertOk(await runJson(repo.root, ['plan', 'approve', epic]));
    const planPath = `plans/${epic}.md`;
    // Building by hand in the main worktree: the person takes the approved plan from the store first.
    mkdirSync(join(repo.root, 'plans'), { recursive: true });
    writeFileSync(
      join(repo.root, planPath),
      assertOk<{ version: { body: string } }>(await runJson(repo.root, ['plan', 'show', epic])).version.body,
    );
    // A repository's own Ralph prompt, with a misspelt command.
    const broken = readFileSync(join(PROJECT_ROOT, 'src/core/agents/prompts/ralph.md'), 'utf8').replace(
      'springfield start {{plan}}',
      'springfield strat {{plan}}',
    );
    mkdirSync(join(repo.root, '.springfield', 'prompts'));
    writeFileSync(join(repo.root, '.springfield', 'prompts', 'ralph.md'), broken);
    const wt = assertOk<{ worktree_path: string }>(await runJson(repo.root, ['epic', 'start', epic])).worktree_path;
    assertClaimed(await runJson(wt, ['claim', planPath], { SPRINGFIELD_AGENT: 'ralph' }));
    const r = await runCli(wt, ['run', '--role', 'ralph', '--epic', epic, '--step', 'step-1', '--', ...AGENT], {
      SPRINGFIELD_AGENT: 'ralph',
    });
    assert.equal(r.code, 1, `the stand-in exits 1: ${r.stdout}\n${r.stderr}`);
    assert.match(
      r.stderr,
      /stand-in agent: 'springfield strat .*' failed \(exit 2\): springfield: unknown command 'strat'/,
    );
    const step = assertOk<{ plans: { steps: { anchor: string; status: string }[] }[] }>(
      await runJson(repo.root, ['show', planPath]),
    ).plans[0]?.steps.find((s) => s.anchor === 'step-1');
    assert.equal(
      step?.status,
      'pending',
      'never completed, and released the moment the run failed (docs/scheduler-faults.md)',
    );
    const runs = assertOk<{ runs: { role: string; status: string; exit_code: number }[] }>(
      await runJson(repo.root, ['runs', '--epic', epic]),
    ).runs;
    const ralph = runs.find((x) => x.role === 'ralph');
    assert.deepEqual(
      [ralph?.status, ralph?.exit_code],
      ['failed', 1],
      'the run is recorded as failed with its exit code',
    );
  },
);

test("--pace (the demo's delay before each command) is read before the context file; a bad value is refused in one line", async () => {
  const { parseArgs } = await import('../../scripts/standInAgent.ts');
  assert.deepEqual(parseArgs(['--pace', '0.5', 'ctx.md']), { file: 'ctx.md', paceMs: 500 });
  assert.deepEqual(parseArgs(['ctx.md']), { file: 'ctx.md', paceMs: 0 });
  const r = spawnSync(process.execPath, [STAND_IN, '--pace', 'soon', 'ctx.md'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.equal(r.stderr, "stand-in agent: --pace takes seconds between 0 and 60, got 'soon'\n");
});
