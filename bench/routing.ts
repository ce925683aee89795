// Routing by outcomes (docs/agents.md, "Routing"; docs/performance.md, "Routing"): two scripted agents of
// known quality and cost per kind of step — codex better on docs and cheaper, claude better on code and
// dearer — build 50 one-step epics (docs and code alternating in a shuffled order) on a real SQLite store.
// Each step's preset is chosen by the scheduler's own wiring (routedCommand over the store's ledger), Bart's
// verdict is drawn from the chosen agent's quality, a failed first pass costs a re-work session. The same
// draws decide what each fixed choice would have done (common random numbers), so the comparison is
// per step, not between two lotteries. Prints figures; asserts nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../src/core/clock.ts';
import { routedCommand } from '../src/core/orchestrate/routedCommand.ts';
import { parsePlan } from '../src/core/plan/parse.ts';
import { presetFor } from '../src/core/runs/presets.ts';
import { DEFAULT_RUN_CONFIG } from '../src/core/runs/runConfig.ts';
import { openStore, type Store } from '../src/core/store/index.ts';
import type { Actor } from '../src/core/store/types.ts';

const STEPS = 50;
const SEEDS = [1, 2, 3, 4, 5];
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
async function routedHistory(steps: readonly Step[], seed: number): Promise<Preset[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sf-bench-routing-'));
  const clock = new ManualClock(Date.UTC(2026, 3, 1));
  const store = openStore({ location: join(dir, 'state.db'), ifMissing: 'create', clock });
  const config = { ...DEFAULT_RUN_CONFIG, routes: { ralph: { presets: [...PRESETS] } } };
  const context = {
    store,
    config,
    actor: { worktree: 'springfield-scheduler', agent: 'scheduler' },
    unavailable: async () => null,
    random: seeded(seed * 7919),
  };
  const chosen: Preset[] = [];
  try {
    for (const [i, step] of steps.entries()) {
      const planPath = `plans/${i}.md`;
      const file = step.kind === 'docs' ? `docs/topic-${i}.md` : `src/module${i}.ts`;
      const source = {
        planPath,
        plan: parsePlan(`# Plan: ${i}\n## Step 1: Work ${i} {#step-1}\n**Files:** ${file}\n- [ ] Do it\n`, planPath),
      };
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

interface Tally {
  accepted: Record<Kind, number>;
  count: Record<Kind, number>;
  cost: number;
}

function tally(steps: readonly Step[], presetOf: (i: number) => Preset): Tally {
  const t: Tally = { accepted: { docs: 0, code: 0 }, count: { docs: 0, code: 0 }, cost: 0 };
  steps.forEach((s, i) => {
    const p = presetOf(i);
    const pass = s.u < QUALITY[p][s.kind];
    t.count[s.kind]++;
    if (pass) t.accepted[s.kind]++;
    t.cost += COST[p][s.kind] * (pass ? 1 : 2);
  });
  return t;
}

const rate = (t: Tally, k: Kind) => t.accepted[k] / t.count[k];
const pts = (n: number) => `${(n * 100).toFixed(1)}%`;

const sums = {
  routed: { docs: 0, code: 0, cost: 0 },
  best: { docs: 0, code: 0 },
  dearest: 0,
  claudeShare: { docs: 0, code: 0 },
};
for (const seed of SEEDS) {
  const random = seeded(seed);
  const kinds: Kind[] = Array.from({ length: STEPS }, (_, i) => (i % 2 === 0 ? 'docs' : 'code'));
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
  }
  const steps = kinds.map((kind) => ({ kind, u: random() }));
  const chosen = await routedHistory(steps, seed);
  const routed = tally(steps, (i) => chosen[i]!);
  const fixed = Object.fromEntries(PRESETS.map((p) => [p, tally(steps, () => p)])) as Record<Preset, Tally>;
  const best = (k: Kind) => Math.max(...PRESETS.map((p) => rate(fixed[p], k)));
  const dearest = Math.max(...PRESETS.map((p) => fixed[p].cost));
  const share = (k: Kind) => chosen.filter((p, i) => p === 'claude' && steps[i]!.kind === k).length / routed.count[k];
  console.log(
    `seed ${seed}: routed first-pass docs ${pts(rate(routed, 'docs'))} (best fixed ${pts(best('docs'))}), code ${pts(rate(routed, 'code'))} (best fixed ${pts(best('code'))}); ` +
      `cost $${routed.cost.toFixed(2)} = ${pts(routed.cost / dearest)} of always the dearest ($${dearest.toFixed(2)}); claude took ${pts(share('docs'))} of docs, ${pts(share('code'))} of code`,
  );
  sums.routed.docs += rate(routed, 'docs');
  sums.routed.code += rate(routed, 'code');
  sums.routed.cost += routed.cost / dearest;
  sums.best.docs += best('docs');
  sums.best.code += best('code');
  sums.claudeShare.docs += share('docs');
  sums.claudeShare.code += share('code');
}
const n = SEEDS.length;
console.log(
  `\nmean of ${n} seeds, ${STEPS} steps each: first-pass docs ${pts(sums.routed.docs / n)} routed vs ${pts(sums.best.docs / n)} best fixed ` +
    `(${(((sums.routed.docs - sums.best.docs) * 100) / n).toFixed(1)} points), code ${pts(sums.routed.code / n)} vs ${pts(sums.best.code / n)} ` +
    `(${(((sums.routed.code - sums.best.code) * 100) / n).toFixed(1)} points); cost ${pts(sums.routed.cost / n)} of always the dearest; ` +
    `claude took ${pts(sums.claudeShare.docs / n)} of docs steps, ${pts(sums.claudeShare.code / n)} of code steps`,
);
