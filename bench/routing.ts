// Routing by outcomes (docs/stats.md, "Routing"; docs/performance.md, "Routing"): two scripted agents of
// known quality and cost per kind of step — codex better on docs and cheaper, claude better on code and
// dearer — build one-step epics (docs and code, shuffled) on a real SQLite store: 50 steps while the router
// learns, then 50 more. Each step's preset is chosen by the scheduler's own wiring (routedCommand over the
// store's ledger), Bart's verdict is drawn from the chosen agent's quality, a failed first pass costs a
// re-work session. The same draws decide what each fixed choice would have done (common random numbers).
// Per kind it prints routed first-pass acceptance against the best fixed choice, for the 50 learning steps
// and the 50 after, with the mean and worst over seeds run here, the cost against always the dearest,
// and the least any router can lose while learning (bayesBound). Prints figures; asserts nothing.
// `node bench/routing.ts [seeds]` (default 10).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../src/core/clock.ts';
import { routedCommand } from '../src/core/orchestrate/routedCommand.ts';
import { parsePlan } from '../src/core/plan/parse.ts';
import { presetFor } from '../src/core/runs/presets.ts';
import { DEFAULT_RUN_CONFIG } from '../src/core/runs/runConfig.ts';
import { openStore, type Store } from '../src/core/store/index.ts';
import type { Actor } from '../src/core/store/types.ts';
import { planSourceOf } from '../src/core/plan/source.ts';

const STEPS = 50;
const SEEDS = Array.from({ length: Number(process.argv[2] ?? 10) }, (_, i) => i + 1);
const PRESETS = ['claude', 'codex'] as const;
type Preset = (typeof PRESETS)[number];
type Kind = 'docs' | 'code';
/** First-pass acceptance and dollars per build session, per preset and kind. */
const QUALITY: Record<Preset, Record<Kind, number>> = {
  claude: { docs: 0.7, code: 0.9 },
  codex: { docs: 0.9, code: 0.65 },
};
const COST: Record<Preset, Record<Kind, number>> = {
  claude: { docs: 0.6, code: 0.6 },
  codex: { docs: 0.2, code: 0.3 },
};
const PERSON: Actor = { worktree: '/wt/main', agent: 'marge' };

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Step {
  readonly kind: Kind;
  /** The verdict's draw: a preset passes first time when it is below its quality. */
  readonly u: number;
}

async function build(
  store: Store,
  clock: ManualClock,
  actor: Actor,
  epicId: string,
  planPath: string,
  preset: Preset,
  kind: Kind,
  command: readonly string[],
) {
  const run = await store.startRun(
    {
      epicId,
      planPath,
      stepAnchor: 'step-1',
      role: 'ralph',
      iteration: 1,
      worktree: actor.worktree,
      agentId: 'ralph',
      command,
      pid: 1,
    },
    actor,
  );
  clock.advance(60_000);
  const usage = {
    costUsd: COST[preset][kind],
    inputTokens: null,
    outputTokens: null,
    cacheReadTokens: null,
    cacheWriteTokens: null,
    premiumRequests: null,
  };
  await store.finishRun(run.id, { exitCode: 0, signal: null, usage }, actor);
}

