// The fleet governor, measured (docs/scheduler.md, "The fleet"): one workload — EPICS approved epics
// of one step each, a scripted builder whose step is a "build" of fixed cost (BUILD_MS of CPU on one
// core, BUILD_MB of memory held meanwhile), the same build as verification — run through the real
// `springfield orchestrate` three ways in one session: a fixed cap of 20 agents, a fixed cap of 4,
// and "auto" with admission. Reports merged steps per minute, the peak of memory in use, runs ended
// by the machine (a build past its timeout) and sessions lost to usage limits.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TargetRow } from './run.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.cjs');
const EPICS = Number(process.env.SF_BENCH_FLEET_EPICS ?? 12);
const BUILD_MS = Number(process.env.SF_BENCH_FLEET_BUILD_MS ?? 1500);
const BUILD_MB = Number(process.env.SF_BENCH_FLEET_BUILD_MB ?? 150);
/** A builder's timeout: several times its build's cost on an idle core, so only an overloaded machine ends one. */
const TIMEOUT_S = Number(process.env.SF_BENCH_FLEET_TIMEOUT_S ?? 10);
/** Keep each way's temp folder (its repository, store and logs) and print where it is. */
const KEEP = process.env.SF_BENCH_FLEET_KEEP === '1';
/** Run only the ways whose name contains this text. */
const ONLY = process.env.SF_BENCH_FLEET_ONLY ?? '';

/** The build: BUILD_MS of CPU (measured as this process's own CPU time) with BUILD_MB held. */
const BUILD = String.raw`
const held = Buffer.alloc(Number(process.env.BENCH_BUILD_MB) * 1048576, 1);
const until = Number(process.env.BENCH_BUILD_MS) * 1000;
let x = 0;
const spent = () => { const u = process.cpuUsage(); return u.user + u.system; };
while (spent() < until) for (let i = 0; i < 100000; i++) x = (x + held[i % held.length]) % 1e9;
`;

const BUILDER = String.raw`
const { execFileSync } = require('node:child_process');
const env = process.env;
execFileSync(process.execPath, [env.BENCH_BUILD], { stdio: 'ignore' });
require('node:fs').writeFileSync('built-' + env.SPRINGFIELD_EPIC + '.txt', 'built\n');
const sf = (...a) => execFileSync(process.execPath, [env.BENCH_CLI, ...a], { stdio: ['ignore', 'ignore', 'inherit'] });
sf('update', env.SPRINGFIELD_PLAN, env.SPRINGFIELD_STEP, '--all', 'completed');
sf('commit', '-m', 'Build ' + env.SPRINGFIELD_STEP);
`;

type Way = { readonly name: string; readonly maxParallelAgents: number | 'auto'; readonly admission: boolean };

const WAYS: readonly Way[] = [
  { name: 'fixed cap 20', maxParallelAgents: 20, admission: false },
  { name: 'fixed cap 4', maxParallelAgents: 4, admission: false },
  { name: 'auto + admission', maxParallelAgents: 'auto', admission: true },
];

interface Outcome {
  readonly merged: number;
  readonly perMinute: number;
  readonly peakMb: number;
  readonly endedByMachine: number;
  readonly limited: number;
}

