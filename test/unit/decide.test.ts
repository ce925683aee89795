import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  COMPLEXITY_POLICY,
  transition,
  type Complexity,
  type EpicStatus,
  type Priority,
  type Role,
} from '../../src/core/epics/index.ts';
import { decide } from '../../src/core/scheduler/decide.ts';
import { MESSAGES, nextRoleFor } from '../../src/core/scheduler/rules.ts';
import type {
  Action,
  EpicSnapshot,
  ReviewSnapshot,
  RoleFaults,
  RunSnapshot,
  SchedulerConfig,
  SchedulerSnapshot,
  StepsSnapshot,
  VerificationSnapshot,
} from '../../src/core/scheduler/types.ts';

const NOW = new Date('2025-03-01T12:00:00.000Z');
const HOUR = 3_600_000;

interface EpicOptions extends Partial<Omit<EpicSnapshot, 'id' | 'status' | 'steps' | 'verification' | 'review'>> {
  steps?: Partial<StepsSnapshot>;
  verification?: Partial<VerificationSnapshot>;
  review?: Partial<ReviewSnapshot>;
}

/** A snapshot epic: standard, P2, two steps with step-1 ready, nothing verified yet. */
function epic(id: string, status: EpicStatus, options: EpicOptions = {}): EpicSnapshot {
  const { steps, verification, review, ...rest } = options;
  const complexity: Complexity = rest.complexity ?? 'standard';
  const started = !['planned', 'ready', 'blocked', 'deferred'].includes(status);
  return {
    id,
    title: `epic ${id}`,
    status,
    statusReason: null,
    priority: 'P2',
    complexity,
    iteration: started ? 1 : 0,
    buildBudget: COMPLEXITY_POLICY[complexity].buildIterations,
    planIteration: status === 'planned' ? 0 : 1,
    planBudget: COMPLEXITY_POLICY[complexity].planIterations,
    planPath: status === 'planned' ? null : `plans/${id}.md`,
    awaitingApproval: false,
    worktree: started ? `/wt/${id}` : null,
    reworkPending: false,
    signalsAwaitingPerson: 0,
    mergeApprovedByPerson: false,
    mergeQueued: false,
    faults: {},
    setupDone: false,
    ...rest,
    steps: { total: 2, completed: 0, ready: ['step-1'], claimedLive: [], ...steps },
    verification: { lastVerdict: null, sameFailureStreak: 0, running: false, unverifiedBuild: false, ...verification },
    review: { signalsThisIteration: 0, bartRunsThisIteration: 0, ...review },
  };
}

const DONE_STEPS: Partial<StepsSnapshot> = { completed: 2, ready: [] };

/** A role's record of `n` failures in a row, the last ended `secondsAgo` before NOW. */
function fault(n: number, secondsAgo: number, more: Partial<RoleFaults> = {}): RoleFaults {
  return {
    consecutive: n,
    lastEndedAt: new Date(NOW.getTime() - secondsAgo * 1000).toISOString(),
    lastRunId: 9,
    lastOutcome: 'failed',
    lastExitCode: 1,
    lastReason: 'exit 1',
    lastOutput: 'starting\nboom',
    ...more,
  };
}

function run(
  id: number,
  epicId: string | null,
  role: Role | 'setup',
  minutesAgo: number,
  stepAnchor: string | null = null,
): RunSnapshot {
  return { id, epicId, role, stepAnchor, startedAt: new Date(NOW.getTime() - minutesAgo * 60_000).toISOString() };
}

function config(options: Partial<SchedulerConfig> = {}): SchedulerConfig {
  return {
    maxParallelAgents: 2,
    runTimeoutMs: HOUR,
    sameFailureLimit: 3,
    verificationConfigured: true,
    retryLimit: 3,
    retryBackoffMs: [15_000, 60_000, 240_000],
    setupConfigured: false,
    roles: { lisa: ['lisa-agent'], ralph: ['ralph-agent'], bart: ['bart-agent'], lovejoy: ['lovejoy-agent'] },
    ...options,
  };
}

