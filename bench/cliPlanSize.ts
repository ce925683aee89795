import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteStore, sqliteConnection } from '../src/core/store/sqlite/sqliteStore.ts';
import type { Actor } from '../src/core/store/types.ts';
import type { TargetRow } from './run.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.cjs');
const PLAN = 'plans/p.md';
const SIZES = [20, 400, 2000];
const WARMUP = 3;
const ROUNDS = Number(process.env.SF_BENCH_PLAN_ROUNDS ?? 20);
const COMMANDS = ['claim', 'heartbeat', 'update', 'complete', 'show', 'ready'] as const;
type Name = (typeof COMMANDS)[number];

interface Repo {
  readonly dir: string;
  readonly store: SqliteStore;
  readonly actor: Actor;
}

/**
 * Whether a step command's cost grows with the plan: at 20, 400 and 2,000 steps, each of claim,
 * heartbeat, update, complete, `show PLAN --step STEP --json` and ready as a whole process, each paired with
 * a `node -e 0` run next to it (alternating which goes first); the figure is the median of the pairs' ratios.
 */
export async function benchCliPlanSize(): Promise<TargetRow[]> {
  const env = childEnv();
  const oneStep = showsOneStep(env);
  const repos = SIZES.map((n) => makeRepo(n, env));
  try {
    const ratios = new Map<string, number[]>();
    const times = new Map<string, number[]>();
    for (let r = -WARMUP; r < ROUNDS; r++) {
      for (const [i, repo] of repos.entries()) {
        const round = await oneRound(repo, env, oneStep, r % 2 === 0);
        if (r < 0) continue;
        for (const name of COMMANDS) {
          const [ms, base] = round[name];
          push(ratios, `${name}@${i}`, ms / base);
          push(times, `${name}@${i}`, ms);
          push(times, `base@${i}`, base);
        }
      }
    }
    const show = oneStep ? 'show PLAN --step STEP --json' : 'show PLAN --json (no --step yet)';
    console.log(
      `\n== CLI cost by plan size (${ROUNDS} rounds after ${WARMUP} warm-up; each command paired with a node -e 0 run; median ratio, median ms)`,
    );
    console.log(`  ${'command'.padEnd(34)}${SIZES.map((n) => `${n} steps`.padStart(22)).join('')}`);
    const cell = (name: string, i: number): string =>
      `${median(ratios.get(`${name}@${i}`)).toFixed(2)}x ${median(times.get(`${name}@${i}`))
        .toFixed(1)
        .padStart(6)} ms`.padStart(22);
    const label = (name: Name): string =>
      ({
        claim: 'claim --json',
        heartbeat: 'heartbeat STEP --json',
        update: 'update STEP --all completed --json',
        complete: 'complete STEP --json',
        show,
        ready: 'ready --json',
      })[name];
    for (const name of COMMANDS)
      console.log(`  ${label(name).padEnd(34)}${SIZES.map((_, i) => cell(name, i)).join('')}`);
    console.log(
      `  ${'node -e 0'.padEnd(34)}${SIZES.map((_, i) =>
        `${median(times.get(`base@${i}`))
          .toFixed(1)
          .padStart(6)} ms`.padStart(22),
      ).join('')}`,
    );
    const last = SIZES.length - 1;
    const worst = COMMANDS.reduce((w, name) => Math.max(w, median(ratios.get(`${name}@${last}`))), 0);
    const worstSmall = COMMANDS.reduce((w, name) => Math.max(w, median(ratios.get(`${name}@0`))), 0);
    return [
      {
        metric: `CLI step commands on a 2,000-step plan, worst of ${COMMANDS.length} / node -e 0`,
        target: '<= 1.35x',
        measured: `${worst.toFixed(2)}x`,
        met: worst <= 1.35,
      },
      {
        metric: `CLI step commands on a 20-step plan, worst of ${COMMANDS.length} / node -e 0`,
        target: '(report)',
        measured: `${worstSmall.toFixed(2)}x`,
        met: true,
      },
    ];
  } finally {
    for (const repo of repos) {
      repo.store.close();
      rmSync(repo.dir, { recursive: true, force: true });
    }
  }
}