function memoryInUseMb(): number {
  const text = readFileSync('/proc/meminfo', 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return (kb('MemTotal') - kb('MemAvailable')) / 1024;
}

async function workload(way: Way): Promise<Outcome> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'sf-bench-fleet-')));
  try {
    const repo = join(dir, 'repo');
    const env = prepare(repo, dir, way);
    const baseline = memoryInUseMb();
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, memoryInUseMb() - baseline)), 100);
    const started = performance.now();
    // A run the machine ended is retried by the scheduler, until its epic blocks (then it is not merged).
    const r = await new Promise<{ status: number | null; stderr: string }>((done) => {
      const child = orchestrate(repo, env);
      let stderr = '';
      child.stdout?.on('data', (c: Buffer) => appendFileSync(join(dir, 'orchestrate.log'), c));
      child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      child.on('close', (status) => done({ status, stderr }));
    });
    clearInterval(sampler);
    const wallMs = performance.now() - started;
    if (r.status !== 0)
      throw new Error(`orchestrate exited ${r.status}: ${r.stderr.split('\n').slice(-5).join(' | ')}`);
    const sf = (...args: string[]) =>
      JSON.parse(
        spawnSync(process.execPath, [CLI, ...args, '--json'], { cwd: repo, env, encoding: 'utf8' }).stdout,
      ) as Record<string, unknown>;
    const merged = (sf('epic', 'list', '--status', 'done').epics as unknown[]).length;
    const runs = sf('runs', '--limit', '1000').runs as { status: string }[];
    return {
      merged,
      perMinute: merged / (wallMs / 60_000),
      peakMb: peak,
      endedByMachine: runs.filter((x) => x.status === 'timed_out' || x.status === 'lost').length,
      limited: runs.filter((x) => x.status === 'limited').length,
    };
  } finally {
    if (KEEP) console.log(`  (kept ${dir})`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

function orchestrate(repo: string, env: NodeJS.ProcessEnv) {
  return spawn(process.execPath, [CLI, 'orchestrate', '--watch', '--until-idle', '--interval', '1', '--json'], {
    cwd: repo,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function prepare(repo: string, dir: string, way: Way): NodeJS.ProcessEnv {
  mkdirSync(join(repo, 'plans'), { recursive: true });
  for (let i = 1; i <= EPICS; i++)
    writeFileSync(join(repo, 'plans', `e${i}.md`), `# Plan: e${i}\n\n## Step 1: Build {#step-1}\n- [ ] Build\n`);
  writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
  writeFileSync(join(dir, 'build.cjs'), BUILD);
  writeFileSync(join(dir, 'builder.cjs'), BUILDER);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (k !== 'ELECTRON_RUN_AS_NODE' && !/^(VSCODE_|SPRINGFIELD_|GIT_)/.test(k)) env[k] = v;
  Object.assign(env, {
    BENCH_CLI: CLI,
    BENCH_BUILD: join(dir, 'build.cjs'),
    BENCH_BUILD_MS: String(BUILD_MS),
    BENCH_BUILD_MB: String(BUILD_MB),
    XDG_STATE_HOME: join(dir, 'state'),
    GIT_CONFIG_NOSYSTEM: '1',
  });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore', env });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'bench@example.com');
  git('config', 'user.name', 'bench');
  git('config', 'commit.gpgsign', 'false');
  git('add', '-A');
  git('commit', '-qm', 'plans');
  const sf = (...args: string[]) =>
    execFileSync(process.execPath, [CLI, ...args, '--json'], { cwd: repo, env, encoding: 'utf8' });
  for (let i = 1; i <= EPICS; i++) {
    const epic = (
      JSON.parse(sf('epic', 'create', `e${i}`, '--complexity', 'trivial', '--planner', 'person')) as {
        id: string;
      }
    ).id;
    sf('plan', 'propose', epic, `plans/e${i}.md`, '--agent', 'homer');
    sf('plan', 'approve', epic, '--agent', 'marge');
  }
  const roomy = {
    minFreeMemoryMb: 0,
    maxCpuPressure: 100,
    maxMemoryPressure: 100,
    maxIoPressure: 100,
    maxLoadPerCore: 1000,
  };
  writeFileSync(
    join(repo, '.springfield', 'config.json'),
    JSON.stringify({
      roles: { ralph: [process.execPath, join(dir, 'builder.cjs')] },
      verification: [[process.execPath, join(dir, 'build.cjs')]],
      maxParallelAgents: way.maxParallelAgents,
      ...(way.admission ? {} : { admission: roomy, slots: { verification: 20, setup: 20 } }),
      timeouts: { ralph: TIMEOUT_S },
      retryBackoffSeconds: [0],
      killGraceSeconds: 1,
    }),
  );
  sf('allow');
  return env;
}

/** The three ways, one after the other in this session; auto against the best fixed cap. */
export async function benchFleet(): Promise<TargetRow[]> {
  console.log(
    `\n== Fleet: ${EPICS} epics, a build of ${BUILD_MS} ms CPU and ${BUILD_MB} MB per step and per verification, builder timeout ${TIMEOUT_S} s`,
  );
  const out = new Map<string, Outcome>();
  for (const way of WAYS.filter((w) => w.name.includes(ONLY))) {
    const o = await workload(way);
    out.set(way.name, o);
    console.log(
      `  ${way.name.padEnd(17)} merged ${o.merged}/${EPICS}   ${o.perMinute.toFixed(1)} merged steps/min   peak memory ${Math.round(o.peakMb)} MB   runs ended by the machine ${o.endedByMachine}   sessions lost to limits ${o.limited}`,
    );
  }
  const auto = out.get('auto + admission') as Outcome;
  const best = Math.max(out.get('fixed cap 20')?.perMinute ?? 0, out.get('fixed cap 4')?.perMinute ?? 0);
  const ratio = best > 0 ? auto.perMinute / best : 0;
  console.log(`  auto ÷ best fixed cap: ${ratio.toFixed(2)}x throughput`);
  return [
    {
      metric: 'fleet: auto + admission throughput ÷ the best fixed cap',
      target: '≥ 0.95x',
      measured: `${ratio.toFixed(2)}x`,
      met: ratio >= 0.95,
    },
    {
      metric: '  runs ended by the machine with auto + admission',
      target: '0',
      measured: String(auto.endedByMachine),
      met: auto.endedByMachine === 0,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) await benchFleet();