function agent(
  role: Role,
  epicId: string,
  reason: string,
  stepAnchor: string | null = null,
  more: { worktree?: string | null; newIteration?: boolean } = {},
): Action {
  const worktree = more.worktree === undefined ? `/wt/${epicId}` : more.worktree;
  return { kind: 'run', role, epicId, stepAnchor, worktree, newIteration: more.newIteration ?? false, reason };
}

interface Case {
  name: string;
  epics: EpicSnapshot[];
  runs?: RunSnapshot[];
  config?: Partial<SchedulerConfig>;
  expected: Action[];
}

const p = (priority: Priority) => ({ priority });

const CASES: Case[] = [
  // planned and blocked: Lisa plans, a person approves.
  {
    name: 'planned without a proposal runs Lisa',
    epics: [epic('e1', 'planned')],
    expected: [agent('lisa', 'e1', 'write the plan', null, { worktree: null })],
  },
  {
    name: 'planned with a proposal waiting surfaces it and starts nobody',
    epics: [epic('e1', 'planned', { awaitingApproval: true })],
    expected: [{ kind: 'surface', epicId: 'e1', message: "a plan version is waiting for a person's approval" }],
  },
  {
    name: 'planned with its planning budget spent surfaces it',
    epics: [epic('e1', 'planned', { planIteration: 5 })],
    expected: [
      {
        kind: 'surface',
        epicId: 'e1',
        message: 'planning budget spent (5 of 5 plan iterations): re-scope, defer or raise its complexity',
      },
    ],
  },
  {
    name: 'planned with no Lisa command does nothing',
    epics: [epic('e1', 'planned')],
    config: { roles: { ralph: ['r'] } },
    expected: [],
  },
  // docs/lifecycle.md, "Who plans": an epic its creator plans never gets Lisa, not even to re-plan.
  {
    name: 'planned by a person waits for their plan and starts nobody',
    epics: [epic('e1', 'planned', { planner: 'person' })],
    expected: [{ kind: 'surface', epicId: 'e1', message: MESSAGES.personPlans }],
  },
  {
    name: 'blocked by a review signal, planned by a person: no re-plan by Lisa',
    epics: [epic('e1', 'blocked', { planner: 'person', statusReason: 'option_viability_failure: x' })],
    expected: [{ kind: 'surface', epicId: 'e1', message: MESSAGES.personPlans }],
  },
  {
    name: 'option-viability failure → Lisa: a blocked epic gets a Lisa run',
    epics: [epic('e1', 'blocked', { worktree: '/wt/e1' })],
    expected: [agent('lisa', 'e1', 're-plan the blocked epic')],
  },
  {
    name: 'blocked with a new plan waiting does not start Lisa again',
    epics: [epic('e1', 'blocked', { awaitingApproval: true })],
    expected: [{ kind: 'surface', epicId: 'e1', message: "a plan version is waiting for a person's approval" }],
  },
  // ready: start, one slot reserved for its Ralph.
  { name: 'ready starts the epic', epics: [epic('e1', 'ready')], expected: [{ kind: 'start_epic', epicId: 'e1' }] },
  {
    name: 'two ready epics and one slot: only the higher-priority one starts',
    config: { maxParallelAgents: 1 },
    epics: [epic('e1', 'ready', p('P2')), epic('e2', 'ready', p('P0'))],
    expected: [{ kind: 'start_epic', epicId: 'e2' }],
  },
  {
    name: 'two in-progress epics and one slot: only the higher-priority one gets Ralph',
    config: { maxParallelAgents: 1 },
    epics: [epic('e1', 'in_progress', p('P3')), epic('e2', 'in_progress', p('P1'))],
    expected: [agent('ralph', 'e2', 'build step-1', 'step-1')],
  },
  {
    name: 'equal priority: the lower id goes first',
    config: { maxParallelAgents: 1 },
    epics: [epic('sf-b', 'in_progress'), epic('sf-a', 'in_progress')],
    expected: [agent('ralph', 'sf-a', 'build step-1', 'step-1')],
  },
  {
    name: 'a started epic reserves its slot ahead of a lower-priority Ralph',
    config: { maxParallelAgents: 1 },
    epics: [epic('e1', 'in_progress', p('P1')), epic('e2', 'ready', p('P0'))],
    expected: [{ kind: 'start_epic', epicId: 'e2' }],
  },
  {
    name: 'with no Ralph command an epic starts without a slot (people build)',
    config: { maxParallelAgents: 0, roles: {} },
    epics: [epic('e1', 'ready')],
    expected: [{ kind: 'start_epic', epicId: 'e1' }],
  },
  {
    name: 'ready without an approved plan is surfaced, not started',
    epics: [epic('e1', 'ready', { planPath: null })],
    expected: [{ kind: 'surface', epicId: 'e1', message: 'ready without an approved plan' }],
  },
  // in_progress: build, verify, complete mechanically.
  {
    name: 'a ready step gets Ralph on the first ready anchor',
    epics: [epic('e1', 'in_progress', { steps: { ready: ['step-2', 'step-3'], completed: 1, total: 3 } })],
    expected: [agent('ralph', 'e1', 'build step-2', 'step-2')],
  },
  {
    name: 'nothing ready while dependencies wait on a claimed step: nothing',
    epics: [epic('e1', 'in_progress', { steps: { ready: [], claimedLive: ['step-1'] } })],
    expected: [],
  },
  {
    name: 'all steps done and verification passed: mechanical completion',
    epics: [epic('e1', 'in_progress', { steps: DONE_STEPS, verification: { lastVerdict: 'pass' } })],
    expected: [{ kind: 'complete_mechanically', epicId: 'e1' }],
  },
  {
    name: 'all steps done and no verification configured: mechanical completion',
    config: { verificationConfigured: false },
    epics: [epic('e1', 'in_progress', { steps: DONE_STEPS })],
    expected: [{ kind: 'complete_mechanically', epicId: 'e1' }],
  },
  {
    name: 'all steps done but nothing verified since the start: verify',
    epics: [epic('e1', 'in_progress', { steps: DONE_STEPS })],
    expected: [{ kind: 'verify', epicId: 'e1' }],
  },
  {
    name: 'a Ralph run ended after the last verdict: verify before anything else',
    epics: [
      epic('e1', 'in_progress', { verification: { lastVerdict: 'fail', sameFailureStreak: 9, unverifiedBuild: true } }),
    ],
    expected: [{ kind: 'verify', epicId: 'e1' }],
  },
  {
    name: 'verification running in the worktree: nothing',
    epics: [epic('e1', 'in_progress', { verification: { running: true } })],
    expected: [],
  },
  {
    name: 'a failed verification returns to Ralph (a new iteration)',
    epics: [
      epic('e1', 'in_progress', { steps: DONE_STEPS, verification: { lastVerdict: 'fail', sameFailureStreak: 1 } }),
    ],
    expected: [agent('ralph', 'e1', 'verification failed: back to Ralph', null, { newIteration: true })],
  },
  {
    name: 'a failed verification mid-plan returns to Ralph on the next ready step',
    epics: [
      epic('e1', 'in_progress', {
        steps: { completed: 1, ready: ['step-2'] },
        verification: { lastVerdict: 'fail', sameFailureStreak: 2 },
      }),
    ],
    expected: [agent('ralph', 'e1', 'verification failed: back to Ralph', 'step-2', { newIteration: true })],
  },
  {
    name: 'a failed verification with the next step held by a live claim: nothing',
    epics: [
      epic('e1', 'in_progress', {
        steps: { completed: 1, ready: [], claimedLive: ['step-2'] },
        verification: { lastVerdict: 'fail' },
      }),
    ],
    expected: [],
  },
  {
    name: 'budget exhaustion → blocked: the same failure 3 times',
    epics: [
      epic('e1', 'in_progress', { steps: DONE_STEPS, verification: { lastVerdict: 'fail', sameFailureStreak: 3 } }),
    ],
    expected: [
      {
        kind: 'transition',
        epicId: 'e1',
        event: 'iteration_budget_exhausted',
        reason:
          'iteration_budget_exhausted: 1 of 20 build iterations used; the same verification failure 3 times in a row',
      },
    ],
  },
  {
    name: 'budget exhaustion → blocked: no build iteration left after a failure',
    epics: [
      epic('e1', 'in_progress', {
        complexity: 'trivial',
        iteration: 5,
        steps: DONE_STEPS,
        verification: { lastVerdict: 'fail', sameFailureStreak: 1 },
      }),
    ],
    expected: [
      {
        kind: 'transition',
        epicId: 'e1',
        event: 'iteration_budget_exhausted',
        reason:
          'iteration_budget_exhausted: 5 of 5 build iterations used; verification failed with no build iteration left',
      },
    ],
  },
  {
    name: 'one iteration left after a failure: back to Ralph',
    epics: [
      epic('e1', 'in_progress', {
        complexity: 'trivial',
        iteration: 4,
        steps: DONE_STEPS,
        verification: { lastVerdict: 'fail', sameFailureStreak: 2 },
      }),
    ],
    expected: [agent('ralph', 'e1', 'verification failed: back to Ralph', null, { newIteration: true })],
  },
  {
    name: 'sent back by Bart with every step done: Ralph fixes the findings before any completion',
    epics: [
      epic('e1', 'in_progress', {
        iteration: 2,
        reworkPending: true,
        steps: DONE_STEPS,
        verification: { lastVerdict: 'pass' },
      }),
    ],
    expected: [agent('ralph', 'e1', "fix the review's findings")],
  },
  {
    name: 'no Ralph command: nothing to build',
    config: { roles: { lisa: ['l'] } },
    epics: [epic('e1', 'in_progress')],
    expected: [],
  },
  // implemented: review per complexity.
  {
    name: 'trivial epic skipping Bart',
    epics: [
      epic('e1', 'implemented', { complexity: 'trivial', steps: DONE_STEPS, verification: { lastVerdict: 'pass' } }),
    ],
    expected: [
      {
        kind: 'transition',
        epicId: 'e1',
        event: 'signal_pass',
        reason: 'review skipped: trivial epic passed verification',
      },
    ],
  },
  {
    name: 'simple epic skipping Bart',
    epics: [
      epic('e1', 'implemented', { complexity: 'simple', steps: DONE_STEPS, verification: { lastVerdict: 'pass' } }),
    ],
    expected: [
      {
        kind: 'transition',
        epicId: 'e1',
        event: 'signal_pass',
        reason: 'review skipped: simple epic passed verification',
      },
    ],
  },
  {
    name: 'an epic whose complexity the config gives the person waits for their review: no Bart, no skip',
    config: { reviewedByPerson: ['critical', 'trivial'] },
    epics: [
      epic('e1', 'implemented', { complexity: 'critical', steps: DONE_STEPS }),
      epic('e2', 'implemented', { complexity: 'trivial', steps: DONE_STEPS, verification: { lastVerdict: 'pass' } }),
      epic('e3', 'implemented', { complexity: 'standard', steps: DONE_STEPS }),
    ],
    expected: [
      { kind: 'surface', epicId: 'e1', message: MESSAGES.personReview },
      { kind: 'surface', epicId: 'e2', message: MESSAGES.personReview },
      agent('bart', 'e3', 'review the implementation'),
    ],
  },
  {
    name: 'trivial epic with no verification configured still gets Bart',
    config: { verificationConfigured: false },
    epics: [epic('e1', 'implemented', { complexity: 'trivial', steps: DONE_STEPS })],
    expected: [agent('bart', 'e1', 'review the implementation')],
  },
  {
    name: 'standard epic gets Bart',
    epics: [epic('e1', 'implemented', { steps: DONE_STEPS, verification: { lastVerdict: 'pass' } })],
    expected: [agent('bart', 'e1', 'review the implementation')],
  },
  {
    name: 'critical epic requires Bart even when verified',
    epics: [
      epic('e1', 'implemented', { complexity: 'critical', steps: DONE_STEPS, verification: { lastVerdict: 'pass' } }),
    ],
    expected: [agent('bart', 'e1', 'review the implementation')],
  },
  {
    name: 'a signal waiting for a person is surfaced, even for a trivial epic',
    epics: [
      epic('e1', 'implemented', {
        complexity: 'trivial',
        signalsAwaitingPerson: 2,
        review: { signalsThisIteration: 2 },
        verification: { lastVerdict: 'pass' },
      }),
    ],
    expected: [{ kind: 'surface', epicId: 'e1', message: "2 review signals waiting for a person's decision" }],
  },
  {
    name: 'a signal already recorded this iteration: nothing',
    epics: [epic('e1', 'implemented', { review: { signalsThisIteration: 1, bartRunsThisIteration: 1 } })],
    expected: [],
  },
  {
    name: "Bart's review ended without a signal: a Bart fault, retried after its backoff (never a pass)",
    epics: [
      epic('e1', 'implemented', {
        review: { bartRunsThisIteration: 1 },
        faults: {
          bart: fault(1, 20, {
            lastOutcome: 'no_progress',
            lastExitCode: 0,
            lastReason: 'exited 0 without recording a review signal',
          }),
        },
      }),
    ],
    expected: [agent('bart', 'e1', 'review the implementation')],
  },
  {
    name: 'no Bart command: nothing',
    config: { roles: { ralph: ['r'] } },
    epics: [epic('e1', 'implemented')],
    expected: [],
  },
  // verified: merge, critical waits for a person.
  {
    name: "critical epic waiting for a person's approval before merge",
    epics: [epic('e1', 'verified', { complexity: 'critical' })],
    expected: [{ kind: 'surface', epicId: 'e1', message: "waiting for a person's approval before merge" }],
  },
  {
    name: 'critical epic merges once a person approved',
    epics: [epic('e1', 'verified', { complexity: 'critical', mergeApprovedByPerson: true })],
    expected: [{ kind: 'merge', epicId: 'e1' }],
  },
  {
    name: 'standard verified epic merges',
    epics: [epic('e1', 'verified')],
    expected: [{ kind: 'merge', epicId: 'e1' }],
  },
  {
    name: 'an epic already in the merge queue: nothing',
    epics: [epic('e1', 'verified', { mergeQueued: true })],
    expected: [],
  },
  { name: 'done and deferred: nothing', epics: [epic('e1', 'done'), epic('e2', 'deferred')], expected: [] },
  // runs: timeouts, one agent per epic, slots.
  {
    name: 'a timed-out run is stopped and its slot reused by another epic',
    config: { maxParallelAgents: 1 },
    epics: [epic('e1', 'in_progress', p('P0')), epic('e2', 'in_progress', p('P1'))],
    runs: [run(7, 'e1', 'ralph', 61, 'step-1')],
    expected: [
      { kind: 'stop_run', runId: 7, reason: 'ralph run 7 for e1 outlived its timeout of 60 min' },
      agent('ralph', 'e2', 'build step-1', 'step-1'),
    ],
  },
  {
    name: 'a run exactly at its timeout is not stopped and keeps its slot',
    config: { maxParallelAgents: 1 },
    epics: [epic('e1', 'in_progress'), epic('e2', 'in_progress')],
    runs: [run(7, 'e1', 'ralph', 60)],
    expected: [],
  },
  {
    name: 'one agent per epic: a live run holds its epic, others proceed',
    epics: [
      epic('e1', 'in_progress', { steps: { ready: ['step-2'], claimedLive: ['step-1'] } }),
      epic('e2', 'in_progress'),
    ],
    runs: [run(1, 'e1', 'ralph', 5, 'step-1')],
    expected: [agent('ralph', 'e2', 'build step-1', 'step-1')],
  },
  {
    name: 'slots full: no runs, but transitions, merges and surfaces still come',
    config: { maxParallelAgents: 1 },
    epics: [
      epic('e1', 'in_progress'),
      epic('e2', 'verified'),
      epic('e3', 'implemented', { complexity: 'trivial', verification: { lastVerdict: 'pass' } }),
      epic('e4', 'planned', { awaitingApproval: true }),
    ],
    runs: [run(1, null, 'lisa', 1)],
    expected: [
      { kind: 'merge', epicId: 'e2' },
      {
        kind: 'transition',
        epicId: 'e3',
        event: 'signal_pass',
        reason: 'review skipped: trivial epic passed verification',
      },
      { kind: 'surface', epicId: 'e4', message: "a plan version is waiting for a person's approval" },
    ],
  },
  {
    name: 'an epic listed twice still gets one action',
    epics: [epic('e1', 'in_progress'), epic('e1', 'in_progress')],
    expected: [agent('ralph', 'e1', 'build step-1', 'step-1')],
  },
  {
    name: 'no agent slots at all: no runs and no starts',
    config: { maxParallelAgents: 0 },
    epics: [epic('e1', 'in_progress'), epic('e2', 'ready')],
    expected: [],
  },
];

