// decide() with files-aware scheduling (docs/files.md): builders of different epics whose steps'
// files meet never run at once, an epic that goes first keeps its files until it merges, and of two
// verified epics whose branches conflict the one that goes first merges first. Pure, table-driven.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EpicStatus } from '../../src/core/epics/index.ts';
import { decide } from '../../src/core/scheduler/decide.ts';
import { FILES_CONFIG, standardEpic } from '../helpers/epicSnapshot.ts';
import type {
  Action,
  EpicFiles,
  EpicSnapshot,
  RunSnapshot,
  SchedulerConfig,
  StepsSnapshot,
} from '../../src/core/scheduler/types.ts';

const NOW = new Date('2025-03-01T12:00:00.000Z');

interface Options extends Partial<Omit<EpicSnapshot, 'id' | 'status' | 'steps' | 'files'>> {
  steps?: Partial<StepsSnapshot>;
  /** Step anchor → globs; the epic's createdAt is its position in the alphabet of ids unless given. */
  open?: Record<string, string[]>;
  changed?: string[];
  createdAt?: string;
  conflictsWith?: EpicFiles['conflictsWith'];
  noFiles?: boolean;
}

/** A standard P2 epic with its worktree, step-1 ready, and the files given (none known by default). */
function epic(id: string, status: EpicStatus, o: Options = {}): EpicSnapshot {
  const { steps, open, changed, createdAt, conflictsWith, noFiles, ...rest } = o;
  return {
    ...standardEpic(id, status),
    planIteration: 1,
    planPath: `plans/${id}.md`,
    worktree: `/wt/${id}`,
    ...rest,
    steps: { total: 3, completed: 0, ready: ['step-1'], claimedLive: [], ...steps },
    ...(noFiles
      ? {}
      : {
          files: {
            openSteps: open ?? {},
            changed: changed ?? [],
            createdAt: createdAt ?? `2025-01-0${id.slice(-1)}T00:00:00.000Z`,
            conflictsWith: conflictsWith ?? [],
          },
        }),
  };
}

function ralphRun(id: number, epicId: string, stepAnchor: string | null): RunSnapshot {
  return { id, epicId, role: 'ralph', stepAnchor, startedAt: new Date(NOW.getTime() - 60_000).toISOString() };
}

const CONFIG: SchedulerConfig = { ...FILES_CONFIG, roles: { ralph: ['ralph-agent'], bart: ['bart-agent'] } };

const build = (epicId: string, step: string, reason = `build ${step}`): Action => ({
  kind: 'run',
  role: 'ralph',
  epicId,
  stepAnchor: step,
  worktree: `/wt/${epicId}`,
  newIteration: false,
  reason,
});

const waits = (
  epicId: string,
  message: string,
  file: string,
  on: string,
  step: string | null,
  role: 'ralph' | 'lovejoy' = 'ralph',
): Action => ({ kind: 'wait', epicId, role, until: null, message, shares: { file, epicId: on, stepAnchor: step } });

const USER = ['src/db/user.ts'];

interface Case {
  readonly name: string;
  readonly epics: EpicSnapshot[];
  readonly runs?: RunSnapshot[];
  readonly config?: Partial<SchedulerConfig>;
  readonly expected: Action[];
}

