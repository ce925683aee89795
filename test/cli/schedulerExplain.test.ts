// Why the scheduler started nothing: the epics whose next role has no agent (unstaffedEpics), the
// words a person reads after a pass (reportPass), and the same through `springfield orchestrate` on a
// real repository, where an epic built with no verification configured says so when it completes.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { EpicSnapshot, SchedulerConfig } from '../../src/core/scheduler/types.ts';
import { unstaffedEpics } from '../../src/core/scheduler/unstaffed.ts';
import { reportPass, type SchedulerPass } from '../../src/extension/model/schedulerReport.ts';
import { cleanEnv } from '../helpers/gitRepo.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(root, 'dist', 'cli.cjs');

function epic(over: Partial<EpicSnapshot>): EpicSnapshot {
  return {
    id: 'sf-0001',
    title: 'E',
    status: 'planned',
    statusReason: null,
    priority: 'P2',
    complexity: 'standard',
    iteration: 0,
    buildBudget: 20,
    planIteration: 0,
    planBudget: 5,
    planPath: null,
    awaitingApproval: false,
    steps: { total: 0, completed: 0, ready: [], claimedLive: [] },
    worktree: null,
    verification: { lastVerdict: null, sameFailureStreak: 0, running: false, unverifiedBuild: false },
    reworkPending: false,
    review: { signalsThisIteration: 0, bartRunsThisIteration: 0 },
    signalsAwaitingPerson: 0,
    mergeApprovedByPerson: false,
    mergeQueued: false,
    faults: {},
    setupDone: false,
    ...over,
  };
}

const config = (roles: SchedulerConfig['roles']): SchedulerConfig => ({
  maxParallelAgents: 3,
  runTimeoutMs: 3_600_000,
  retryLimit: 3,
  retryBackoffMs: [15_000],
  setupConfigured: false,
  sameFailureLimit: 3,
  roles,
  verificationConfigured: false,
});

test('unstaffedEpics: the epics whose next role has no agent, and only those', () => {
  const epics = [
    epic({ id: 'sf-0001', status: 'planned' }),
    epic({
      id: 'sf-0002',
      status: 'in_progress',
      planPath: 'p.md',
      steps: { total: 2, completed: 0, ready: ['step-1'], claimedLive: [] },
    }),
    epic({
      id: 'sf-0003',
      status: 'in_progress',
      planPath: 'q.md',
      steps: { total: 2, completed: 0, ready: [], claimedLive: ['step-1', 'step-2'] },
    }),
    epic({ id: 'sf-0004', status: 'implemented' }),
    epic({ id: 'sf-0005', status: 'planned', awaitingApproval: true }),
    epic({ id: 'sf-0006', status: 'done' }),
  ];
  const none = unstaffedEpics(epics, config({}), new Set());
  assert.deepEqual(
    none.map((u) => [u.epic_id, u.role]),
    [
      ['sf-0001', 'lisa'],
      ['sf-0002', 'ralph'],
      ['sf-0004', 'bart'],
    ],
    'a planned epic needs Lisa, a ready step Ralph, an implemented epic Bart; a plan awaiting approval waits for a person, steps held by others wait for them',
  );
  assert.equal(none[0]?.message, 'Lisa would write its plan, but no agent is configured for Lisa');
  const some = unstaffedEpics(epics, config({ lisa: ['x'], bart: ['y'] }), new Set(['sf-0004']));
  assert.deepEqual(
    some.map((u) => u.epic_id),
    ['sf-0002'],
    'configured roles and epics acted on are not reported',
  );
  assert.deepEqual(
    unstaffedEpics(epics, config({ lisa: [] }), new Set()).map((u) => u.role),
    ['lisa', 'ralph', 'bart'],
    'an empty command is no agent',
  );
});

