// The fleet governor, measured (docs/scheduler.md, "The fleet"): one workload — EPICS approved epics
// of one step each, a scripted builder whose step is a "build" of fixed cost (BUILD_MS of CPU on one
// core, BUILD_MB of memory held meanwhile), the same build as verification — run through the real
// `springfield orchestrate` three ways in one session: a fixed cap of 20 agents, a fixed cap of 4,
// and "auto" with admission. Reports merged steps per minute, the peak of memory in use, runs ended
// by the machine (a build past its timeout) and sessions lost to usage limits.
//
// Why this workload, for a 2-core, 24 GiB machine: a CPU-bound build is what saturates two cores (each
// epic costs three builds: its step, its verification, the merge's re-verification); 12 epics are more
// than a cap of 4 runs at once and fewer than 20, so the cap of 20 starts them all together. 150 MB per
// build keeps even 40 at once near 6 GB: nothing here risks the out-of-memory killer on a machine shared
// with others, so runs the machine ends are timeouts, the peak memory is reported. The timeout is six
// times the build alone on this machine in this session: only the fleet's own crowding ends a run (the
// cap of 20 puts ten builds on each core). The usage-limit window (at 20 s, for 15 s) opens while the
// first builds run, so every way meets it.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { approvedEpics, benchEnv, initRepo } from './benchRepo.ts';
import { sqliteStore } from '../src/core/store/sqlite/sqliteStore.ts';
import type { TargetRow } from './run.ts';
import { ADMIT_ANY_MACHINE } from '../src/shared/fleetSettings.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.cjs');
const EPICS = Number(process.env.SF_BENCH_FLEET_EPICS ?? 12);
const BUILD_MS = Number(process.env.SF_BENCH_FLEET_BUILD_MS ?? 1500);
const BUILD_MB = Number(process.env.SF_BENCH_FLEET_BUILD_MB ?? 150);
/**
 * A builder's timeout: TIMEOUT_FACTOR times the build's wall time alone on this machine, measured at
 * the start of the session (the machine is shared, so its load sets that time), so only a machine
 * overloaded by the fleet itself ends one. SF_BENCH_FLEET_TIMEOUT_S sets it outright.
 */
const TIMEOUT_FACTOR = 6;
const TIMEOUT_S = process.env.SF_BENCH_FLEET_TIMEOUT_S ? Number(process.env.SF_BENCH_FLEET_TIMEOUT_S) : null;
/** The usage-limit window: it opens LIMIT_AT_S after orchestrate starts and lasts LIMIT_S. */
const LIMIT_AT_S = Number(process.env.SF_BENCH_FLEET_LIMIT_AT_S ?? 20);
const LIMIT_S = Number(process.env.SF_BENCH_FLEET_LIMIT_S ?? 15);
/** Keep each way's temp folder (its repository, store and logs) and print where it is. */
const KEEP = process.env.SF_BENCH_FLEET_KEEP === '1';
/** Run only the ways whose name contains this text. */
const ONLY = process.env.SF_BENCH_FLEET_ONLY ?? '';
/** A way that has not merged or blocked every epic by then is stopped and counted as it stands. */
const WAY_LIMIT_S = Number(process.env.SF_BENCH_FLEET_WAY_LIMIT_S ?? 900);

/** The build: BUILD_MS of CPU (measured as this process's own CPU time) with BUILD_MB held. */
const BUILD = String.raw`
const held = Buffer.alloc(Number(process.env.BENCH_BUILD_MB) * 1048576, 1);
const until = Number(process.env.BENCH_BUILD_MS) * 1000;
let x = 0;
const spent = () => { const u = process.cpuUsage(); return u.user + u.system; };
while (spent() < until) for (let i = 0; i < 100000; i++) x = (x + held[i % held.length]) % 1e9;
`;

/**
 * The builder: one session of a scripted agent. It asks the account (a file the bench writes) before
 * its build and again before it reports: inside the usage-limit window it says so as a CLI does (a
 * 429 with the time until the reset) and exits 1; a session the window catches after its build loses
 * that build.
 */
