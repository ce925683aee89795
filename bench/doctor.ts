import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePlan } from '../src/core/plan/parse.ts';
import { checkIntegrity } from '../src/core/store/sqlite/integrity.ts';
import { sqliteStore, sqliteConnection } from '../src/core/store/sqlite/sqliteStore.ts';
import type { Store } from '../src/core/store/store.ts';
import type { Actor } from '../src/core/store/types.ts';
import { childEnv, planText } from './processTiming.ts';
import type { TargetRow } from './run.ts';
import { planSourceOf } from '../src/core/plan/source.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.cjs');
const PLANS = 40;
const STEPS = 1000;
const EPICS = 100;
const EVENTS = Number(process.env.SF_BENCH_DOCTOR_EVENTS ?? 1_200_000);
const ROUNDS = Number(process.env.SF_BENCH_DOCTOR_ROUNDS ?? 7);
const WARMUP = 1;
const BATCH = 50_000;

/**
 * `springfield doctor` (and `doctor --full`) on a large SQLite store — 40 plans of 1,000 steps
 * (120,000 checklist items), 100 epics and ~1.2 M events, about 230 MB — against `node -e 0`, beside
 * claim, ready and events on the same store, then what each of doctor's queries costs in-process.
 * Building the store takes seconds (the events are appended in bulk); `--keep DIR` builds it in DIR
 * (or reuses the one there), so two builds of the CLI can be compared on the same store.
 */
