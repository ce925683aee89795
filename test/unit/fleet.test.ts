// The fleet governor's pure parts (docs/scheduler.md, "The fleet"): admission from /proc texts,
// the auto controller, and decide()'s holds for the machine, slots and the person's queue.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { COMPLEXITY_POLICY, type EpicStatus } from '../../src/core/epics/index.ts';
import {
  admissionHold,
  type AdmissionLimits,
  type MachineReading,
  parseMeminfo,
  parsePressure,
} from '../../src/core/scheduler/admission.ts';
import {
  AUTO_STRETCH,
  autoAfterLook,
  autoAfterRun,
  type AutoParallel,
  autoStart,
} from '../../src/core/scheduler/autoParallel.ts';
import { decide } from '../../src/core/scheduler/decide.ts';
import type {
  Action,
  EpicSnapshot,
  RunSnapshot,
  SchedulerConfig,
  SchedulerSnapshot,
} from '../../src/core/scheduler/types.ts';
import { readMachine } from '../../src/core/orchestrate/machine.ts';
import { DEFAULT_ADMISSION } from '../../src/core/orchestrate/fleetConfig.ts';
import { parseRunConfig } from '../../src/core/runs/runConfig.ts';

const NOW = new Date('2025-03-01T12:00:00.000Z');

const MEMINFO = (availableKb: number) =>
  [
    'MemTotal:       24684084 kB',
    'MemFree:         1016544 kB',
    `MemAvailable:   ${availableKb} kB`,
    'Buffers:          212032 kB',
    '',
  ].join('\n');
const PRESSURE = (some: number, full = 0) =>
  `some avg10=${some.toFixed(2)} avg60=13.33 avg300=6.83 total=30585470\nfull avg10=${full.toFixed(2)} avg60=0.00 avg300=0.00 total=0\n`;
const CPU_ONLY = 'some avg10=27.13 avg60=13.33 avg300=6.83 total=30585470\n';

function reading(more: Partial<MachineReading> = {}): MachineReading {
  return {
    cores: 2,
    freeMemoryMb: parseMeminfo(MEMINFO(8_000_000)) ?? 0,
    cpuPressure: parsePressure(PRESSURE(10)),
    memoryPressure: parsePressure(PRESSURE(0)),
    ioPressure: parsePressure(PRESSURE(1, 0.5)),
    loadPerCore: 0.5,
    ...more,
  };
}