const BUILDER = String.raw`
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const env = process.env;
const account = () => {
  const { opensAt, closesAt } = JSON.parse(fs.readFileSync(env.BENCH_ACCOUNT, 'utf8'));
  const now = Date.now();
  if (now < opensAt || now >= closesAt) return;
  process.stderr.write('API Error: 429 rate_limit_error: usage limit reached, try again in ' + Math.ceil((closesAt - now) / 1000) + ' seconds\n');
  process.exit(1);
};
account();
execFileSync(process.execPath, [env.BENCH_BUILD], { stdio: 'ignore' });
account();
fs.writeFileSync('built-' + env.SPRINGFIELD_EPIC + '.txt', 'built by run ' + env.SPRINGFIELD_RUN_ID + '\n');
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

async function workload(way: Way, timeoutS: number): Promise<Outcome> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'sf-bench-fleet-')));
  try {
    const repo = join(dir, 'repo');
    const env = prepare(repo, dir, way, timeoutS);
    const baseline = memoryInUseMb();
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, memoryInUseMb() - baseline)), 100);
    const started = performance.now();
    const opensAt = Date.now() + LIMIT_AT_S * 1000;
    writeFileSync(join(dir, 'account.json'), JSON.stringify({ opensAt, closesAt: opensAt + LIMIT_S * 1000 }));
    // A run the machine ended is retried by the scheduler until its epic blocks (then it is not
    // merged); a run that met the limit waits for the reset. The way ends when every epic is merged or
    // blocked: `--until-idle` would return while the limit runs, as it does for a person's backoff.
    const child = orchestrate(repo, env);
    const log = join(dir, 'orchestrate.log');
    child.stdout?.on('data', (c: Buffer) => appendFileSync(log, c));
    child.stderr?.on('data', (c: Buffer) => appendFileSync(log, c));
    const exited = new Promise<number | null>((done) => child.on('close', done));
    let status: number | null | undefined;
    void exited.then((s) => (status = s));
    const store = sqliteStore(join(repo, '.springfield', 'state.db'));
    try {
      const deadline = performance.now() + WAY_LIMIT_S * 1000;
      while (status === undefined && performance.now() < deadline) {
        const epics = await store.listEpics();
        if (epics.every((e) => e.status === 'done' || e.status === 'blocked')) break;
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      await store.close();
    }
    const wallMs = performance.now() - started;
    clearInterval(sampler);
    if (status !== undefined)
      throw new Error(`orchestrate exited ${status}: ${readFileSync(log, 'utf8').split('\n').slice(-5).join(' | ')}`);
    child.kill('SIGTERM');
    await exited;
    const sf = (...args: string[]) =>
      JSON.parse(
        spawnSync(process.execPath, [CLI, ...args, '--json'], { cwd: repo, env, encoding: 'utf8' }).stdout,
      ) as Record<string, unknown>;
    const merged = (sf('epic', 'list', '--status', 'done').epics as unknown[]).length;
    const runs = sf('runs', '--limit', '1000').runs as { status: string; exit_code: number | null }[];
    return {
      merged,
      perMinute: merged / (wallMs / 60_000),
      peakMb: peak,
      endedByMachine: runs.filter((x) => x.status === 'timed_out' || x.status === 'lost' || x.exit_code === 137).length,
      limited: runs.filter((x) => x.status === 'limited').length,
    };
  } finally {
    if (KEEP) console.log(`  (kept ${dir})`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

function orchestrate(repo: string, env: NodeJS.ProcessEnv) {
  return spawn(process.execPath, [CLI, 'orchestrate', '--watch', '--interval', '1'], {
    cwd: repo,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function prepare(repo: string, dir: string, way: Way, timeoutS: number): NodeJS.ProcessEnv {
  mkdirSync(join(repo, 'plans'), { recursive: true });
  for (let i = 1; i <= EPICS; i++)
    writeFileSync(join(repo, 'plans', `e${i}.md`), `# Plan: e${i}\n\n## Step 1: Build {#step-1}\n- [ ] Build\n`);
  writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
  writeFileSync(join(dir, 'build.cjs'), BUILD);
  writeFileSync(join(dir, 'builder.cjs'), BUILDER);
  const env = benchEnv(dir, {
    BENCH_CLI: CLI,
    BENCH_BUILD: join(dir, 'build.cjs'),
    BENCH_BUILD_MS: String(BUILD_MS),
    BENCH_BUILD_MB: String(BUILD_MB),
    BENCH_ACCOUNT: join(dir, 'account.json'),
  });
  initRepo(repo, env, 'plans');
  approvedEpics(
    CLI,
    repo,
    env,
    Array.from({ length: EPICS }, (_, i) => [`e${i + 1}`, `plans/e${i + 1}.md`]),
  );
  writeFileSync(
    join(repo, '.springfield', 'config.json'),
    JSON.stringify({
      roles: { ralph: [process.execPath, join(dir, 'builder.cjs')] },
      verification: [[process.execPath, join(dir, 'build.cjs')]],
      maxParallelAgents: way.maxParallelAgents,
      ...(way.admission ? {} : { admission: ADMIT_ANY_MACHINE, slots: { verification: 20, setup: 20 } }),
      timeouts: { ralph: timeoutS },
      retryBackoffSeconds: [0],
      killGraceSeconds: 1,
    }),
  );
  execFileSync(process.execPath, [CLI, 'allow'], { cwd: repo, env, stdio: 'ignore' });
  return env;
}

/** The median wall time of the build run alone, three times. */
function buildAlone(): number {
  const dir = mkdtempSync(join(tmpdir(), 'sf-bench-fleet-build-'));
  try {
    writeFileSync(join(dir, 'build.cjs'), BUILD);
    const env = { ...process.env, BENCH_BUILD_MS: String(BUILD_MS), BENCH_BUILD_MB: String(BUILD_MB) };
    const times = [0, 1, 2].map(() => {
      const t = performance.now();
      spawnSync(process.execPath, [join(dir, 'build.cjs')], { env, stdio: 'ignore' });
      return performance.now() - t;
    });
    return times.sort((a, b) => a - b)[1] as number;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The three ways, one after the other in this session; auto against the best fixed cap. */
export async function benchFleet(): Promise<TargetRow[]> {
  const soloMs = buildAlone();
  const timeoutS = TIMEOUT_S ?? Math.max(5, Math.ceil((TIMEOUT_FACTOR * soloMs) / 1000));
  console.log(
    `\n== Fleet: ${EPICS} epics, a build of ${BUILD_MS} ms CPU and ${BUILD_MB} MB per step and per verification, builder timeout ${timeoutS} s (the build alone: ${(soloMs / 1000).toFixed(1)} s), a usage-limit window from ${LIMIT_AT_S} s to ${LIMIT_AT_S + LIMIT_S} s`,
  );
  const out = new Map<string, Outcome>();
  for (const way of WAYS.filter((w) => w.name.includes(ONLY))) {
    const o = await workload(way, timeoutS);
    out.set(way.name, o);
    console.log(
      `  ${way.name.padEnd(17)} merged ${o.merged}/${EPICS}   ${o.perMinute.toFixed(1)} merged steps/min   peak memory ${Math.round(o.peakMb)} MB   runs ended by the machine ${o.endedByMachine}   sessions lost to limits ${o.limited}`,
    );
  }
  const auto = out.get('auto + admission');
  if (!auto) return [];
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