/** One routed history; returns the preset chosen per step. */
async function routedHistory(steps: readonly Step[]): Promise<Preset[]> {
  // The figures are counts, not timings: a memory-backed folder only spares the disk's syncs.
  const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'sf-bench-routing-'));
  const clock = new ManualClock(Date.UTC(2026, 3, 1));
  const store = openStore({ location: join(dir, 'state.db'), ifMissing: 'create', clock });
  const config = { ...DEFAULT_RUN_CONFIG, routes: { ralph: { presets: [...PRESETS] } } };
  const context = {
    store,
    config,
    actor: { worktree: 'springfield-scheduler', agent: 'scheduler' },
    unavailable: async () => null,
    // Its own state folder: no usage limit of this host's is met.
    env: { XDG_STATE_HOME: join(dir, 'state') },
    holdMs: 60_000,
  };
  const chosen: Preset[] = [];
  try {
    for (const [i, step] of steps.entries()) {
      const planPath = `plans/${i}.md`;
      const file = step.kind === 'docs' ? `docs/topic-${i}.md` : `src/module${i}.ts`;
      const source = planSourceOf(
        planPath,
        parsePlan(`# Plan: ${i}\n## Step 1: Work ${i} {#step-1}\n**Files:** ${file}\n- [ ] Do it\n`, planPath),
      );
      const epicId = (await store.createEpic({ title: `Step ${i}`, brief: '', priority: 'P2' }, PERSON)).id;
      await store.applyEpicEvent(epicId, 'plan_approved', PERSON, 'ok');
      await store.initPlan(source, PERSON, { epicId });
      await store.applyEpicEvent(epicId, 'start', PERSON, 'go');
      const routed = await routedCommand(context, 'ralph', epicId, 'step-1');
      const preset = presetFor(routed?.command ?? [])?.id as Preset;
      chosen.push(preset);
      const actor: Actor = { worktree: `/wt/${epicId}`, agent: 'ralph' };
      await build(store, clock, actor, epicId, planPath, preset, step.kind, routed?.command ?? []);
      const claim = await store.claimNext(source, actor, { leaseSeconds: 3600 });
      if (claim.claimed) await store.complete(source, 'step-1', actor, { forceReason: 'bench' });
      await store.applyEpicEvent(epicId, 'steps_completed', PERSON, 'done');
      const bart: Actor = { worktree: '/wt/review', agent: 'bart' };
      if (step.u >= QUALITY[preset][step.kind]) {
        await store.recordSignal(epicId, 'implementation_failure', 'not yet', [], bart);
        await build(store, clock, actor, epicId, planPath, preset, step.kind, routed?.command ?? []);
        await store.applyEpicEvent(epicId, 'steps_completed', PERSON, 'done');
      }
      await store.recordSignal(epicId, 'pass', 'fine', [], bart);
      await store.markMerged(epicId, PERSON, 'merged');
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return chosen;
}

/** Per kind: first-pass acceptance routed and of the best fixed choice, over the steps [from, to). */
function acceptance(steps: readonly Step[], chosen: readonly Preset[], kind: Kind, from: number, to: number) {
  const idx = steps.map((_, i) => i).filter((i) => i >= from && i < to && steps[i]!.kind === kind);
  const passes = (p: (i: number) => Preset) => idx.filter((i) => steps[i]!.u < QUALITY[p(i)][kind]).length / idx.length;
  return { routed: passes((i) => chosen[i]!), best: Math.max(...PRESETS.map((p) => passes(() => p))), n: idx.length };
}

const costOf = (steps: readonly Step[], presetOf: (i: number) => Preset) =>
  steps.reduce((t, s, i) => t + COST[presetOf(i)][s.kind] * (s.u < QUALITY[presetOf(i)][s.kind] ? 1 : 2), 0);

/**
 * The most first-pass acceptance any router can expect over `n` steps of a kind when it is even told the
 * two presets' rates `hi` and `lo`, only not which is which (the Bayes-optimal policy, by exact dynamic
 * programming): what learning must cost, whatever the rule.
 */
function bayesBound(hi: number, lo: number, n: number): number {
  const memo = new Map<string, number>();
  const value = (pa: number, fa: number, pb: number, fb: number): number => {
    if (pa + fa + pb + fb === n) return 0;
    const key = `${pa},${fa},${pb},${fb}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const aGood = hi ** pa * (1 - hi) ** fa * lo ** pb * (1 - lo) ** fb;
    const bGood = lo ** pa * (1 - lo) ** fa * hi ** pb * (1 - hi) ** fb;
    const q = aGood / (aGood + bGood);
    const ra = q * hi + (1 - q) * lo;
    const rb = q * lo + (1 - q) * hi;
    const v = Math.max(
      ra * (1 + value(pa + 1, fa, pb, fb)) + (1 - ra) * value(pa, fa + 1, pb, fb),
      rb * (1 + value(pa, fa, pb + 1, fb)) + (1 - rb) * value(pa, fa, pb, fb + 1),
    );
    memo.set(key, v);
    return v;
  };
  return value(0, 0, 0, 0) / n;
}

const pts = (n: number) => `${(n * 100).toFixed(1)}%`;
const gap = (n: number) => `${n >= 0 ? '+' : ''}${(n * 100).toFixed(1)}`;
const KINDS: readonly Kind[] = ['docs', 'code'];
const PHASES = [
  { name: `steps 1–${STEPS}`, from: 0, to: STEPS },
  { name: `steps ${STEPS + 1}–${2 * STEPS}`, from: STEPS, to: 2 * STEPS },
] as const;
const gaps = new Map<string, number[]>();
const costRatios: number[] = [];
let perKind = 0;
for (const seed of SEEDS) {
  const random = seeded(seed);
  const kinds: Kind[] = [];
  for (const _ of PHASES) {
    const phase: Kind[] = Array.from({ length: STEPS }, (_, i) => (i % 2 === 0 ? 'docs' : 'code'));
    for (let i = phase.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [phase[i], phase[j]] = [phase[j]!, phase[i]!];
    }
    kinds.push(...phase);
  }
  const steps = kinds.map((kind) => ({ kind, u: random() }));
  const chosen = await routedHistory(steps);
  const learning = steps.slice(0, STEPS);
  const dearest = Math.max(...PRESETS.map((p) => costOf(learning, () => p)));
  const ratio = costOf(learning, (i) => chosen[i]!) / dearest;
  costRatios.push(ratio);
  const parts = PHASES.map((phase) => {
    const byKind = KINDS.map((kind) => {
      const a = acceptance(steps, chosen, kind, phase.from, phase.to);
      if (phase.from === 0) perKind = a.n;
      const key = `${kind} ${phase.name}`;
      gaps.set(key, [...(gaps.get(key) ?? []), a.routed - a.best]);
      return `${kind} ${pts(a.routed)} (best fixed ${pts(a.best)})`;
    });
    return `${phase.name}: ${byKind.join(', ')}`;
  });
  console.log(`seed ${seed}: ${parts.join('; ')}; cost of steps 1–${STEPS} ${pts(ratio)} of always the dearest`);
}
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  `\nrouted first-pass acceptance minus the best fixed choice's, in points, over ${SEEDS.length} seeds (mean, worst):`,
);
for (const kind of KINDS)
  for (const phase of PHASES) {
    const g = gaps.get(`${kind} ${phase.name}`) ?? [];
    console.log(`  ${kind.padEnd(4)} ${phase.name.padEnd(12)} mean ${gap(mean(g))}, worst ${gap(Math.min(...g))}`);
  }
console.log(
  `cost of steps 1–${STEPS}: mean ${pts(mean(costRatios))}, worst ${pts(Math.max(...costRatios))} of always the dearest (target ≤ 75%)`,
);
for (const kind of KINDS) {
  const [hi, lo] = [
    Math.max(QUALITY.claude[kind], QUALITY.codex[kind]),
    Math.min(QUALITY.claude[kind], QUALITY.codex[kind]),
  ];
  console.log(
    `least loss while learning, ${kind}: ${gap(bayesBound(hi, lo, perKind) - hi)} points over ${perKind} steps for a router told the rates ${hi} and ${lo}, not which preset has which`,
  );
}
