// A scripted history of two epics for the outcome ledger's tests (test/cli/stats.test.ts, the Stats view's
// model): one (docs, built by Ralph on claude) passing review the first time, one (code, built on codex)
// passing after an implementation_failure and a re-work session, with a failed run and a merge that met a
// conflict. Times come from the ManualClock the store was opened with, starting at T0.
import assert from 'node:assert/strict';
import type { ManualClock } from '../../src/core/clock.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import type { Store } from '../../src/core/store/index.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const MARGE: Actor = { worktree: '/wt/main', agent: 'marge' };
export const T0 = Date.UTC(2026, 3, 1);
const MIN = 60_000;
const CLAUDE = ['claude', '-p', 'go', '--output-format', 'stream-json'];
const CODEX = ['codex', 'exec', '-m', 'gpt-5-codex', '--json', 'go'];

const plan = (path: string, text: string): PlanSource => planSourceOf(path, parsePlan(text, path));
const DOCS = plan(
  'plans/a.md',
  '# Plan: Guide\n## Step 1: Write the guide {#step-1}\n**Files:** docs/guide.md\n- [ ] Write it\n## Step 2: Point the readme at it {#step-2}\n**Files:** README.md\n- [ ] Link\n- [ ] Example\n',
);
const CODE = plan(
  'plans/b.md',
  '# Plan: Cache\n## Step 1: Cache store {#step-1}\n**Files:** src/cache.ts, test/cache.test.ts\n- [ ] Store\n- [ ] Evict\n- [ ] Test\n- [ ] Bench\n',
);

interface Session {
  readonly epicId: string;
  readonly role: 'lisa' | 'ralph' | 'bart';
  readonly command: readonly string[];
  readonly step?: { readonly source: PlanSource; readonly anchor: string; readonly complete?: boolean };
  readonly minutes: number;
  readonly cost: number;
  readonly tokens: readonly [number, number];
  readonly exitCode?: number;
}

/** One agent session: recorded at the clock's time, lasting `minutes`, completing its step if asked, ended with its usage. */
async function session(store: Store, clock: ManualClock, s: Session): Promise<void> {
  const actor: Actor = { worktree: `/wt/${s.epicId}`, agent: s.role };
  const run = await store.startRun(
    {
      epicId: s.epicId,
      planPath: s.step?.source.planPath ?? null,
      stepAnchor: s.step?.anchor ?? null,
      role: s.role,
      iteration: 1,
      worktree: actor.worktree,
      agentId: s.role,
      command: s.command,
      pid: 1,
    },
    actor,
  );
  clock.advance(s.minutes * MIN);
  if (s.step?.complete) {
    const claim = await store.claimNext(s.step.source, actor, { leaseSeconds: 3600 });
    assert.ok(claim.claimed && claim.step_anchor === s.step.anchor);
    await store.complete(s.step.source, s.step.anchor, actor, { forceReason: 'scripted history' });
  }
  await store.finishRun(
    run.id,
    {
      exitCode: s.exitCode ?? 0,
      signal: null,
      usage: {
        costUsd: s.cost,
        inputTokens: s.tokens[0],
        outputTokens: s.tokens[1],
        cacheReadTokens: null,
        cacheWriteTokens: null,
        premiumRequests: null,
      },
    },
    actor,
  );
}

/** The scripted history; returns the two epics' ids. `mergedA`: the reason A's `merged` event gives. */
export async function script(store: Store, clock: ManualClock, mergedA = 'merged'): Promise<{ a: string; b: string }> {
  // Epic A, docs: Lisa 10 min, started at +10m, Ralph on claude builds both steps, Bart passes it first time, merged at +80m.
  const a = (await store.createEpic({ title: 'Guide', brief: '', priority: 'P2' }, MARGE)).id;
  await session(store, clock, { epicId: a, role: 'lisa', command: CLAUDE, minutes: 10, cost: 0.2, tokens: [1000, 0] });
  await store.applyEpicEvent(a, 'plan_approved', MARGE, 'ok');
  await store.initPlan(DOCS, MARGE, { epicId: a });
  await store.applyEpicEvent(a, 'start', MARGE, 'go');
  const docStep = (anchor: string) => ({ source: DOCS, anchor, complete: true });
  await session(store, clock, {
    epicId: a,
    role: 'ralph',
    command: CLAUDE,
    step: docStep('step-1'),
    minutes: 20,
    cost: 0.3,
    tokens: [2000, 500],
  });
  await session(store, clock, {
    epicId: a,
    role: 'ralph',
    command: CLAUDE,
    step: docStep('step-2'),
    minutes: 30,
    cost: 0.5,
    tokens: [3000, 500],
  });
  await store.applyEpicEvent(a, 'steps_completed', MARGE, 'done');
  await session(store, clock, { epicId: a, role: 'bart', command: CLAUDE, minutes: 10, cost: 0.1, tokens: [500, 0] });
  await store.recordSignal(a, 'pass', 'fine', [], { worktree: '/wt/review', agent: 'bart' });
  clock.advance(10 * MIN);
  await store.markMerged(a, MARGE, mergedA);

  // Epic B, code (src and test files): started at +80m; Ralph on codex fails once, builds the step, Bart finds an
  // implementation failure at +135m, Ralph re-works from +140m, Bart passes, the merge meets a conflict, merged at +180m.
  const b = (await store.createEpic({ title: 'Cache', brief: '', priority: 'P2' }, MARGE)).id;
  await store.applyEpicEvent(b, 'plan_approved', MARGE, 'ok');
  await store.initPlan(CODE, MARGE, { epicId: b });
  await store.applyEpicEvent(b, 'start', MARGE, 'go');
  const codeStep = { source: CODE, anchor: 'step-1' };
  await session(store, clock, {
    epicId: b,
    role: 'ralph',
    command: CODEX,
    step: codeStep,
    minutes: 5,
    cost: 0.05,
    tokens: [400, 0],
    exitCode: 1,
  });
  await session(store, clock, {
    epicId: b,
    role: 'ralph',
    command: CODEX,
    step: { ...codeStep, complete: true },
    minutes: 40,
    cost: 0.4,
    tokens: [4000, 1000],
  });
  await store.applyEpicEvent(b, 'steps_completed', MARGE, 'done');
  await session(store, clock, { epicId: b, role: 'bart', command: CLAUDE, minutes: 10, cost: 0.1, tokens: [500, 0] });
  await store.recordSignal(b, 'implementation_failure', 'evicts too early', [], {
    worktree: '/wt/review',
    agent: 'bart',
  });
  clock.advance(5 * MIN);
  await session(store, clock, {
    epicId: b,
    role: 'ralph',
    command: CODEX,
    step: codeStep,
    minutes: 20,
    cost: 0.2,
    tokens: [2000, 500],
  });
  await store.applyEpicEvent(b, 'steps_completed', MARGE, 'done');
  await session(store, clock, { epicId: b, role: 'bart', command: CLAUDE, minutes: 10, cost: 0.1, tokens: [500, 0] });
  await store.recordSignal(b, 'pass', 'fine now', [], { worktree: '/wt/review', agent: 'bart' });
  await store.applyEpicEvent(b, 'merge_failed', MARGE, 'main does not merge: conflicts in src/cache.ts');
  await store.applyEpicEvent(b, 'retry', MARGE, 'rebased');
  clock.advance(10 * MIN);
  await store.markMerged(b, MARGE, 'merged');
  return { a, b };
}