export async function benchDoctor(keep?: string): Promise<TargetRow[]> {
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'sf-bench-doctor-'));
  try {
    const env = childEnv();
    const built = await buildStore(dir, env);
    const db = join(dir, '.springfield', 'state.db');
    const store = sqliteStore(db);
    const actor: Actor = { worktree: dir, agent: 'bench' };
    const megabytes =
      (existsSync(`${db}-wal`) ? statSync(`${db}-wal`).size : 0) / 1048576 + statSync(db).size / 1048576;
    const events = Number(sqliteConnection(store).prepare('SELECT max(id) FROM events').pluck().get());
    console.log(
      `\n== doctor on a large store (node ${process.version}; ${PLANS} plans × ${STEPS} steps, ${EPICS} epics, ${events.toLocaleString('en')} events, ${megabytes.toFixed(0)} MB; ${built})`,
    );

    const plan = 'plans/p01.md';
    const variants: Record<string, () => number | Promise<number>> = {
      baseline: () => timeNode(['-e', '0'], dir, env).ms,
      doctor: () => timeNode(['--', CLI, 'doctor', '--json'], dir, env).ms,
      // (a build from before --full existed checks every page without it)
      ...(hasFull(env) ? { doctorFull: () => timeNode(['--', CLI, 'doctor', '--full', '--json'], dir, env).ms } : {}),
      claim: async () => {
        const { ms, stdout } = timeNode(['--', CLI, 'claim', plan, '--json'], dir, env);
        const c = JSON.parse(stdout) as { claimed?: boolean; step_anchor?: string };
        if (c.claimed !== true || !c.step_anchor) throw new Error(`claim did not claim: ${stdout}`);
        await store.reset(plan, c.step_anchor, actor, 'bench');
        return ms;
      },
      ready: () => timeNode(['--', CLI, 'ready', plan, '--json'], dir, env).ms,
      events: () => timeNode(['--', CLI, 'events', '--limit', '50', '--json'], dir, env).ms,
    };
    const names = Object.keys(variants);
    const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = -WARMUP; r < ROUNDS; r++) {
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + Math.max(r, 0)) % names.length] as string;
        const ms = await (variants[name] as () => number | Promise<number>)();
        if (r >= 0) samples[name]?.push(ms);
      }
    }
    const base = samples.baseline ?? [];
    const line = (label: string, name: string): string => {
      const v = samples[name] ?? [];
      return `  ${label.padEnd(34)} median ${median(v).toFixed(0).padStart(6)} ms   ratio ${pairedRatio(v, base).toFixed(2)}x`;
    };
    console.log(
      `  ${ROUNDS} alternating rounds after ${WARMUP} warm-up; the ratio is the median of per-round ratios to node -e 0`,
    );
    console.log(`  ${'node -e 0 (baseline)'.padEnd(34)} median ${median(base).toFixed(0).padStart(6)} ms`);
    console.log(line('springfield doctor --json', 'doctor'));
    if (samples.doctorFull) console.log(line('springfield doctor --full --json', 'doctorFull'));
    console.log(line('springfield claim --json', 'claim'));
    console.log(line('springfield ready PLAN --json', 'ready'));
    console.log(line('springfield events --limit 50 --json', 'events'));

    console.log('  -- in-process, one run each (what doctor could ask SQLite)');
    const conn = sqliteConnection(store);
    const time = (label: string, fn: () => unknown): void => {
      const t0 = performance.now();
      fn();
      console.log(`  ${label.padEnd(64)} ${(performance.now() - t0).toFixed(0).padStart(6)} ms`);
    };
    time('PRAGMA integrity_check (every page, every index)', () => conn.pragma('integrity_check'));
    time('PRAGMA quick_check (every page, no index cross-check)', () => conn.pragma('quick_check'));
    time('PRAGMA foreign_key_check (every table with a foreign key)', () => conn.pragma('foreign_key_check'));
    time("PRAGMA integrity_check('events')", () => conn.pragma("integrity_check('events')"));
    time("checkIntegrity (doctor's default: state tables, the log's ends)", () => checkIntegrity(conn, false));
    time('live claims (partial index)', () =>
      conn
        .prepare(
          `SELECT plan_path, anchor FROM steps WHERE parent_anchor IS NULL AND status IN ('claimed', 'in_progress')`,
        )
        .all(),
    );
    store.close();
    const doctorRatio = pairedRatio(samples.doctor ?? [], base);
    return [
      {
        metric: `CLI doctor on ${events.toLocaleString('en')} events / node -e 0`,
        target: '(report)',
        measured: `${doctorRatio.toFixed(2)}x (${median(samples.doctor ?? []).toFixed(0)} vs ${median(base).toFixed(0)} ms)`,
        met: true,
      },
    ];
  } finally {
    if (keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/** A git repository with the plans, their store and the events; reused when `dir` already has one. */
async function buildStore(dir: string, env: NodeJS.ProcessEnv): Promise<string> {
  const db = join(dir, '.springfield', 'state.db');
  if (existsSync(db)) return `reused ${dir}`;
  const t0 = performance.now();
  const git = (...args: string[]): void => void execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  mkdirSync(join(dir, 'plans'), { recursive: true });
  git('init', '-q');
  git('config', 'user.email', 'bench@example.com');
  git('config', 'user.name', 'bench');
  const paths = Array.from({ length: PLANS }, (_, i) => `plans/p${String(i + 1).padStart(2, '0')}.md`);
  const textOf = (p: string): string => planText(STEPS).replace('# Plan: Bench plan', `# Plan: ${p}`);
  for (const p of paths) writeFileSync(join(dir, p), textOf(p));
  writeFileSync(join(dir, '.gitignore'), '.springfield/\n');
  git('add', '.');
  git('commit', '-qm', 'plans');
  const r = spawnSync(process.execPath, [CLI, 'init', paths[0] as string, '--json'], {
    cwd: dir,
    env,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`init failed: ${r.stderr}`);
  const store = sqliteStore(db);
  try {
    const actor: Actor = { worktree: dir, agent: 'bench' };
    for (const p of paths.slice(1)) await store.initPlan(planSourceOf(p, parsePlan(textOf(p), p)), actor);
    for (let i = 0; i < EPICS; i++)
      await store.createEpic({ title: `Epic ${i}`, brief: 'bench', priority: 'P2', complexity: 'standard' }, actor);
    appendEvents(store, paths, dir);
  } finally {
    store.close();
  }
  return `built in ${((performance.now() - t0) / 1000).toFixed(0)} s`;
}

/**
 * The history of a busy store, appended directly (the log's rows are what doctor would scan): each
 * step claimed, started, heartbeated, its items ticked and completed, over and over, until EVENTS.
 */
function appendEvents(store: Store, paths: readonly string[], dir: string): void {
  const conn = sqliteConnection(store);
  const have = Number(conn.prepare('SELECT count(*) FROM events').pluck().get());
  const insert =
    conn.prepare(`INSERT INTO events (at, worktree, agent, entity, action, plan_path, step_anchor, epic_id, from_status, to_status, reason, data)
    VALUES (?, ?, ?, 'step', ?, ?, ?, NULL, ?, ?, NULL, ?)`);
  const cycle: [string, string | null, string | null][] = [
    ['claim', 'pending', 'claimed'],
    ['start', 'claimed', 'in_progress'],
    ['heartbeat', null, null],
    ['update', null, null],
    ['heartbeat', null, null],
    ['complete', 'in_progress', 'completed'],
  ];
  const start = Date.parse('2025-01-01T00:00:00Z');
  for (let done = have; done < EVENTS;) {
    const n = Math.min(BATCH, EVENTS - done);
    conn.transaction(() => {
      for (let k = 0; k < n; k++) {
        const i = done + k;
        const [action, from, to] = cycle[i % cycle.length] as [string, string | null, string | null];
        const step = Math.floor(i / cycle.length);
        const plan = paths[step % paths.length] as string;
        insert.run(
          new Date(start + i * 1000).toISOString(),
          `${dir}/wt-${step % 8}`,
          `agent-${step % 8}`,
          action,
          plan,
          `step-${(Math.floor(step / paths.length) % STEPS) + 1}`,
          from,
          to,
          action === 'claim' ? JSON.stringify({ token: step + 1, lease_seconds: 7200 }) : null,
        );
      }
    })();
    done += n;
  }
}

/** Whether this build's doctor takes --full (the bench also measures builds from before it did). */
function hasFull(env: NodeJS.ProcessEnv): boolean {
  return spawnSync(process.execPath, [CLI, 'doctor', '--help'], { env, encoding: 'utf8' }).stdout.includes('--full');
}

function timeNode(args: string[], cwd: string, env: NodeJS.ProcessEnv): { ms: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${String(r.status)}: ${r.stdout}${r.stderr}`);
  return { ms, stdout: r.stdout };
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.ceil(0.5 * s.length) - 1] ?? NaN;
}

function pairedRatio(a: readonly number[], b: readonly number[]): number {
  return median(a.map((v, i) => v / (b[i] ?? NaN)));
}

if (import.meta.main) {
  const at = process.argv.indexOf('--keep');
  await benchDoctor(at >= 0 ? resolve(process.argv[at + 1] ?? '') : undefined);
}