describe('decide', () => {
  for (const c of CASES) {
    test(c.name, () => {
      const snapshot: SchedulerSnapshot = { epics: c.epics, runs: c.runs ?? [] };
      const before = structuredClone(snapshot);
      assert.deepEqual(decide(snapshot, config(c.config), NOW), c.expected);
      assert.deepEqual(snapshot, before, 'decide must not change its input');
    });
  }

  test('every case: at most one action per epic, transitions allowed by the state machine table', () => {
    for (const c of CASES) {
      const actions = decide({ epics: c.epics, runs: c.runs ?? [] }, config(c.config), NOW);
      const ids = actions.flatMap((a) => (a.kind === 'stop_run' ? [] : [a.epicId]));
      assert.equal(new Set(ids).size, ids.length, c.name);
      for (const a of actions) {
        if (a.kind !== 'transition') continue;
        const from = c.epics.find((e) => e.id === a.epicId)?.status;
        assert.ok(from, c.name);
        assert.doesNotThrow(() => transition(from, a.event), c.name);
      }
    }
  });

  test('determinism: shuffled epics and runs give the same actions', () => {
    const epics = CASES.flatMap((c, i) => c.epics.map((e) => ({ ...e, id: `${e.id}-${String(i).padStart(2, '0')}` })));
    const runs = [
      run(1, 'e1-40', 'ralph', 90),
      run(2, null, 'lisa', 5),
      run(3, 'e2-09', 'bart', 120),
      run(4, 'e1-13', 'ralph', 1),
    ];
    const cfg = config({ maxParallelAgents: 4 });
    const expected = decide({ epics, runs }, cfg, NOW);
    const slotTaking = (actions: Action[]) => actions.filter((a) => a.kind === 'run' || a.kind === 'start_epic').length;
    assert.equal(slotTaking(expected), 2, 'two live runs leave two of four slots');
    assert.ok(
      slotTaking(decide({ epics, runs }, config({ maxParallelAgents: 99 }), NOW)) > 2,
      'the slots are contested',
    );
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const shuffle = <T>(xs: readonly T[]) =>
      xs
        .map((x) => [random(), x] as const)
        .sort((a, b) => a[0] - b[0])
        .map(([, x]) => x);
    for (let i = 0; i < 20; i++) {
      assert.deepEqual(decide({ epics: shuffle(epics), runs: shuffle(runs) }, cfg, NOW), expected);
    }
  });

  test('a run at exactly the limit of slots is counted; one timed-out run frees exactly one slot', () => {
    const epics = [epic('e1', 'in_progress'), epic('e2', 'in_progress'), epic('e3', 'in_progress')];
    const runs = [run(1, 'x', 'ralph', 10), run(2, 'y', 'ralph', 10), run(3, 'z', 'ralph', 61)];
    const actions = decide({ epics, runs }, config({ maxParallelAgents: 3 }), NOW);
    assert.deepEqual(
      actions.map((a) => (a.kind === 'run' ? a.epicId : a.kind)),
      ['stop_run', 'e1'],
    );
  });
});