describe('admission', () => {
  test('the /proc texts are read: MemAvailable in MB, "some avg10" in percent', () => {
    assert.equal(parseMeminfo(MEMINFO(23278292)), 22732);
    assert.equal(parseMeminfo('MemTotal: 100 kB\n'), null);
    assert.equal(parsePressure(PRESSURE(27.13)), 27.13);
    assert.equal(parsePressure(CPU_ONLY), 27.13);
    assert.equal(parsePressure('full avg10=3.00 avg60=0 avg300=0 total=0\n'), null);
  });

  test('a machine with room admits; each limit gives its own reason', () => {
    assert.equal(admissionHold(reading(), DEFAULT_ADMISSION), null);
    const limits: AdmissionLimits = { ...DEFAULT_ADMISSION, minFreeMemoryMb: 2048 };
    assert.equal(
      admissionHold(reading({ freeMemoryMb: parseMeminfo(MEMINFO(943_718)) ?? 0 }), limits),
      '0.9 GB free, needs 2 GB',
    );
    assert.equal(admissionHold(reading({ freeMemoryMb: 500 }), DEFAULT_ADMISSION), '0.5 GB free, needs 1 GB');
    assert.equal(
      admissionHold(reading({ cpuPressure: parsePressure(PRESSURE(93.4)) }), DEFAULT_ADMISSION),
      'CPU pressure 93.4 % (at most 80 %)',
    );
    assert.equal(
      admissionHold(reading({ memoryPressure: 35 }), DEFAULT_ADMISSION),
      'memory pressure 35 % (at most 20 %)',
    );
    assert.equal(admissionHold(reading({ ioPressure: 75 }), DEFAULT_ADMISSION), 'IO pressure 75 % (at most 60 %)');
  });

  test('without /proc/pressure the load per core is judged instead', () => {
    const noPressure = { cpuPressure: null, memoryPressure: null, ioPressure: null };
    assert.equal(admissionHold(reading({ ...noPressure, loadPerCore: 1.5 }), DEFAULT_ADMISSION), null);
    assert.equal(
      admissionHold(reading({ ...noPressure, loadPerCore: 3.14 }), DEFAULT_ADMISSION),
      'load 3.1 per core (at most 2)',
    );
    // Where pressure is known, the load average (which counts IO waits and other tenants) is not judged.
    assert.equal(admissionHold(reading({ loadPerCore: 9 }), DEFAULT_ADMISSION), null);
  });

  test('this machine can be read: memory, cores, and pressure where the kernel offers it', () => {
    const m = readMachine();
    assert.ok(m.cores >= 1 && m.freeMemoryMb > 0, JSON.stringify(m));
    for (const p of [m.cpuPressure, m.memoryPressure, m.ioPressure])
      assert.ok(p === null || (p >= 0 && p <= 100), JSON.stringify(m));
  });

  test('bad admission, slots and queue values are one clear line', () => {
    const bad: [unknown, RegExp][] = [
      [{ admission: { minFreeMemoryMb: -1 } }, /^cfg: admission\.minFreeMemoryMb: /],
      [{ admission: { maxCpuPressure: 150 } }, /^cfg: admission\.maxCpuPressure: /],
      [{ admission: { cpu: 1 } }, /^cfg: admission: .*cpu/],
      [{ slots: { verification: 0 } }, /^cfg: slots\.verification: /],
      [{ maxWaitingOnPerson: 'many' }, /^cfg: maxWaitingOnPerson: /],
      [{ maxParallelAgents: 'lots' }, /^cfg: maxParallelAgents: /],
      [{ notify: { command: [] } }, /^cfg: notify\.command: a command needs at least the program/],
    ];
    for (const [value, message] of bad)
      assert.throws(
        () => parseRunConfig(value, 'cfg'),
        (err: Error) => message.test(err.message) && !err.message.includes('\n'),
      );
    const ok = parseRunConfig(
      { maxParallelAgents: 'auto', admission: { minFreeMemoryMb: 2048 }, slots: { setup: 2 }, maxWaitingOnPerson: 5 },
      'cfg',
    );
    assert.equal(ok.maxParallelAgents, 'auto');
    assert.deepEqual(ok.admission, { minFreeMemoryMb: 2048 });
    // What was read validates again (the editor passes the file's config through with its settings).
    assert.deepEqual(parseRunConfig(ok, 'again'), ok);
  });
});