const CASES: Case[] = [
  {
    name: 'two epics whose first steps share a file: the first builds, the other waits, naming the file and the step',
    epics: [
      epic('sf-1', 'in_progress', { open: { 'step-1': USER } }),
      epic('sf-2', 'in_progress', { open: { 'step-1': ['src/db/**'] } }),
    ],
    expected: [
      build('sf-1', 'step-1'),
      waits('sf-2', 'waiting: shares src/db/user.ts with sf-1 step-1', 'src/db/user.ts', 'sf-1', 'step-1'),
    ],
  },
  {
    name: 'a held epic builds its next ready step whose files are free meanwhile, passing over another held one',
    epics: [
      epic('sf-1', 'in_progress', { open: { 'step-1': USER, 'step-2': ['src/db/order.ts'] } }),
      epic('sf-2', 'in_progress', {
        open: { 'step-1': ['src/db/**'], 'step-2': ['src/db/order.ts'], 'step-3': ['src/ui.ts'] },
        steps: { ready: ['step-1', 'step-2', 'step-3'] },
      }),
    ],
    expected: [
      build('sf-1', 'step-1'),
      build('sf-2', 'step-3', 'build step-3; step-1 is waiting: shares src/db/user.ts with sf-1 step-1'),
    ],
  },
  {
    name: 'a held epic whose other ready steps are held too waits, naming its first step',
    epics: [
      epic('sf-1', 'in_progress', { open: { 'step-1': USER } }),
      epic('sf-2', 'in_progress', {
        open: { 'step-1': USER, 'step-2': ['src/db/*.ts'] },
        steps: { ready: ['step-1', 'step-2'] },
      }),
    ],
    expected: [
      build('sf-1', 'step-1'),
      waits('sf-2', 'waiting: shares src/db/user.ts with sf-1 step-1', 'src/db/user.ts', 'sf-1', 'step-1'),
    ],
  },
  {
    name: "a live run of another epic holds its step's files, whichever epic goes first",
    epics: [
      epic('sf-1', 'in_progress', { priority: 'P0', open: { 'step-1': USER } }),
      epic('sf-2', 'in_progress', { open: { 'step-2': USER }, steps: { ready: [] } }),
    ],
    runs: [ralphRun(7, 'sf-2', 'step-2')],
    expected: [waits('sf-1', 'waiting: shares src/db/user.ts with sf-2 step-2', 'src/db/user.ts', 'sf-2', 'step-2')],
  },
  {
    name: "a step another epic's agent claimed by itself (no run) holds its files too",
    epics: [
      epic('sf-1', 'in_progress', {
        open: { 'step-1': ['src/a.ts'], 'step-2': USER },
        steps: { ready: [], claimedLive: ['step-2'] },
      }),
      epic('sf-2', 'in_progress', { open: { 'step-1': USER } }),
    ],
    expected: [waits('sf-2', 'waiting: shares src/db/user.ts with sf-1 step-2', 'src/db/user.ts', 'sf-1', 'step-2')],
  },
  {
    name: 'of one priority the older epic (the one that goes first) takes the one verification slot, whatever the ids',
    epics: ['sf-1', 'sf-2'].map((id) =>
      epic(id, 'in_progress', {
        createdAt: id === 'sf-2' ? '2025-01-01T00:00:00.000Z' : '2025-01-02T00:00:00.000Z',
        verification: { lastVerdict: null, sameFailureStreak: 0, running: false, unverifiedBuild: true },
      }),
    ),
    config: { slots: { verification: 1, setup: 1 } },
    expected: [
      { kind: 'verify', epicId: 'sf-2' },
      {
        kind: 'wait',
        epicId: 'sf-1',
        role: 'lovejoy',
        until: null,
        message: 'waiting for a verification slot (1 of 1 in use)',
        hold: 'slot',
      },
    ],
  },
  {
    name: 'an epic not under way keeps its place by id: the older of the epics under way takes the slot before the younger',
    config: { maxParallelAgents: 2 },
    epics: [
      epic('sf-1', 'in_progress', { createdAt: '2025-01-02T00:00:00.000Z' }),
      epic('sf-2', 'in_progress', { createdAt: '2025-01-01T00:00:00.000Z' }),
      epic('sf-3', 'ready', { noFiles: true }),
    ],
    expected: [build('sf-2', 'step-1'), build('sf-1', 'step-1')],
  },
  {
    name: 'files that do not meet: both build at once',
    epics: [
      epic('sf-1', 'in_progress', { open: { 'step-1': ['src/db/user.ts'] } }),
      epic('sf-2', 'in_progress', { open: { 'step-1': ['src/db/order.ts', 'docs/**'] } }),
    ],
    expected: [build('sf-1', 'step-1'), build('sf-2', 'step-1')],
  },
  {
    name: 'a step with no files known is built as it always was',
    epics: [epic('sf-1', 'in_progress', { open: { 'step-1': USER } }), epic('sf-2', 'in_progress', { open: {} })],
    expected: [build('sf-1', 'step-1'), build('sf-2', 'step-1')],
  },
  {
    name: 'files-aware scheduling off (no files in the snapshot): both build',
    epics: [epic('sf-1', 'in_progress', { noFiles: true }), epic('sf-2', 'in_progress', { noFiles: true })],
    expected: [build('sf-1', 'step-1'), build('sf-2', 'step-1')],
  },
  {
    name: 'an epic that goes first keeps the files of a step it has not built yet',
    epics: [
      epic('sf-1', 'in_progress', { open: { 'step-2': ['src/a.ts'], 'step-3': USER }, steps: { ready: [] } }),
      epic('sf-2', 'in_progress', { open: { 'step-1': USER } }),
    ],
    runs: [ralphRun(3, 'sf-1', 'step-2')],
    expected: [
      waits(
        'sf-2',
        'waiting: shares src/db/user.ts with sf-1 step-3, which goes first',
        'src/db/user.ts',
        'sf-1',
        'step-3',
      ),
    ],
  },
  {
    name: 'an epic that goes second does not hold the first back with a step it has not started',
    epics: [
      epic('sf-1', 'in_progress', { open: { 'step-1': USER } }),
      epic('sf-2', 'in_progress', { open: { 'step-3': USER }, steps: { ready: [] } }),
    ],
    expected: [build('sf-1', 'step-1')],
  },
  {
    name: 'an epic that goes first keeps the files it changed until it merges',
    epics: [
      epic('sf-1', 'implemented', { changed: ['src/db/user.ts', 'TODO-sf-1.md'] }),
      epic('sf-2', 'in_progress', { open: { 'step-1': ['src/db/*.ts'] } }),
    ],
    expected: [
      {
        kind: 'run',
        role: 'bart',
        epicId: 'sf-1',
        stepAnchor: null,
        worktree: '/wt/sf-1',
        newIteration: false,
        reason: 'review the implementation',
      },
      waits(
        'sf-2',
        'waiting: shares src/db/user.ts with sf-1, which changed it and merges first',
        'src/db/user.ts',
        'sf-1',
        null,
      ),
    ],
  },
  {
    name: 'a blocked or done epic holds nothing',
    epics: [
      epic('sf-1', 'blocked', { statusReason: 'agent_failed: x', changed: USER, open: { 'step-2': USER } }),
      epic('sf-3', 'done', { changed: USER }),
      epic('sf-2', 'in_progress', { open: { 'step-1': USER } }),
    ],
    expected: [
      {
        kind: 'surface',
        epicId: 'sf-1',
        message: 'blocked — agent_failed: x; a person retries it: springfield epic retry sf-1',
      },
      build('sf-2', 'step-1'),
    ],
  },
  {
    name: 'priority before age: a younger P0 epic goes before an older P2 one',
    epics: [
      epic('sf-1', 'in_progress', { open: { 'step-1': ['src/x.ts'], 'step-2': USER } }),
      epic('sf-2', 'in_progress', { priority: 'P0', open: { 'step-1': USER } }),
    ],
    expected: [build('sf-2', 'step-1'), build('sf-1', 'step-1')],
  },
  {
    name: 'age before id: the older epic goes first whatever its id',
    epics: [
      epic('sf-1', 'in_progress', { createdAt: '2025-02-01T00:00:00.000Z', open: { 'step-1': USER } }),
      epic('sf-2', 'in_progress', {
        createdAt: '2025-01-01T00:00:00.000Z',
        open: { 'step-1': ['src/y.ts'], 'step-2': USER },
      }),
    ],
    expected: [
      build('sf-2', 'step-1'),
      waits(
        'sf-1',
        'waiting: shares src/db/user.ts with sf-2 step-2, which goes first',
        'src/db/user.ts',
        'sf-2',
        'step-2',
      ),
    ],
  },
  {
    name: "a builder on the whole epic (Bart's findings) holds what the epic changed",
    epics: [
      epic('sf-1', 'in_progress', { changed: USER, steps: { ready: [], completed: 3 }, open: {} }),
      epic('sf-2', 'in_progress', { priority: 'P0', open: { 'step-1': USER } }),
    ],
    runs: [ralphRun(5, 'sf-1', null)],
    expected: [waits('sf-2', 'waiting: shares src/db/user.ts with sf-1', 'src/db/user.ts', 'sf-1', null)],
  },
  {
    name: 'a waiting builder takes no slot: the next epic gets it',
    config: { maxParallelAgents: 2 },
    epics: [
      epic('sf-1', 'in_progress', { open: { 'step-1': USER } }),
      epic('sf-2', 'in_progress', { open: { 'step-1': USER } }),
      epic('sf-3', 'in_progress', { open: { 'step-1': ['lib/z.ts'] } }),
    ],
    expected: [
      build('sf-1', 'step-1'),
      waits('sf-2', 'waiting: shares src/db/user.ts with sf-1 step-1', 'src/db/user.ts', 'sf-1', 'step-1'),
      build('sf-3', 'step-1'),
    ],
  },
  {
    name: 'two verified epics whose branches conflict: the one that goes first merges first',
    epics: [
      epic('sf-1', 'verified', { conflictsWith: [{ epicId: 'sf-2', files: USER }] }),
      epic('sf-2', 'verified', { conflictsWith: [{ epicId: 'sf-1', files: USER }] }),
    ],
    expected: [
      { kind: 'merge', epicId: 'sf-1' },
      waits(
        'sf-2',
        'waiting: shares src/db/user.ts with sf-1, which merges first (their branches conflict)',
        'src/db/user.ts',
        'sf-1',
        null,
        'lovejoy',
      ),
    ],
  },
  {
    name: "a conflicting epic that is not verified yet does not hold a verified one's merge",
    epics: [
      epic('sf-1', 'in_progress', { open: { 'step-1': ['x.ts'] }, conflictsWith: [{ epicId: 'sf-2', files: USER }] }),
      epic('sf-2', 'verified', { conflictsWith: [{ epicId: 'sf-1', files: USER }] }),
    ],
    expected: [build('sf-1', 'step-1'), { kind: 'merge', epicId: 'sf-2' }],
  },
];

