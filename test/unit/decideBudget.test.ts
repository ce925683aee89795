// decide() with cost budgets (docs/budgets.md): a role's next run on an epic whose spend reached its
// budget (dollars, tokens, agent minutes; its own limit or the config's) pauses the epic instead, and
// while today's spend reached the daily budget nothing that starts an agent is taken anywhere — runs
// under way, verification and merges go on. Pure, table-driven.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BudgetConfig, DailySpend, EpicBudgetOverride, Spend } from '../../src/core/epics/costBudget.ts';
import type { EpicStatus } from '../../src/core/epics/index.ts';
import { decide } from '../../src/core/scheduler/decide.ts';
import { standardEpic } from '../helpers/epicSnapshot.ts';
import { MESSAGES } from '../../src/core/scheduler/rules.ts';
import type {
  Action,
  EpicSnapshot,
  RunSnapshot,
  SchedulerConfig,
  StepsSnapshot,
} from '../../src/core/scheduler/types.ts';

const NOW = new Date('2025-03-01T12:00:00.000Z');
const TODAY = '2025-03-01';
const TOMORROW = '2025-03-02T00:00:00.000Z';

interface Options extends Partial<Omit<EpicSnapshot, 'id' | 'status' | 'steps' | 'spend' | 'costBudget'>> {
  steps?: Partial<StepsSnapshot>;
  spend?: Partial<Spend>;
  own?: Partial<EpicBudgetOverride>;
}

/** A standard P2 epic with its worktree, step-1 ready, the spend given (none by default). */
function epic(id: string, status: EpicStatus, o: Options = {}): EpicSnapshot {
  const { steps, spend, own, ...rest } = o;
  const base = standardEpic(id, status);
  return {
    ...base,
    ...rest,
    steps: { ...base.steps, ...steps },
    spend: { usd: 0, tokens: 0, minutes: 0, ...spend },
    costBudget: { usd: null, tokens: null, minutes: null, ...own },
  };
}

function config(budget?: BudgetConfig): SchedulerConfig {
  return {
    maxParallelAgents: 3,
    runTimeoutMs: 3_600_000,
    sameFailureLimit: 3,
    verificationConfigured: true,
    retryLimit: 3,
    retryBackoffMs: [0],
    setupConfigured: false,
    roles: { lisa: ['lisa'], ralph: ['ralph'], bart: ['bart'] },
    ...(budget ? { budget } : {}),
  };
}

const build = (id: string, step = 'step-1'): Action => ({
  kind: 'run',
  role: 'ralph',
  epicId: id,
  stepAnchor: step,
  worktree: `/wt/${id}`,
  newIteration: false,
  reason: `build ${step}`,
});

const paused = (
  id: string,
  role: string,
  reason: string,
  budget: string,
  spent: number,
  limit: number,
  from: 'epic' | 'config',
): Action => ({
  kind: 'transition',
  epicId: id,
  event: 'budget_exhausted',
  reason,
  data: { role, budget, spent, limit, limit_from: from },
});

const DAILY = (spent: number, limit: number) =>
  `waiting: daily budget spent: $${Number.isInteger(spent) ? spent : spent.toFixed(2)} of $${limit}; runs start again tomorrow (UTC) or when the budget is raised`;

const dailyWait = (id: string, role: 'ralph' | 'lisa' | 'bart', usd: number, limit: number): Action => ({
  kind: 'wait',
  epicId: id,
  role,
  until: TOMORROW,
  message: DAILY(usd, limit),
  dailyBudget: { day: TODAY, usd, limit },
});

interface Case {
  name: string;
  epics: EpicSnapshot[];
  budget?: BudgetConfig;
  today?: DailySpend;
  runs?: RunSnapshot[];
  expected: Action[];
}

