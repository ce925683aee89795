import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../src/cli/main.ts';
import { locateRepo } from '../src/core/git/repo.ts';
import { readPlanFile } from '../src/core/plan/parse.ts';
import { sqliteStore } from '../src/core/store/sqlite/sqliteStore.ts';
import type { Store } from '../src/core/store/store.ts';
import type { Actor } from '../src/core/store/types.ts';
import { childEnv, planText } from './processTiming.ts';
import type { TargetRow } from './run.ts';
import { planSourceOf } from '../src/core/plan/source.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.cjs');
const PLAN = 'plans/p.md';
const WARMUP = 5;
const ROUNDS = 60;
const BREAKDOWN_ROUNDS = 40;
const GIT_ARGS = ['rev-parse', '--path-format=absolute', '--git-common-dir', '--is-bare-repository', '--show-toplevel'];

type Variant = () => number | Promise<number>;

interface Summary {
  readonly median: number;
  readonly p90: number;
}

/** CLI `claim --json` and `show --json` wall time against `node -e 0`, plus where the time goes. */
export async function benchCliStartup(): Promise<TargetRow[]> {
  const repo = makeRepo();
  try {
    const env = childEnv();
    const db = join(repo, '.springfield', 'state.db');
    const store = sqliteStore(db);
    const actor: Actor = { worktree: repo, agent: 'bench' };
    const claimWith = async (runEnv: NodeJS.ProcessEnv): Promise<number> => {
      const { ms, stdout } = timeNode(['--', CLI, 'claim', PLAN, '--json'], repo, runEnv);
      const parsed = JSON.parse(stdout) as { claimed?: boolean; step_anchor?: string };
      if (parsed.claimed !== true || !parsed.step_anchor) throw new Error(`claim did not claim: ${stdout}`);
      await store.reset(PLAN, parsed.step_anchor, actor, 'bench');
      return ms;
    };
    const claim = (): Promise<number> => claimWith(env);
    const variants: Record<string, Variant> = {
      baseline: () => timeNode(['-e', '0'], repo, env).ms,
      claim,
      show: () => timeNode(['--', CLI, 'show', '--json'], repo, env).ms,
      // Not a step command: the whole CLI, as ES modules under Node's compile cache (fastPath/launcher.ts).
      epics: () => timeNode(['--', CLI, 'epic', 'list', '--json'], repo, env).ms,
    };
    const samples = await sampleInterleaved(variants, ROUNDS);
    const base = summarize(samples.baseline ?? []);
    const cl = summarize(samples.claim ?? []);
    const sh = summarize(samples.show ?? []);
    const ep = summarize(samples.epics ?? []);
    // Each round times the three back to back, so a round's ratio compares like with like even when
    // the machine's speed drifts between rounds; the figure is the median of those ratios.
    const claimRatio = pairedRatio(samples.claim ?? [], samples.baseline ?? []);
    const showRatio = pairedRatio(samples.show ?? [], samples.baseline ?? []);
    const epicsRatio = pairedRatio(samples.epics ?? [], samples.baseline ?? []);

    console.log(
      `\n== CLI startup (node ${process.version}, ${ROUNDS} alternating runs each after ${WARMUP} warm-up, 20-step plan in a real git repo)`,
    );
    console.log(row('node -e 0 (baseline)', base));
    console.log(
      row('springfield claim --json', cl) +
        `   ratio ${claimRatio.toFixed(2)}x (of medians ${(cl.median / base.median).toFixed(2)}x)`,
    );
    console.log(
      row('springfield show --json', sh) +
        `   ratio ${showRatio.toFixed(2)}x (of medians ${(sh.median / base.median).toFixed(2)}x)`,
    );
    console.log(
      row('springfield epic list --json', ep) +
        `   ratio ${epicsRatio.toFixed(2)}x (of medians ${(ep.median / base.median).toFixed(2)}x)`,
    );
    await breakdown(repo, env, store, actor, cl.median, claimWith);
    store.close();
    return [
      {
        metric: 'CLI claim --json / node -e 0 (median of per-round ratios)',
        target: '<= 1.35x',
        measured: `${claimRatio.toFixed(2)}x (${cl.median.toFixed(1)} vs ${base.median.toFixed(1)} ms)`,
        met: claimRatio <= 1.35,
      },
      {
        metric: 'CLI show --json / node -e 0 (median of per-round ratios)',
        target: '<= 1.35x',
        measured: `${showRatio.toFixed(2)}x (${sh.median.toFixed(1)} vs ${base.median.toFixed(1)} ms)`,
        met: showRatio <= 1.35,
      },
      {
        metric: 'CLI epic list --json (whole CLI) / node -e 0',
        target: '(report)',
        measured: `${epicsRatio.toFixed(2)}x (${ep.median.toFixed(1)} vs ${base.median.toFixed(1)} ms)`,
        met: true,
      },
    ];
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

/** Differential timings: each startup phase run on its own, plus warm in-process costs. */
async function breakdown(
  repo: string,
  env: NodeJS.ProcessEnv,
  store: Store,
  actor: Actor,
  claimMs: number,
  claimWith: (env: NodeJS.ProcessEnv) => Promise<number>,
): Promise<void> {
  const uncached = { ...env, NODE_DISABLE_COMPILE_CACHE: '1' };
  const gitScript = `require('node:child_process').execFileSync('git', ${JSON.stringify(GIT_ARGS)}, { stdio: ['ignore', 'pipe', 'pipe'] })`;
  const samples = await sampleInterleaved(
    {
      baseline: () => timeNode(['-e', '0'], repo, env).ms,
      version: () => timeNode(['--', CLI, '--version'], repo, env).ms,
      versionNoCache: () => timeNode(['--', CLI, '--version'], repo, uncached).ms,
      claim: () => claimWith(env),
      claimNoCache: () => claimWith(uncached),
      crypto: () => timeNode(['-e', "require('node:crypto')"], repo, env).ms,
      git: () => timeNode(['-e', gitScript], repo, env).ms,
    },
    BREAKDOWN_ROUNDS,
  );
  const med = (k: string): number => summarize(samples[k] ?? []).median;
  const base = med('baseline');

  const warm = (fn: () => void): number => {
    for (let i = 0; i < 5; i++) fn();
    const times: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t0 = performance.now();
      fn();
      times.push(performance.now() - t0);
    }
    return summarize(times).median;
  };
  const locateWarm = warm(() => locateRepo(repo, env));
  const openWarm = warm(() => sqliteStore(join(repo, '.springfield', 'state.db')).close());
  const claimTimes: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    const r = await store.claimNext(planSourceOf(PLAN, readPlanFile(join(repo, PLAN), PLAN)), actor);
    claimTimes.push(performance.now() - t0);
    if (r.claimed) await store.reset(PLAN, r.step_anchor, actor, 'bench');
  }
  const io = { cwd: repo, env, stdout: (): void => {}, stderr: (): void => {} };
  const cliWarmTimes: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    await runCli(['claim', PLAN, '--json', '--agent', 'bench'], io);
    cliWarmTimes.push(performance.now() - t0);
    const r = await store.ready(PLAN);
    for (const a of r.claimed_steps) await store.reset(PLAN, a, actor, 'bench');
  }
  const claimWarm = summarize(claimTimes.slice(5)).median;
  const cliWarm = summarize(cliWarmTimes.slice(5)).median;

  const pad = (s: string): string => s.padEnd(72);
  const ms = (v: number): string => `${v.toFixed(1).padStart(6)} ms`;
  const delta = (k: string): string => ms(med(k) - base);
  const kb = (f: string): number => Math.round(statSync(join(ROOT, 'dist', f)).size / 1024);
  console.log(
    `\n-- where claim's ${claimMs.toFixed(1)} ms goes (fresh processes, ${BREAKDOWN_ROUNDS} runs; each figure is a median over node -e 0 = ${base.toFixed(1)} ms)`,
  );
  console.log(`${pad('  claim --json (again, in this round)')}${delta('claim')}`);
  console.log(`${pad('    the same without the code caches (NODE_DISABLE_COMPILE_CACHE=1)')}${delta('claimNoCache')}`);
  console.log(
    `${pad(`  dist/cli.cjs --version: launcher + ${kb('springfield.cjs')} KB CommonJS bundle (step commands, better-sqlite3 JS)`)}${delta('version')}`,
  );
  console.log(`${pad('    the same without the code caches')}${delta('versionNoCache')}`);
  console.log(
    `${pad('  not on the path any more: require node:crypto (drift is checked by the plan file bytes)')}${delta('crypto')}`,
  );
  console.log(`${pad('  not on the path any more: execFileSync git rev-parse (.git is read instead)')}${delta('git')}`);
  console.log(`-- warm, in-process (median of 25 after warm-up)`);
  console.log(`${pad('  locateRepo (reads .git, no git process)')}${ms(locateWarm)}`);
  console.log(`${pad('  open state.db (WAL, pragmas, schema check) + close')}${ms(openWarm)}`);
  console.log(`${pad('  store.claimNext (one BEGIN IMMEDIATE..COMMIT, fsync)')}${ms(claimWarm)}`);
  console.log(`${pad('  whole runCli(claim --json): parse plan, locate, open, claim')}${ms(cliWarm)}`);
  console.log(
    `${pad('  the rest of a fresh claim: native module load, cold (unoptimised) code, first statements')}${ms(claimMs - base - (med('version') - base) - cliWarm)}`,
  );
}