describe('decide with files', () => {
  for (const c of CASES) {
    test(c.name, () => {
      const snapshot = { epics: c.epics, runs: c.runs ?? [] };
      const before = structuredClone(snapshot);
      assert.deepEqual(decide(snapshot, { ...CONFIG, ...c.config }, NOW), c.expected);
      assert.deepEqual(snapshot, before, 'decide must not change its input');
    });
  }

  test('determinism: shuffled epics and runs give the same actions', () => {
    const epics = CASES.flatMap((c, i) => c.epics.map((e) => ({ ...e, id: `${e.id}-${String(i).padStart(2, '0')}` })));
    const runs = CASES.flatMap((c, i) =>
      (c.runs ?? []).map((r) => ({ ...r, id: r.id * 100 + i, epicId: `${r.epicId}-${String(i).padStart(2, '0')}` })),
    );
    const expected = decide({ epics, runs }, CONFIG, NOW);
    assert.ok(
      expected.some((a) => a.kind === 'wait'),
      'some builders wait',
    );
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const shuffle = <T>(xs: readonly T[]) =>
      xs
        .map((x) => [random(), x] as const)
        .sort((a, b) => a[0] - b[0])
        .map(([, x]) => x);
    for (let i = 0; i < 20; i++)
      assert.deepEqual(decide({ epics: shuffle(epics), runs: shuffle(runs) }, CONFIG, NOW), expected);
  });

  test('no two builders started in one pass, nor a started one and a live one, share a file', () => {
    const shared = ['src/shared/a.ts', 'src/shared/b.ts'];
    const epics = Array.from({ length: 6 }, (_, i) =>
      epic(`sf-${i + 1}`, 'in_progress', { open: { 'step-1': [shared[i % 2] as string, `src/own${i}.ts`] } }),
    );
    const runs = [ralphRun(1, 'sf-9', 'step-1')];
    const live = epic('sf-9', 'in_progress', { open: { 'step-1': ['src/shared/b.ts'] }, steps: { ready: [] } });
    const actions = decide({ epics: [...epics, live], runs }, CONFIG, NOW);
    const started = actions.flatMap((a) => (a.kind === 'run' ? [a.epicId] : []));
    assert.deepEqual(started, ['sf-1'], 'one builder on a.ts; b.ts is held by the live run');
    assert.equal(actions.filter((a) => a.kind === 'wait').length, 5);
  });
});
