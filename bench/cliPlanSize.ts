import { rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqliteStore, sqliteConnection } from '../src/core/store/sqlite/sqliteStore.ts';
import type { Store } from '../src/core/store/store.ts';
import type { Actor } from '../src/core/store/types.ts';
import { childEnv, inRounds, makePlanRepo, PLAN, ProcessTimer, Samples } from './processTiming.ts';
import type { TargetRow } from './run.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.cjs');
const SIZES = [20, 400, 2000];
const WARMUP = 3;
const ROUNDS = Number(process.env.SF_BENCH_PLAN_ROUNDS ?? 20);
const COMMANDS = ['claim', 'heartbeat', 'update', 'complete', 'show', 'ready'] as const;
type Name = (typeof COMMANDS)[number];

interface Repo {
  readonly dir: string;
  readonly store: Store;
  readonly actor: Actor;
}

/**
 * Whether a step command's cost grows with the plan: at 20, 400 and 2,000 steps, each of claim,
 * heartbeat, update, complete, `show PLAN --step STEP --json` and ready as a whole process, each paired with
 * a `node -e 0` run next to it (alternating which goes first); the figure is the median of the pairs' ratios.
 */
export async function benchCliPlanSize(): Promise<TargetRow[]> {
  const env = childEnv();
  // Wall time only: no module preloaded into the processes compared with node -e 0.
  const timer = new ProcessTimer();
  const oneStep = showsOneStep(env, timer);
  const repos = SIZES.map((n) => makeRepo(n, env, timer));
  try {
    const samples = new Samples();
    await inRounds(WARMUP, ROUNDS, samples, async (r, keep) => {
      for (const [i, repo] of repos.entries()) {
        const round = await oneRound(repo, env, timer, oneStep, r % 2 === 0);
        for (const name of COMMANDS) {
          const [ms, base] = round[name];
          keep(`ratio ${name}@${i}`, ms / base);
          keep(`ms ${name}@${i}`, ms);
          keep(`ms base@${i}`, base);
        }
      }
    });
    const ratio = (key: string): number => samples.median(`ratio ${key}`);
    const ms = (key: string): number => samples.median(`ms ${key}`);
    const show = oneStep ? 'show PLAN --step STEP --json' : 'show PLAN --json (no --step yet)';
    console.log(
      `\n== CLI cost by plan size (${ROUNDS} rounds after ${WARMUP} warm-up; each command paired with a node -e 0 run; median ratio, median ms)`,
    );
    console.log(`  ${'command'.padEnd(34)}${SIZES.map((n) => `${n} steps`.padStart(22)).join('')}`);
    const cell = (name: string, i: number): string =>
      `${ratio(`${name}@${i}`).toFixed(2)}x ${ms(`${name}@${i}`).toFixed(1).padStart(6)} ms`.padStart(22);
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
        `${ms(`base@${i}`).toFixed(1).padStart(6)} ms`.padStart(22),
      ).join('')}`,
    );
    const last = SIZES.length - 1;
    const worst = COMMANDS.reduce((w, name) => Math.max(w, ratio(`${name}@${last}`)), 0);
    const worstSmall = COMMANDS.reduce((w, name) => Math.max(w, ratio(`${name}@0`)), 0);
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
  timer: ProcessTimer,
  oneStep: boolean,
  baseFirst: boolean,
): Promise<Record<Name, [number, number]>> {
  const pair = (args: string[]): [number, string, number] => {
    const base = baseFirst ? timer.time(['-e', '0'], repo.dir, env).ms : 0;
    const { ms, stdout } = timer.time(['--', CLI, ...args], repo.dir, env);
    const after = baseFirst ? base : timer.time(['-e', '0'], repo.dir, env).ms;
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
function showsOneStep(env: NodeJS.ProcessEnv, timer: ProcessTimer): boolean {
  return timer.time([CLI, 'show', '--help'], ROOT, env).stdout.includes('--step');
}

function makeRepo(n: number, env: NodeJS.ProcessEnv, timer: ProcessTimer): Repo {
  const dir = makePlanRepo(n, CLI, env, timer);
  return {
    dir,
    store: sqliteStore(join(dir, '.springfield', 'state.db')),
    actor: { worktree: dir, agent: 'bench' },
  };
}

if (import.meta.main) await benchCliPlanSize();