describe('nextRoleFor', () => {
  const rows: [string, EpicSnapshot, Role | 'person' | null][] = [
    ['planned', epic('e', 'planned'), 'lisa'],
    ['planned awaiting approval', epic('e', 'planned', { awaitingApproval: true }), 'person'],
    ['blocked', epic('e', 'blocked'), 'lisa'],
    ['ready', epic('e', 'ready'), 'ralph'],
    ['in progress', epic('e', 'in_progress'), 'ralph'],
    ['implemented standard', epic('e', 'implemented'), 'bart'],
    [
      'implemented trivial and verified',
      epic('e', 'implemented', { complexity: 'trivial', verification: { lastVerdict: 'pass' } }),
      'lovejoy',
    ],
    [
      'implemented, Bart ended silent (retried as a fault)',
      epic('e', 'implemented', { review: { bartRunsThisIteration: 1 } }),
      'bart',
    ],
    [
      'blocked by agent_failed',
      epic('e', 'blocked', { statusReason: 'agent_failed: Lisa failed 3 times in a row' }),
      'person',
    ],
    ['blocked by plan_drift', epic('e', 'blocked', { statusReason: 'plan_drift: plans/e.md differs' }), 'person'],
    ['verified critical', epic('e', 'verified', { complexity: 'critical' }), 'person'],
    [
      'verified critical approved',
      epic('e', 'verified', { complexity: 'critical', mergeApprovedByPerson: true }),
      'lovejoy',
    ],
    ['done', epic('e', 'done'), null],
    ['deferred', epic('e', 'deferred'), null],
  ];
  for (const [name, e, role] of rows) test(name, () => assert.equal(nextRoleFor(e), role));

  test('agrees with decide wherever decide starts an agent', () => {
    for (const c of CASES) {
      for (const a of decide({ epics: c.epics, runs: c.runs ?? [] }, config(c.config), NOW)) {
        if (a.kind !== 'run') continue;
        const e = c.epics.find((x) => x.id === a.epicId);
        assert.ok(e);
        assert.equal(nextRoleFor(e), a.role, c.name);
      }
    }
  });
});