describe('maxParallelAgents: auto', () => {
  test('starts low, adds one after each stretch of successes, never above the ceiling', () => {
    let s = autoStart(4);
    assert.equal(s.current, 2);
    const values: number[] = [];
    for (let i = 0; i < AUTO_STRETCH * 4; i++) {
      s = autoAfterRun(s, 'succeeded', false);
      values.push(s.current);
    }
    assert.equal(values.at(AUTO_STRETCH - 2), 2, 'no change before a stretch ends');
    assert.equal(values.at(AUTO_STRETCH - 1), 3);
    assert.equal(Math.max(...values), 4);
    assert.equal(s.current, 4);
  });

  test('halves on a usage limit or on pressure, never below one; a failure only ends the stretch', () => {
    let s: AutoParallel = { current: 9, ceiling: 20, streak: 1, cutBy: null, beforeLimit: null };
    s = autoAfterRun(s, 'limited', false);
    assert.deepEqual(s, { current: 4, ceiling: 20, streak: 0, cutBy: 'limit', beforeLimit: 9 });
    s = autoAfterRun(s, 'succeeded', true);
    assert.equal(s.current, 2);
    s = autoAfterRun(s, 'limited', false);
    assert.equal(s.current, 1);
    s = autoAfterRun(autoAfterRun(s, 'succeeded', false), 'limited', false);
    assert.equal(s.current, 1);
    const streak = autoAfterRun(
      { current: 3, ceiling: 20, streak: AUTO_STRETCH - 1, cutBy: null, beforeLimit: null },
      'failed',
      false,
    );
    assert.deepEqual(streak, { current: 3, ceiling: 20, streak: 0, cutBy: null, beforeLimit: null });
  });

  test('one limit halves once, however many runs it ends; a success ends the limit', () => {
    let s: AutoParallel = { current: 16, ceiling: 20, streak: 0, cutBy: null, beforeLimit: null };
    for (let i = 0; i < 5; i++) s = autoAfterRun(s, 'limited', false);
    assert.equal(s.current, 8, 'runs that met the same limit halve once');
    s = autoAfterRun(s, 'succeeded', false);
    assert.equal(s.current, 16, 'the limit is over: back where it found the fleet');
    s = autoAfterRun(s, 'limited', false);
    assert.equal(s.current, 8, 'a limit after a success is a new one');
  });

  test('once a limit is over the fleet is back where the limit found it; then one per stretch', () => {
    let s: AutoParallel = { current: 5, ceiling: 20, streak: 0, cutBy: null, beforeLimit: null };
    const values: number[] = [];
    s = autoAfterRun(s, 'limited', false);
    values.push(s.current);
    for (let i = 0; i < 1 + AUTO_STRETCH; i++) {
      s = autoAfterRun(s, 'succeeded', false);
      values.push(s.current);
    }
    assert.deepEqual(values, [2, 5, ...Array<number>(AUTO_STRETCH - 1).fill(5), 6]);
    assert.equal(s.beforeLimit, null);
    // Pressure is the machine's: what a limit cut is not won back under it.
    s = autoAfterRun(autoAfterRun(s, 'limited', false), 'succeeded', true);
    assert.deepEqual([s.current, s.beforeLimit, s.cutBy], [1, null, 'pressure']);
  });

  test('one stretch of pressure halves once; room again ends it', () => {
    let s: AutoParallel = { current: 8, ceiling: 20, streak: 0, cutBy: null, beforeLimit: null };
    s = autoAfterLook(s, true);
    for (const outcome of ['succeeded', 'succeeded', 'failed', 'succeeded']) s = autoAfterRun(s, outcome, true);
    assert.equal(s.current, 4, 'runs that end in the same pressure halve once');
    assert.equal(s.streak, 0, 'no stretch of successes grows under pressure');
    s = autoAfterLook(s, true);
    assert.equal(s.cutBy, 'pressure');
    s = autoAfterLook(s, false);
    s = autoAfterLook(s, true);
    s = autoAfterRun(s, 'succeeded', true);
    assert.equal(s.current, 2, 'pressure after room is a new stretch');
  });
});

function epic(id: string, status: EpicStatus, more: Partial<EpicSnapshot> = {}): EpicSnapshot {
  const started = status === 'in_progress' || status === 'implemented' || status === 'verified';
  return {
    id,
    title: id,
    status,
    statusReason: null,
    priority: 'P2',
    complexity: 'standard',
    iteration: started ? 1 : 0,
    buildBudget: COMPLEXITY_POLICY.standard.buildIterations,
    planIteration: status === 'planned' ? 0 : 1,
    planBudget: COMPLEXITY_POLICY.standard.planIterations,
    planPath: status === 'planned' ? null : `plans/${id}.md`,
    awaitingApproval: false,
    worktree: started ? `/wt/${id}` : null,
    reworkPending: false,
    signalsAwaitingPerson: 0,
    mergeApprovedByPerson: false,
    mergeQueued: false,
    faults: {},
    setupDone: true,
    steps: { total: 2, completed: 0, ready: ['step-1'], claimedLive: [] },
    verification: { lastVerdict: null, sameFailureStreak: 0, running: false, unverifiedBuild: false },
    review: { signalsThisIteration: 0, bartRunsThisIteration: 0 },
    ...more,
  };
}

const CONFIG: SchedulerConfig = {
  maxParallelAgents: 10,
  runTimeoutMs: 3_600_000,
  sameFailureLimit: 3,
  verificationConfigured: true,
  retryLimit: 3,
  retryBackoffMs: [0],
  setupConfigured: true,
  roles: { lisa: ['a'], ralph: ['a'], bart: ['a'] },
  slots: { verification: 1, setup: 1 },
  maxWaitingOnPerson: 2,
};

const agentRun = (id: number, epicId: string): RunSnapshot => ({
  id,
  epicId,
  stepAnchor: 'step-1',
  role: 'ralph',
  startedAt: NOW.toISOString(),
});

function pass(snapshot: SchedulerSnapshot, config: SchedulerConfig = CONFIG): Action[] {
  return decide(snapshot, config, NOW);
}
const waits = (actions: Action[]) =>
  actions.flatMap((a) => (a.kind === 'wait' ? [`${a.epicId} ${a.hold ?? ''}: ${a.message}`] : []));
const taken = (actions: Action[]) =>
  actions.flatMap((a) => (a.kind !== 'wait' && 'epicId' in a ? [`${a.kind} ${a.epicId}`] : []));