/** One claim → heartbeat → update → complete → show → ready cycle, each beside a baseline; then the step is reopened, untimed. */
async function oneRound(
  repo: Repo,
  env: NodeJS.ProcessEnv,
  oneStep: boolean,
  baseFirst: boolean,
): Promise<Record<Name, [number, number]>> {
  const pair = (args: string[]): [number, string, number] => {
    const base = baseFirst ? timeNode(['-e', '0'], repo.dir, env).ms : 0;
    const { ms, stdout } = timeNode(['--', CLI, ...args], repo.dir, env);
    const after = baseFirst ? base : timeNode(['-e', '0'], repo.dir, env).ms;
    return [ms, stdout, after];
  };
  const [claimMs, claimOut, claimBase] = pair(['claim', PLAN, '--json']);
  const claimed = JSON.parse(claimOut) as { claimed?: boolean; step_anchor?: string };
  if (claimed.claimed !== true || !claimed.step_anchor) throw new Error(`claim did not claim: ${claimOut}`);
  const step = claimed.step_anchor;
  const out = {} as Record<Name, [number, number]>;
  out.claim = [claimMs, claimBase];
  const [hb, , hbBase] = pair(['heartbeat', PLAN, step, '--json']);
  out.heartbeat = [hb, hbBase];
  const [up, , upBase] = pair(['update', PLAN, step, '--all', 'completed', '--json']);
  out.update = [up, upBase];
  const [co, coOut, coBase] = pair(['complete', PLAN, step, '--json']);
  if ((JSON.parse(coOut) as { completed?: boolean }).completed !== true)
    throw new Error(`complete did not complete: ${coOut}`);
  out.complete = [co, coBase];
  const [sh, , shBase] = pair(oneStep ? ['show', PLAN, '--step', step, '--json'] : ['show', PLAN, '--json']);
  out.show = [sh, shBase];
  const [re, , reBase] = pair(['ready', PLAN, '--json']);
  out.ready = [re, reBase];
  await repo.store.reopen(PLAN, step, repo.actor, 'bench');
  sqliteConnection(repo.store)
    .prepare(`UPDATE checklist_items SET status = 'open' WHERE plan_path = ? AND step_anchor = ?`)
    .run(PLAN, step);
  return out;
}

/** Whether this build's `show` takes a step (the bench also measures builds from before it did). */
function showsOneStep(env: NodeJS.ProcessEnv): boolean {
  return spawnSync(process.execPath, [CLI, 'show', '--help'], { env, encoding: 'utf8' }).stdout.includes('--step');
}

function timeNode(args: string[], cwd: string, env: NodeJS.ProcessEnv): { ms: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${String(r.status)}: ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

function makeRepo(n: number, env: NodeJS.ProcessEnv): Repo {
  const dir = mkdtempSync(join(tmpdir(), `sf-bench-plan${n}-`));
  const git = (...args: string[]): void => void execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('config', 'user.email', 'bench@example.com');
  git('config', 'user.name', 'bench');
  mkdirSync(join(dir, 'plans'));
  writeFileSync(join(dir, PLAN), planText(n));
  git('add', '.');
  git('commit', '-qm', 'plan');
  const r = spawnSync(process.execPath, [CLI, 'init', PLAN, '--json'], { cwd: dir, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`init failed: ${r.stderr}`);
  return {
    dir,
    store: new SqliteStore(join(dir, '.springfield', 'state.db')),
    actor: { worktree: dir, agent: 'bench' },
  };
}

/** A plan of `n` steps: four independent roots, the rest chained four apart with some fan-in, items on each. */
export function planText(n: number): string {
  const lines = ['# Plan: Bench plan', '', '## Approach', 'Measure the CLI.', ''];
  for (let i = 1; i <= n; i++) {
    const deps = i <= 4 ? [] : [i - 4, ...(i % 5 === 0 ? [i - 1, i - 2] : [])];
    lines.push(`## Step ${i}: Step number ${i} {#step-${i}}`);
    if (deps.length) lines.push(`**Depends on:** ${deps.map((d) => `#step-${d}`).join(', ')}`);
    lines.push('**Tasks:**', `- [ ] Task a of ${i}`, `- [ ] Task b of ${i}`, '**Tests:**', `- [ ] Test of ${i}`, '');
  }
  return lines.join('\n');
}

export function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'ELECTRON_RUN_AS_NODE' || k.startsWith('VSCODE_') || k.startsWith('SPRINGFIELD_') || k.startsWith('GIT_'))
      continue;
    env[k] = v;
  }
  return env;
}

function push(map: Map<string, number[]>, key: string, v: number): void {
  const list = map.get(key) ?? [];
  list.push(v);
  map.set(key, list);
}

function median(values: readonly number[] | undefined): number {
  const sorted = [...(values ?? [])].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
}

if (import.meta.main) await benchCliPlanSize();