describe('decide with agent faults (docs/scheduler-faults.md)', () => {
  const one = (e: EpicSnapshot, cfg: Partial<SchedulerConfig> = {}, runs: RunSnapshot[] = []) =>
    decide({ epics: [e], runs }, config(cfg), NOW);

  test('a role that failed once waits out the first backoff, then runs again', () => {
    const [waiting] = one(epic('e1', 'planned', { faults: { lisa: fault(1, 5) } }));
    assert.ok(waiting?.kind === 'wait', JSON.stringify(waiting));
    assert.deepEqual(
      [waiting.epicId, waiting.role, waiting.until],
      ['e1', 'lisa', new Date(NOW.getTime() + 10_000).toISOString()],
    );
    assert.match(
      waiting.message,
      /^Lisa failed once in a row \(last: run 9 failed: exit 1\); retrying after a 15 s backoff \(1 of 3 failures before the epic is blocked\)$/,
    );
    assert.deepEqual(one(epic('e1', 'planned', { faults: { lisa: fault(1, 16) } })), [
      agent('lisa', 'e1', 'write the plan', null, { worktree: null }),
    ]);
  });

  test('the n-th failure waits the n-th delay; past the list the last delay repeats', () => {
    const until = (n: number, cfg: Partial<SchedulerConfig>) => {
      const [a] = one(epic('e1', 'in_progress', { faults: { ralph: fault(n, 0) } }), cfg);
      return a?.kind === 'wait' ? (Date.parse(a.until ?? '') - NOW.getTime()) / 1000 : a?.kind;
    };
    assert.equal(until(2, {}), 60);
    assert.equal(until(5, { retryLimit: 10, retryBackoffMs: [1000, 2000] }), 2);
    assert.equal(until(1, { retryBackoffMs: [0] }), 'run', 'a zero backoff retries at once');
  });

  test('the retry limit blocks the epic with agent_failed: the role, how often, the last exit code and output', () => {
    const [blocked] = one(epic('e1', 'planned', { faults: { lisa: fault(3, 500) } }));
    assert.deepEqual(blocked, {
      kind: 'transition',
      epicId: 'e1',
      event: 'agent_failed',
      reason: 'agent_failed: Lisa failed 3 times in a row (last: run 9 failed: exit 1); last output: boom',
      data: {
        role: 'lisa',
        failures: 3,
        run_id: 9,
        outcome: 'failed',
        exit_code: 1,
        outcome_reason: 'exit 1',
        output_tail: 'starting\nboom',
      },
    });
    assert.doesNotThrow(() => transition('planned', 'agent_failed'));
    const [timedOut] = one(
      epic('e1', 'in_progress', {
        faults: {
          ralph: fault(2, 0, {
            lastOutcome: 'timed_out',
            lastExitCode: 143,
            lastReason: 'ran past its timeout of 2 s',
            lastOutput: '',
          }),
        },
      }),
      { retryLimit: 2 },
    );
    assert.ok(timedOut?.kind === 'transition');
    assert.equal(
      timedOut.reason,
      'agent_failed: Ralph failed 2 times in a row (last: run 9 timed_out, exit 143: ran past its timeout of 2 s)',
    );
  });

  test('a blocked epic waits for a person: nothing is started, and it says how to retry', () => {
    const reason = 'agent_failed: Ralph failed 3 times in a row (last: run 9 failed: exit 1)';
    assert.deepEqual(one(epic('e1', 'blocked', { statusReason: reason })), [
      { kind: 'surface', epicId: 'e1', message: `blocked — ${reason}; a person retries it: springfield epic retry e1` },
    ]);
    assert.equal(one(epic('e1', 'blocked', { statusReason: 'plan_drift: plans/e1.md differs' }))[0]?.kind, 'surface');
    assert.deepEqual(
      one(epic('e1', 'blocked', { statusReason: 'iteration_budget_exhausted' })),
      [agent('lisa', 'e1', 're-plan the blocked epic', null, { worktree: null })],
      'other blocks still go back to Lisa',
    );
  });

  test('a waiting epic takes no slot: the other epics keep running', () => {
    const actions = decide(
      {
        epics: [epic('e1', 'in_progress', p('P0')), epic('e2', 'in_progress', { ...p('P1'), faults: {} })].map(
          (e, i) => (i === 0 ? { ...e, faults: { ralph: fault(1, 1) } } : e),
        ),
        runs: [],
      },
      config({ maxParallelAgents: 1 }),
      NOW,
    );
    assert.deepEqual(
      actions.map((a) => `${a.kind}:${'epicId' in a ? a.epicId : ''}`),
      ['wait:e1', 'run:e2'],
    );
  });

  test("only the failing role's record gates: Bart runs although Ralph failed before", () => {
    assert.deepEqual(one(epic('e1', 'implemented', { faults: { ralph: fault(2, 0) } })), [
      agent('bart', 'e1', 'review the implementation'),
    ]);
  });

  test('setup comes first in a new worktree, is gated like a role, and takes no agent slot', () => {
    const cfg = { setupConfigured: true };
    assert.deepEqual(one(epic('e1', 'in_progress'), cfg), [{ kind: 'setup', epicId: 'e1' }]);
    assert.deepEqual(one(epic('e1', 'in_progress', { setupDone: true }), cfg), [
      agent('ralph', 'e1', 'build step-1', 'step-1'),
    ]);
    assert.deepEqual(
      one(epic('e1', 'in_progress', { worktree: null }), cfg),
      [agent('ralph', 'e1', 'build step-1', 'step-1', { worktree: null })],
      'no worktree of its own: nothing to set up',
    );
    assert.equal(one(epic('e1', 'in_progress', { faults: { setup: fault(1, 1) } }), cfg)[0]?.kind, 'wait');
    const [blocked] = one(
      epic('e1', 'in_progress', {
        faults: { setup: fault(3, 100, { lastReason: 'setup command `npm ci` exited 1' }) },
      }),
      cfg,
    );
    assert.ok(blocked?.kind === 'transition' && blocked.event === 'agent_failed');
    assert.match(
      blocked.reason,
      /^agent_failed: Setup failed 3 times in a row \(last: run 9 failed: setup command `npm ci` exited 1\)/,
    );
    const busy = decide(
      { epics: [epic('e1', 'in_progress'), epic('e2', 'in_progress')], runs: [run(4, 'e1', 'setup', 1)] },
      config({ ...cfg, maxParallelAgents: 1 }),
      NOW,
    );
    assert.deepEqual(
      busy.map((a) => a.kind),
      ['setup'],
      'e1 is busy with its setup; e2 sets up too, and no agent slot was used',
    );
  });

  test("a role's own timeout is enforced with a margin after springfield run's own timeout and grace", () => {
    const cfg = { timeoutsMs: { ralph: 60_000 }, killGraceMs: 10_000 };
    assert.deepEqual(
      one(epic('e1', 'in_progress'), cfg, [run(7, 'e1', 'ralph', 1.5)]),
      [],
      'at 90 s: springfield run is still ending it',
    );
    assert.deepEqual(one(epic('e1', 'in_progress'), cfg, [run(7, 'e1', 'ralph', 2)]), [
      { kind: 'stop_run', runId: 7, reason: 'ralph run 7 for e1 outlived its timeout of 1 min' },
    ]);
  });
});
