// Scheduler reaction time: from one agent's exit to the next agent's start, through the real
// `springfield orchestrate` loop (the run's end recorded, the worktree checked, the next step
// claimed, `springfield run` started), as a ratio to `node -e 0` measured in the same run.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TargetRow } from './run.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.cjs');
const RUNS = 50;
const BASELINE_ROUNDS = 30;

/** The agent: stamps its start, completes its step through the CLI, stamps its exit (the last thing it does). */
const AGENT = String.raw`
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const now = () => performance.timeOrigin + performance.now();
const dir = process.env.BENCH_STAMPS, step = process.env.SPRINGFIELD_STEP;
fs.writeFileSync(dir + '/' + step + '.start', String(now()));
execFileSync(process.execPath, [process.env.BENCH_CLI, 'complete', process.env.SPRINGFIELD_PLAN, step], { stdio: 'ignore' });
fs.writeFileSync(dir + '/' + step + '.exit', String(now()));
`;

interface Summary {
  readonly median: number;
  readonly p95: number;
}

/** 50 reactions of the headless scheduler, one agent at a time, against the cost of starting Node. */
export async function benchReaction(): Promise<TargetRow[]> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'sf-bench-reaction-')));
  try {
    const repo = join(dir, 'repo');
    const stamps = join(dir, 'stamps');
    mkdirSync(stamps);
    const env = prepare(repo, dir, stamps);
    console.log(
      `\n== Scheduler reaction: an agent's exit → the next agent's start (${RUNS} runs, one agent at a time)`,
    );
    const started = performance.now();
    const r = spawnSync(process.execPath, [CLI, 'orchestrate', '--watch', '--until-idle', '--interval', '1'], {
      cwd: repo,
      env,
      encoding: 'utf8',
      timeout: 600_000,
    });
    if (r.status !== 0)
      throw new Error(`orchestrate exited ${r.status}: ${r.stderr.split('\n').slice(-5).join(' | ')}`);
    const wall = performance.now() - started;
    const runs = readdirSync(stamps)
      .filter((f) => f.endsWith('.start'))
      .map((f) => f.replace(/\.start$/, ''))
      .map((step) => ({
        start: Number(readFileSync(join(stamps, `${step}.start`), 'utf8')),
        exit: Number(readFileSync(join(stamps, `${step}.exit`), 'utf8')),
      }))
      .sort((a, b) => a.start - b.start);
    const reactions = runs.slice(1).map((run, i) => run.start - (runs[i]?.exit ?? run.start));
    const baseline = nodeStartup(env);
    const reaction = summarize(reactions);
    const node = summarize(baseline);
    console.log(`  ${runs.length} agent runs in ${(wall / 1000).toFixed(1)} s of orchestrate`);
    console.log(
      `  reaction            median ${reaction.median.toFixed(1)} ms   p95 ${reaction.p95.toFixed(1)} ms   max ${Math.max(...reactions).toFixed(1)} ms`,
    );
    console.log(`  node -e 0           median ${node.median.toFixed(1)} ms   p95 ${node.p95.toFixed(1)} ms`);
    console.log(
      `  ratio to node -e 0  median ${(reaction.median / node.median).toFixed(1)}x   p95 ${(reaction.p95 / node.median).toFixed(1)}x`,
    );
    console.log(
      '  (a reaction holds: springfield run recording the end, orchestrate noticing it, tidying the worktree, claiming the next step, and starting springfield run, which starts the agent: two Node start-ups)',
    );
    return [
      {
        metric: `scheduler reaction, agent exit → next agent start (median, ${reactions.length} runs)`,
        target: '(report)',
        measured: `${reaction.median.toFixed(0)} ms = ${(reaction.median / node.median).toFixed(1)}x node -e 0 (${node.median.toFixed(1)} ms)`,
        met: true,
      },
      {
        metric: '  scheduler reaction p95',
        target: '<= 1 s',
        measured: `${reaction.p95.toFixed(0)} ms = ${(reaction.p95 / node.median).toFixed(1)}x node -e 0`,
        met: reaction.p95 <= 1000,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A repository with an approved, started epic of RUNS + 1 independent steps and the stamping agent as Ralph. */
function prepare(repo: string, dir: string, stamps: string): NodeJS.ProcessEnv {
  mkdirSync(join(repo, 'plans'), { recursive: true });
  const plan = [
    '# Plan: Reaction',
    '',
    ...Array.from({ length: RUNS + 1 }, (_, i) => [`## Step ${i + 1}: Part ${i + 1} {#step-${i + 1}}`, '']).flat(),
  ].join('\n');
  writeFileSync(join(repo, 'plans', 'r.md'), plan);
  writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (k !== 'ELECTRON_RUN_AS_NODE' && !/^(VSCODE_|SPRINGFIELD_|GIT_)/.test(k)) env[k] = v;
  // The config is allowed in the bench's own state (beside its repository), never the user's.
  Object.assign(env, { BENCH_STAMPS: stamps, BENCH_CLI: CLI, XDG_STATE_HOME: join(dir, 'state') });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore', env });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'bench@example.com');
  git('config', 'user.name', 'bench');
  git('add', '-A');
  git('commit', '-qm', 'plan');
  const sf = (...args: string[]) =>
    execFileSync(process.execPath, [CLI, ...args, '--json'], { cwd: repo, env, encoding: 'utf8' });
  const epic = (JSON.parse(sf('epic', 'create', 'Reaction', '--complexity', 'trivial')) as { id: string }).id;
  sf('plan', 'propose', epic, 'plans/r.md', '--agent', 'lisa');
  sf('plan', 'approve', epic, '--agent', 'marge');
  const agent = join(dir, 'agent.cjs');
  writeFileSync(agent, AGENT);
  writeFileSync(
    join(repo, '.springfield', 'config.json'),
    JSON.stringify({ roles: { ralph: [process.execPath, agent] }, maxParallelAgents: 1 }),
  );
  sf('allow');
  return env;
}

function nodeStartup(env: NodeJS.ProcessEnv): number[] {
  const out: number[] = [];
  for (let i = 0; i < BASELINE_ROUNDS + 3; i++) {
    const t = performance.now();
    spawnSync(process.execPath, ['-e', '0'], { env, stdio: 'ignore' });
    if (i >= 3) out.push(performance.now() - t);
  }
  return out;
}

function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  return { median: at(0.5), p95: at(0.95) };
}

if (import.meta.main) {
  const rows = await benchReaction();
  console.log(
    `\n(node ${process.version}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
  );
  for (const r of rows) console.log(`${r.metric}: ${r.measured} (target ${r.target})`);
}