test('reportPass: what was started, or why nothing was, and when to offer Configure agents…', () => {
  const base: SchedulerPass = {
    kind: 'once',
    actions: [],
    waiting: [],
    unstaffed: [],
    busy: false,
    roles: ['lisa', 'ralph', 'bart'],
  };
  const noRoles = reportPass({
    ...base,
    roles: [],
    waiting: [
      { epic_id: 'sf-0005', kind: 'person', message: "a plan version is waiting for a person's approval", until: null },
    ],
  });
  assert.equal(noRoles.configure, true);
  assert.equal(
    noRoles.message,
    "Nothing was started because no agent is configured: there is no Lisa to plan, Ralph to build or Bart to review. Waiting: sf-0005 — a plan version is waiting for a person's approval.",
  );
  const unstaffed = reportPass({
    ...base,
    roles: ['lisa'],
    unstaffed: [
      { epic_id: 'sf-0002', role: 'ralph', message: '' },
      { epic_id: 'sf-0003', role: 'ralph', message: '' },
      { epic_id: 'sf-0004', role: 'bart', message: '' },
    ],
  });
  assert.deepEqual(unstaffed, {
    acted: false,
    configure: true,
    message:
      'Nothing was started because no agent is configured for Ralph or Bart: sf-0002 needs Ralph, sf-0003 needs Ralph and sf-0004 needs Bart.',
  });
  const backoff = reportPass({
    ...base,
    waiting: [
      {
        epic_id: 'sf-0007',
        kind: 'backoff',
        message: 'Ralph failed once in a row; retrying after a 15 s backoff',
        until: '2030-01-01T00:00:00Z',
      },
    ],
  });
  assert.deepEqual(backoff, {
    acted: false,
    configure: false,
    message: 'Nothing to start now. Waiting: sf-0007 — Ralph failed once in a row; retrying after a 15 s backoff.',
  });
  assert.match(
    reportPass({ ...base, busy: true }).message,
    /^Nothing new to start: the agents and work it started are still under way\.$/,
  );
  assert.match(reportPass(base).message, /^Nothing to start: no epic has work waiting for an agent/);
  const acted = reportPass({
    ...base,
    actions: [
      {
        kind: 'run',
        role: 'ralph',
        epicId: 'sf-0002',
        stepAnchor: 'step-1',
        worktree: null,
        newIteration: false,
        reason: '',
      },
      { kind: 'start_epic', epicId: 'sf-0008' },
    ],
  });
  assert.deepEqual(acted, {
    acted: true,
    configure: false,
    message: 'started Ralph on sf-0002 · step-1 and started sf-0008 in its own worktree',
  });
});

const PLAN = '# Plan: Docs\n\n## Step 1: Write {#step-1}\n**Tasks:**\n- [ ] Write it\n';
const AGENT = `
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const sf = (...a) => execFileSync(process.execPath, [${JSON.stringify(CLI)}, ...a], { encoding: 'utf8' });
if (process.env.SPRINGFIELD_ROLE === 'lisa') sf('plan', 'propose', process.env.SPRINGFIELD_EPIC, 'plans/docs.md');
if (process.env.SPRINGFIELD_ROLE === 'ralph') {
  fs.writeFileSync('docs.txt', 'docs\\n');
  sf('update', process.env.SPRINGFIELD_PLAN, process.env.SPRINGFIELD_STEP, '--all', 'completed');
  sf('commit', '-m', 'Write the docs');
}
`;

test(
  'orchestrate names the epics no agent is configured for; an epic built without verification says "no verification configured"',
  { timeout: 180_000 },
  (t) => {
    const base = mkdtempSync(join(tmpdir(), 'sf-explain-'));
    t.after(() => rmSync(base, { recursive: true, force: true }));
    const repo = join(base, 'repo');
    mkdirSync(join(repo, 'plans'), { recursive: true });
    writeFileSync(join(repo, 'plans', 'docs.md'), PLAN);
    writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
    const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, stdio: 'ignore', env: cleanEnv() });
    git('init', '-q', '-b', 'main');
    git('config', 'user.email', 't@example.com');
    git('config', 'user.name', 't');
    git('add', '-A');
    git('commit', '-qm', 'plan');
    const sf = (...args: string[]) => {
      const r = spawnSync(process.execPath, [CLI, ...args], {
        cwd: repo,
        encoding: 'utf8',
        timeout: 120_000,
        env: cleanEnv(),
      });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const id = JSON.parse(sf('epic', 'create', 'Docs', '--json').stdout).id as string;

    const idle = sf('orchestrate', '--once');
    assert.equal(idle.code, 0, idle.stderr);
    assert.match(idle.stdout, /Took 0 actions: nothing to do/);
    assert.match(
      idle.stdout,
      new RegExp(`No agent configured .*\\n  ${id}: Lisa would write its plan, but no agent is configured for Lisa`),
    );
    const json = JSON.parse(sf('orchestrate', '--once', '--json').stdout) as {
      unstaffed: { epic_id: string; role: string }[];
    };
    assert.deepEqual(
      json.unstaffed.map((u) => [u.epic_id, u.role]),
      [[id, 'lisa']],
    );

    const agent = join(base, 'agent.cjs');
    writeFileSync(agent, AGENT);
    writeFileSync(
      join(repo, '.springfield', 'config.json'),
      JSON.stringify({
        roles: { lisa: [process.execPath, agent], ralph: [process.execPath, agent] },
        maxParallelAgents: 1,
      }),
    );
    assert.equal(sf('allow').code, 0, 'the person allows what they configured (docs/trust.md)');
    const planned = sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
    assert.equal(planned.code, 0, planned.stderr);
    assert.doesNotMatch(planned.stdout, /No agent configured/, 'Lisa has an agent now; the plan waits for a person');
    assert.equal(sf('plan', 'approve', id).code, 0);
    const built = sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
    assert.equal(built.code, 0, built.stderr);
    assert.match(built.stdout, new RegExp(`  ${id}: Bart would review it, but no agent is configured for Bart`));
    const shown = JSON.parse(sf('epic', 'show', id, '--json').stdout) as { status: string; status_reason: string };
    assert.equal(shown.status, 'implemented');
    assert.match(shown.status_reason, /^mechanical completion: all steps completed, no verification configured; /);
  },
);
