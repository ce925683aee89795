import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePlan } from '../../src/core/plan/index.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

/** A small seeded PRNG (mulberry32): the same seed replays the same plan, delays and kill order. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random integer in [lo, hi] from `rng`. */
export function randomInt(rng: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rng() * (hi - lo + 1));
}

export interface PlanShape {
  readonly steps: number;
  readonly seed: number;
  /** How far back a dependency may reach (default 30), so many steps stay claimable at once. */
  readonly window?: number;
  /** At most this many dependencies per step (default 2). */
  readonly maxDeps?: number;
}

/**
 * Generates a plan (docs/plan-grammar.md) of `steps` top-level steps whose dependencies form a DAG: each step
 * depends on 0..maxDeps random earlier steps within the last `window`, and has 1–3 tasks.
 */
export function generatePlan(shape: PlanShape): string {
  const rng = seededRandom(shape.seed);
  const window = shape.window ?? 30;
  const maxDeps = shape.maxDeps ?? 2;
  const out: string[] = [`# Plan: Stress plan of ${shape.steps} steps (seed ${shape.seed})`, ''];
  for (let n = 1; n <= shape.steps; n++) {
    const deps = new Set<number>();
    const wanted = n === 1 ? 0 : randomInt(rng, 0, maxDeps);
    for (let i = 0; i < wanted; i++) deps.add(randomInt(rng, Math.max(1, n - window), n - 1));
    const depText =
      deps.size === 0
        ? 'none'
        : [...deps]
            .sort((a, b) => a - b)
            .map((d) => `#step-${d}`)
            .join(', ');
    out.push(`## Step ${n}: Generated step ${n} {#step-${n}}`, `**Depends on:** ${depText}`, '**Tasks:**');
    const tasks = randomInt(rng, 1, 3);
    for (let t = 1; t <= tasks; t++) out.push(`- [ ] Task ${t} of step ${n}`);
    out.push('');
  }
  return out.join('\n');
}

export interface PreparedRun {
  readonly dir: string;
  readonly dbPath: string;
  /** The plan file on disk, and the key it is initialised under. */
  readonly planFile: string;
  readonly planPath: string;
  readonly source: PlanSource;
}

/**
 * Writes a generated plan into a fresh temp dir and initialises it in a new database there, with its
 * bytes, as `springfield init` does: workers then take the file as any command does, without parsing it.
 */
export async function prepareRun(shape: PlanShape): Promise<PreparedRun> {
  const dir = mkdtempSync(join(tmpdir(), 'springfield-stress-'));
  const planPath = 'plans/stress.md';
  const planFile = join(dir, 'stress.md');
  const text = generatePlan(shape);
  writeFileSync(planFile, text);
  const dbPath = join(dir, '.springfield', 'state.db');
  const source: PlanSource = planSourceOf(planPath, parsePlan(text, planPath), Buffer.from(text));
  const store = sqliteStore(dbPath, { ifMissing: 'create' });
  try {
    await store.initPlan(source, { worktree: '/wt/setup', agent: null });
  } finally {
    store.close();
  }
  return { dir, dbPath, planFile, planPath, source };
}
