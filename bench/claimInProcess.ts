import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planHash } from '../src/core/plan/hash.ts';
import { parsePlan } from '../src/core/plan/parse.ts';
import { countOpen, partitionSteps } from '../src/core/store/sqlite/readiness.ts';
import { findPlan } from '../src/core/store/sqlite/rows.ts';
import { sqliteStore, sqliteConnection } from '../src/core/store/sqlite/sqliteStore.ts';
import type { Store } from '../src/core/store/store.ts';
import type { Actor } from '../src/core/store/types.ts';
import type { TargetRow } from './run.ts';
import type { PlanSource } from '../src/core/plan/types.ts';
import { planSourceOf } from '../src/core/plan/source.ts';

const TARGET_STEPS = 10_000;
/** Plan sizes tried in order; the ladder stops at the first size where one ready()+claim is slow. */
const SIZES = [250, 500, 1_000, 2_000, 5_000, TARGET_STEPS];
const SLOW_MS = 500;
const CHAINS = 100;
const FULL_FRESH = 300;
const FULL_PROGRESS = 1_000;
/** Sampling at the full size stops after this long even if fewer cycles ran (whole run < ~3 min). */
const BUDGET_MS = 15_000;
const PLAN_PATH = 'plans/big.md';
const ACTOR: Actor = { worktree: '/bench/wt-1', agent: 'bench' };