describe('decide(): the fleet holds', () => {
  const builds = [epic('e1', 'in_progress'), epic('e2', 'in_progress'), epic('e3', 'in_progress')];

  test('admission holds every heavy start while something is under way, and says why', () => {
    const fleet = { admission: '0.9 GB free, needs 2 GB', heavy: { verification: 0, setup: 0 } };
    const actions = pass({ epics: [...builds, epic('e4', 'planned')], runs: [agentRun(1, 'e1')], fleet });
    assert.deepEqual(taken(actions), []);
    assert.deepEqual(waits(actions), [
      'e2 machine: waiting: 0.9 GB free, needs 2 GB',
      'e3 machine: waiting: 0.9 GB free, needs 2 GB',
      'e4 machine: waiting: 0.9 GB free, needs 2 GB',
    ]);
    // With room, the same snapshot starts them.
    const room = pass({ epics: builds, runs: [agentRun(1, 'e1')], fleet: { ...fleet, admission: null } });
    assert.deepEqual(taken(room), ['run e2', 'run e3']);
  });

  test('a busy machine slows the fleet, never stops it: with nothing under way one thing starts', () => {
    const fleet = { admission: 'CPU pressure 95 % (at most 80 %)', heavy: { verification: 0, setup: 0 } };
    const actions = pass({ epics: builds, runs: [], fleet });
    assert.deepEqual(taken(actions), ['run e1']);
    assert.deepEqual(waits(actions), [
      'e2 machine: waiting: CPU pressure 95 % (at most 80 %)',
      'e3 machine: waiting: CPU pressure 95 % (at most 80 %)',
    ]);
  });

  test('what is not heavy (a merge, a person, a transition) goes on under admission', () => {
    const fleet = { admission: '100 MB free, needs 1 GB', heavy: { verification: 0, setup: 0 } };
    const verified = epic('v', 'verified');
    const actions = pass({ epics: [verified, ...builds], runs: [agentRun(1, 'e1')], fleet });
    assert.deepEqual(taken(actions), ['merge v']);
  });

  test('verification and setup of different epics take slots; the rest wait with a stated reason', () => {
    const unverified = (id: string) =>
      epic(id, 'in_progress', {
        verification: { lastVerdict: null, sameFailureStreak: 0, running: false, unverifiedBuild: true },
      });
    const fresh = (id: string) => epic(id, 'in_progress', { setupDone: false });
    const epics = [unverified('a'), unverified('b'), fresh('c'), fresh('d')];
    const actions = pass({ epics, runs: [], fleet: { admission: null, heavy: { verification: 0, setup: 0 } } });
    assert.deepEqual(taken(actions), ['verify a', 'setup c']);
    assert.deepEqual(waits(actions), [
      'b slot: waiting for a verification slot (1 of 1 in use)',
      'd slot: waiting for a setup slot (1 of 1 in use)',
    ]);
    const busy = pass({ epics, runs: [], fleet: { admission: null, heavy: { verification: 1, setup: 0 } } });
    assert.deepEqual(taken(busy), ['setup c']);
    const wider = pass({ epics, runs: [] }, { ...CONFIG, slots: { verification: 2, setup: 2 } });
    assert.deepEqual(taken(wider), ['verify a', 'verify b', 'setup c', 'setup d']);
  });

  test("while enough epics wait for a person, no new epic's planning starts; the rest goes on", () => {
    const approval = (id: string) => epic(id, 'planned', { awaitingApproval: true });
    const epics = [
      approval('p1'),
      approval('p2'),
      epic('n1', 'planned'),
      epic('n2', 'planned'),
      builds[0] as EpicSnapshot,
    ];
    const actions = pass({ epics, runs: [] });
    assert.deepEqual(taken(actions), ['run e1', 'surface p1', 'surface p2']);
    assert.deepEqual(waits(actions), [
      'n1 queue: no new planning: 2 epics wait for a person (at most 2, maxWaitingOnPerson)',
      'n2 queue: no new planning: 2 epics wait for a person (at most 2, maxWaitingOnPerson)',
    ]);
    // One fewer waiting: planning starts again.
    const fewer = pass({ epics: epics.filter((e) => e.id !== 'p2'), runs: [] });
    assert.deepEqual(taken(fewer), ['run e1', 'run n1', 'run n2', 'surface p1']);
  });
});