const CASES: Case[] = [
  // The epic's budget: at or past it, the next run pauses the epic instead of starting.
  {
    name: 'no budget configured: spend alone never holds a run',
    epics: [epic('e1', 'in_progress', { spend: { usd: 1000, tokens: 9e9, minutes: 9e6 } })],
    expected: [build('e1')],
  },
  {
    name: 'under the epic budget: the builder starts',
    epics: [epic('e1', 'in_progress', { spend: { usd: 19.99 } })],
    budget: { epicUsd: 20 },
    expected: [build('e1')],
  },
  {
    name: 'past the epic budget: paused with the spend in dollars, nothing starts',
    epics: [epic('e1', 'in_progress', { spend: { usd: 20.4 } })],
    budget: { epicUsd: 20 },
    expected: [paused('e1', 'ralph', 'budget_exhausted: $20.40 of $20', 'usd', 20.4, 20, 'config')],
  },
  {
    name: 'exactly at the budget counts as spent',
    epics: [epic('e1', 'in_progress', { spend: { usd: 20 } })],
    budget: { epicUsd: 20 },
    expected: [paused('e1', 'ralph', 'budget_exhausted: $20 of $20', 'usd', 20, 20, 'config')],
  },
  {
    name: "the epic's own budget wins over the config's (raised)",
    epics: [epic('e1', 'in_progress', { spend: { usd: 20.4 }, own: { usd: 40 } })],
    budget: { epicUsd: 20 },
    expected: [build('e1')],
  },
  {
    name: "the epic's own budget wins over the config's (lowered)",
    epics: [epic('e1', 'in_progress', { spend: { usd: 5 }, own: { usd: 5 } })],
    budget: { epicUsd: 20 },
    expected: [paused('e1', 'ralph', 'budget_exhausted: $5 of $5', 'usd', 5, 5, 'epic')],
  },
  {
    name: "an epic's own budget holds without any config",
    epics: [epic('e1', 'in_progress', { spend: { usd: 3.5 }, own: { usd: 3 } })],
    expected: [paused('e1', 'ralph', 'budget_exhausted: $3.50 of $3', 'usd', 3.5, 3, 'epic')],
  },
  {
    name: 'tokens past epicTokens',
    epics: [epic('e1', 'in_progress', { spend: { usd: 1, tokens: 2_013_400 } })],
    budget: { epicUsd: 20, epicTokens: 2_000_000 },
    expected: [
      paused(
        'e1',
        'ralph',
        'budget_exhausted: 2,013,400 of 2,000,000 tokens',
        'tokens',
        2_013_400,
        2_000_000,
        'config',
      ),
    ],
  },
  {
    name: 'agent minutes of runs without a cost past epicMinutes',
    epics: [epic('e1', 'in_progress', { spend: { minutes: 241.5 } })],
    budget: { epicMinutes: 240 },
    expected: [paused('e1', 'ralph', 'budget_exhausted: 241.5 of 240 agent minutes', 'minutes', 241.5, 240, 'config')],
  },
  {
    name: 'Lisa planning is paused too',
    epics: [epic('e1', 'planned', { spend: { usd: 25 } })],
    budget: { epicUsd: 20 },
    expected: [paused('e1', 'lisa', 'budget_exhausted: $25 of $20', 'usd', 25, 20, 'config')],
  },
  {
    name: 'Bart reviewing is paused too',
    epics: [epic('e1', 'implemented', { spend: { usd: 25 } })],
    budget: { epicUsd: 20 },
    expected: [paused('e1', 'bart', 'budget_exhausted: $25 of $20', 'usd', 25, 20, 'config')],
  },
  {
    name: 'what starts no agent goes on past the budget: verification, mechanical completion, merge',
    epics: [
      epic('e1', 'in_progress', {
        spend: { usd: 25 },
        verification: { lastVerdict: null, sameFailureStreak: 0, running: false, unverifiedBuild: true },
      }),
      epic('e2', 'in_progress', {
        spend: { usd: 25 },
        steps: { completed: 2, ready: [] },
        verification: { lastVerdict: 'pass', sameFailureStreak: 0, running: false, unverifiedBuild: false },
      }),
      epic('e3', 'verified', { spend: { usd: 25 } }),
    ],
    budget: { epicUsd: 20 },
    expected: [
      { kind: 'verify', epicId: 'e1' },
      { kind: 'complete_mechanically', epicId: 'e2' },
      { kind: 'merge', epicId: 'e3' },
    ],
  },
  {
    name: 'a paused epic waits for a person, saying how to resume it',
    epics: [epic('e1', 'blocked', { statusReason: 'budget_exhausted: $20.40 of $20', spend: { usd: 20.4 } })],
    budget: { epicUsd: 20 },
    expected: [
      {
        kind: 'surface',
        epicId: 'e1',
        message:
          'paused — budget_exhausted: $20.40 of $20; raise its budget (springfield epic budget e1 --usd N), then springfield epic retry e1',
      },
    ],
  },
  {
    name: 'one epic past its budget does not hold another',
    epics: [epic('e1', 'in_progress', { spend: { usd: 21 } }), epic('e2', 'in_progress', { spend: { usd: 2 } })],
    budget: { epicUsd: 20 },
    expected: [paused('e1', 'ralph', 'budget_exhausted: $21 of $20', 'usd', 21, 20, 'config'), build('e2')],
  },

  // The daily budget: nothing that starts an agent, anywhere.
  {
    name: 'under the daily budget: both builders start',
    epics: [epic('e1', 'in_progress'), epic('e2', 'in_progress')],
    budget: { dailyUsd: 100 },
    today: { day: TODAY, usd: 99.99 },
    expected: [build('e1'), build('e2')],
  },
  {
    name: 'daily budget spent: every agent start waits, saying so; the next UTC day ends the wait',
    epics: [epic('e1', 'in_progress'), epic('e2', 'planned'), epic('e3', 'implemented')],
    budget: { dailyUsd: 100 },
    today: { day: TODAY, usd: 100.2 },
    expected: [
      dailyWait('e1', 'ralph', 100.2, 100),
      dailyWait('e2', 'lisa', 100.2, 100),
      dailyWait('e3', 'bart', 100.2, 100),
    ],
  },
  {
    name: "daily budget spent: an epic's start (which reserves a builder) waits too",
    epics: [epic('e1', 'ready')],
    budget: { dailyUsd: 100 },
    today: { day: TODAY, usd: 100 },
    expected: [{ ...dailyWait('e1', 'ralph', 100, 100) }],
  },
  {
    name: 'daily budget spent: a run under way is left to finish (no stop), others wait',
    epics: [epic('e1', 'in_progress', { steps: { claimedLive: ['step-1'], ready: [] } }), epic('e2', 'in_progress')],
    budget: { dailyUsd: 100 },
    today: { day: TODAY, usd: 150 },
    runs: [{ id: 7, epicId: 'e1', stepAnchor: 'step-1', role: 'ralph', startedAt: '2025-03-01T11:59:00.000Z' }],
    expected: [dailyWait('e2', 'ralph', 150, 100)],
  },
  {
    name: 'daily budget spent: verification and merges go on',
    epics: [
      epic('e1', 'in_progress', {
        verification: { lastVerdict: null, sameFailureStreak: 0, running: false, unverifiedBuild: true },
      }),
      epic('e2', 'verified'),
    ],
    budget: { dailyUsd: 100 },
    today: { day: TODAY, usd: 150 },
    expected: [
      { kind: 'verify', epicId: 'e1' },
      { kind: 'merge', epicId: 'e2' },
    ],
  },
  {
    name: "an epic past its own budget is paused even while the daily budget is spent (the person's next step is the same)",
    epics: [epic('e1', 'in_progress', { spend: { usd: 30 } })],
    budget: { epicUsd: 20, dailyUsd: 100 },
    today: { day: TODAY, usd: 150 },
    expected: [paused('e1', 'ralph', 'budget_exhausted: $30 of $20', 'usd', 30, 20, 'config')],
  },
  {
    name: "no dailyUsd: today's spend holds nothing",
    epics: [epic('e1', 'in_progress')],
    budget: { epicUsd: 20 },
    today: { day: TODAY, usd: 5000 },
    expected: [build('e1')],
  },
];

describe('decide() with cost budgets', () => {
  for (const c of CASES) {
    test(c.name, () => {
      const actions = decide(
        { epics: c.epics, runs: c.runs ?? [], ...(c.today ? { today: c.today } : {}) },
        config(c.budget),
        NOW,
      );
      assert.deepEqual(actions, c.expected);
    });
  }
});

test('a snapshot without spend (an older caller) holds nothing', () => {
  const { spend: _s, costBudget: _c, ...bare } = epic('e1', 'in_progress');
  assert.deepEqual(decide({ epics: [bare], runs: [] }, config({ epicUsd: 1, dailyUsd: 1 }), NOW), [build('e1')]);
});

test("a person's block message names the limit to raise", () => {
  const e = epic('e1', 'blocked', { statusReason: 'budget_exhausted: 2,100,000 of 2,000,000 tokens' });
  assert.match(
    MESSAGES.blockedForPerson(e),
    /^paused — budget_exhausted: 2,100,000 of 2,000,000 tokens; raise its budget \(springfield epic budget e1 --tokens N\)/,
  );
});