interface Stats {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

interface Sample {
  readonly ready: number[];
  readonly claim: number[];
  readonly both: number[];
}

interface Opened {
  readonly store: Store;
  readonly source: PlanSource;
  readonly parseMs: number;
  readonly initMs: number;
  readonly items: number;
}

/** ready() and claimNext() on plans up to 10,000 steps through the SQLite store on temp files, plus initPlan. */
export async function benchClaimInProcess(): Promise<TargetRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sf-bench-claim-'));
  try {
    console.log(
      `\n== In-process ready + claim (plans of N steps in ${CHAINS} chains with fan-in, a task and a test per step, the SQLite store on temp files)`,
    );
    const ladder: { n: number; both: Stats; slow: boolean }[] = [];
    let big: Opened | undefined;
    for (const n of SIZES) {
      const o = await openPlan(dir, n);
      const probe = await cycle(o);
      const slow = probe.ready + probe.claim > SLOW_MS;
      const iterations =
        n === TARGET_STEPS
          ? FULL_FRESH
          : slow
            ? 3
            : Math.min(50, Math.max(5, Math.floor(2000 / (probe.ready + probe.claim))));
      const fresh = emptySample();
      const until = performance.now() + BUDGET_MS;
      for (let i = 0; i < iterations && (i < 20 || performance.now() < until); i++) push(fresh, await cycle(o));
      const f = { ready: stats(fresh.ready), claim: stats(fresh.claim), both: stats(fresh.both) };
      ladder.push({ n, both: f.both, slow });
      console.log(
        `  N=${String(n).padEnd(6)} init ${o.initMs.toFixed(0).padStart(5)} ms | ${fresh.both.length} claim+reset cycles: ready() ${fmt(f.ready)} | claimNext() ${fmt(f.claim)} | both ${fmt(f.both)}`,
      );
      if (n === TARGET_STEPS) {
        big = o;
        await progressing(o);
        await latePlan(o);
        break;
      }
      o.store.close();
      if (slow) break;
    }
    const reached = ladder.at(-1);
    if (!reached) throw new Error('no plan size measured');
    const at10k = reached.n === TARGET_STEPS;
    let extrapolated = NaN;
    let exponent = NaN;
    if (!at10k) {
      exponent = growthExponent(ladder.map((l) => [l.n, l.both.p50] as const));
      extrapolated = reached.both.p50 * (TARGET_STEPS / reached.n) ** exponent;
      console.log(
        `  stopped at N=${reached.n}: one ready()+claimNext() took over ${SLOW_MS} ms. Least-squares growth over N=${ladder.map((l) => l.n).join(', ')}: ~N^${exponent.toFixed(2)}`,
      );
      console.log(
        `  extrapolated ready()+claimNext() at N=${TARGET_STEPS}: ~${(quadratic(reached) / 1000).toFixed(0)} s per cycle if N^2, ~${(extrapolated / 1000).toFixed(0)} s with the fitted exponent (not run: it would blow the time budget)`,
      );
    }
    big ??= await openPlan(dir, TARGET_STEPS);
    console.log(
      `  N=${TARGET_STEPS}: parsePlan ${big.parseMs.toFixed(0)} ms, initPlan ${big.initMs.toFixed(0)} ms (one transaction, ${TARGET_STEPS} steps, ${big.items} items)`,
    );
    console.log(
      `  context: one raw BEGIN IMMEDIATE; UPDATE; COMMIT on the same file (fsync floor): median ${rawCommitMs(big.store).toFixed(2)} ms`,
    );
    await diagnose(big);
    big.store.close();

    const measured = at10k
      ? `${reached.both.p50.toFixed(2)} ms (p99 ${reached.both.p99.toFixed(2)})`
      : `not run: N=${reached.n} took ${reached.both.p50.toFixed(0)} ms, growth ~N^${exponent.toFixed(1)} => ~${(extrapolated / 1000).toFixed(0)} s at 10k`;
    return [
      {
        metric: 'ready()+claimNext(), 10k-step plan (median)',
        target: '<= 3 ms',
        measured,
        met: at10k && reached.both.p50 <= 3,
      },
      {
        metric: 'initPlan, 10k-step plan',
        target: '(report)',
        measured: `${big.initMs.toFixed(0)} ms (+ parse ${big.parseMs.toFixed(0)} ms)`,
        met: true,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function openPlan(dir: string, n: number): Promise<Opened> {
  const store = sqliteStore(join(dir, `plan-${n}.db`), { ifMissing: 'create' });
  const text = planText(n);
  let t0 = performance.now();
  const source: PlanSource = planSourceOf(PLAN_PATH, parsePlan(text, PLAN_PATH));
  const parseMs = performance.now() - t0;
  t0 = performance.now();
  const init = await store.initPlan(source, ACTOR);
  return { store, source, parseMs, initMs: performance.now() - t0, items: init.checklist_items_created };
}

/** One timed ready() and claimNext(), then an untimed reset so every cycle sees the same state. */
async function cycle(o: Opened): Promise<{ ready: number; claim: number }> {
  const r0 = performance.now();
  const ready = await o.store.ready(PLAN_PATH);
  const r1 = performance.now();
  const c = await o.store.claimNext(o.source, ACTOR);
  const r2 = performance.now();
  if (!c.claimed || ready.ready_steps.length === 0) throw new Error('nothing claimable in the fresh plan');
  await o.store.reset(PLAN_PATH, c.step_anchor, ACTOR, 'bench');
  return { ready: r1 - r0, claim: r2 - r1 };
}

/** Successive claim+complete, so completed rows and unblocked dependents accumulate. */
async function progressing(o: Opened): Promise<void> {
  const s = emptySample();
  const completeTimes: number[] = [];
  const until = performance.now() + BUDGET_MS;
  for (let i = 0; i < FULL_PROGRESS && (i < 20 || performance.now() < until); i++) {
    const r0 = performance.now();
    await o.store.ready(PLAN_PATH);
    const r1 = performance.now();
    const c = await o.store.claimNext(o.source, ACTOR);
    const r2 = performance.now();
    if (!c.claimed) throw new Error(`claim ${i} found nothing ready`);
    await o.store.complete(o.source, c.step_anchor, { ...ACTOR, token: c.claim_token }, { forceReason: 'bench' });
    completeTimes.push(performance.now() - r2);
    push(s, { ready: r1 - r0, claim: r2 - r1 });
  }
  console.log(
    `  N=${TARGET_STEPS}, ${s.both.length} successive claim+complete: ready() ${fmt(stats(s.ready))} | claimNext() ${fmt(stats(s.claim))} | both ${fmt(stats(s.both))} | complete() ${fmt(stats(completeTimes))}`,
  );
}

/**
 * The same plan with 90 % of its steps completed (one bulk UPDATE; the readiness triggers fire for
 * each row), where ready() lists pending steps instead of completed ones.
 */
async function latePlan(o: Opened): Promise<void> {
  const t0 = performance.now();
  sqliteConnection(o.store)
    .prepare(
      `UPDATE steps SET status = 'completed', completed_at = @now, completed_by = 'bench', lease_expires_at = NULL
    WHERE plan_path = @plan AND status != 'completed' AND step_index < @upto`,
    )
    .run({ plan: PLAN_PATH, now: new Date().toISOString(), upto: Math.floor(TARGET_STEPS * 0.9) });
  const bulkMs = performance.now() - t0;
  const s = emptySample();
  const until = performance.now() + BUDGET_MS;
  for (let i = 0; i < FULL_FRESH && (i < 20 || performance.now() < until); i++) push(s, await cycle(o));
  const ready = await o.store.ready(PLAN_PATH);
  console.log(
    `  N=${TARGET_STEPS}, ${ready.completed_steps.length} completed (bulk update ${bulkMs.toFixed(0)} ms), ${s.both.length} claim+reset cycles: ready() ${fmt(stats(s.ready))} | claimNext() ${fmt(stats(s.claim))} | both ${fmt(stats(s.both))}`,
  );
}

/**
 * Where a claim's time goes at 10,000 steps: each read claimNext and ready() make, timed on its own
 * on the plan as the runs above left it, and the query plan SQLite picks for the candidate query.
 */
async function diagnose(o: Opened): Promise<void> {
  const db = sqliteConnection(o.store);
  const now = new Date().toISOString();
  const candidate = `SELECT * FROM steps INDEXED BY idx_steps_ready WHERE plan_path = @plan AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0 ORDER BY step_index LIMIT 1`;
  const parts: [string, () => unknown][] = [
    ['requireCurrentPlan: the plans row (without the structure JSON)', () => findPlan(db, PLAN_PATH)],
    ['requireCurrentPlan: planHash of the parsed plan (memoised per parse)', () => planHash(o.source.plan())],
    [
      'candidate: first pending step without blockers (idx_steps_ready)',
      () => db.prepare(candidate).get({ plan: PLAN_PATH }),
    ],
    ['countOpen: ready steps, and plans.open_steps', () => countOpen(db, PLAN_PATH, now)],
    ['partitionSteps (everything ready() lists)', () => db.transaction(() => partitionSteps(db, PLAN_PATH, now))()],
  ];
  console.log(
    `  where the time goes at N=${TARGET_STEPS} (each piece alone, median of 15; claimNext runs the first four inside its write lock, ready() the last):`,
  );
  for (const [label, fn] of parts) {
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      const t0 = performance.now();
      fn();
      times.push(performance.now() - t0);
    }
    console.log(`    ${label.padEnd(66)} ${stats(times).p50.toFixed(3).padStart(8)} ms`);
  }
  const explain = (db.prepare(`EXPLAIN QUERY PLAN ${candidate}`).all({ plan: PLAN_PATH }) as { detail: string }[]).map(
    (r) => r.detail,
  );
  console.log(`    query plan of the candidate query: ${explain.join(' | ')}`);
}

/** The cost of a durable commit alone, so claim figures can be read against the disk. */
function rawCommitMs(store: Store): number {
  const db = sqliteConnection(store);
  db.exec(
    'CREATE TABLE IF NOT EXISTS bench_counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT OR IGNORE INTO bench_counter VALUES (1, 0)',
  );
  const update = db.prepare('UPDATE bench_counter SET n = n + 1 WHERE id = 1');
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t0 = performance.now();
    db.exec('BEGIN IMMEDIATE');
    update.run();
    db.exec('COMMIT');
    times.push(performance.now() - t0);
  }
  return stats(times).p50;
}

/**
 * A plan of `n` steps in `CHAINS` interleaved chains (step i depends on i - CHAINS); every tenth
 * step also waits on three earlier steps (fan-in). Each step has a task and a test.
 */
function planText(n: number): string {
  const lines = ['# Plan: Many steps', '', '## Approach', 'Benchmark.', ''];
  for (let i = 1; i <= n; i++) {
    const deps =
      i > CHAINS ? [i - CHAINS, ...(i % 10 === 0 ? [i - CHAINS - 1, i - CHAINS - 2, i - CHAINS - 3] : [])] : [];
    lines.push(`## Step ${i}: Work item ${i} {#s${i}}`);
    if (deps.length > 0) lines.push(`**Depends on:** ${deps.map((d) => `#s${d}`).join(', ')}`);
    lines.push('**Tasks:**', `- [ ] Do ${i}`, '**Tests:**', `- [ ] Check ${i}`, '');
  }
  return lines.join('\n');
}

/** Median ready()+claimNext() scaled to the target size assuming quadratic growth. */
function quadratic(point: { n: number; both: Stats }): number {
  return point.both.p50 * (TARGET_STEPS / point.n) ** 2;
}

/** Slope of log(time) against log(N): 1 is linear, 2 quadratic. */
function growthExponent(points: readonly (readonly [number, number])[]): number {
  const xs = points.map(([n]) => Math.log(n));
  const ys = points.map(([, t]) => Math.log(t));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  xs.forEach((x, i) => {
    num += (x - mx) * ((ys[i] ?? my) - my);
    den += (x - mx) ** 2;
  });
  return den === 0 ? NaN : num / den;
}

function emptySample(): Sample {
  return { ready: [], claim: [], both: [] };
}

function push(into: Sample, t: { ready: number; claim: number }): void {
  into.ready.push(t.ready);
  into.claim.push(t.claim);
  into.both.push(t.ready + t.claim);
}

function stats(values: readonly number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN };
}

function fmt(s: Stats): string {
  const n = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toFixed(2));
  return `median ${n(s.p50)} p99 ${n(s.p99)} ms`;
}

if (import.meta.main) await benchClaimInProcess();