/** Runs each variant once per round, rotating the order, after a warm-up. */
async function sampleInterleaved(variants: Record<string, Variant>, rounds: number): Promise<Record<string, number[]>> {
  const names = Object.keys(variants);
  const out: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = -WARMUP; r < rounds; r++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + Math.max(r, 0)) % names.length] as string;
      const ms = await (variants[name] as Variant)();
      if (r >= 0) out[name]?.push(ms);
    }
  }
  return out;
}

function timeNode(args: string[], cwd: string, env: NodeJS.ProcessEnv): { ms: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd, env, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${String(r.status)}: ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

function makeRepo(): string {
  const repo = mkdtempSync(join(tmpdir(), 'sf-bench-cli-'));
  const git = (...args: string[]): void => void execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
  git('init', '-q');
  git('config', 'user.email', 'bench@example.com');
  git('config', 'user.name', 'bench');
  mkdirSync(join(repo, 'plans'));
  writeFileSync(join(repo, PLAN), planText(20));
  git('add', '.');
  git('commit', '-qm', 'plan');
  const r = spawnSync(process.execPath, [CLI, 'init', PLAN, '--json'], {
    cwd: repo,
    env: childEnv(),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`init failed: ${r.stderr}`);
  return repo;
}

/** The median over rounds of `a[i] / b[i]` (both sampled in round i). */
function pairedRatio(a: readonly number[], b: readonly number[]): number {
  return summarize(a.map((v, i) => v / (b[i] ?? NaN))).median;
}

function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { median: at(0.5), p90: at(0.9) };
}

function row(label: string, s: Summary): string {
  return `  ${label.padEnd(28)} median ${s.median.toFixed(1).padStart(6)} ms   p90 ${s.p90.toFixed(1).padStart(6)} ms`;
}

if (import.meta.main) await benchCliStartup();
