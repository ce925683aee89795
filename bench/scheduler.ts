import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { applyEpicEvent, createEpic } from '../src/core/store/shared/epics.ts';
import { approvePlan, finishEpic, proposePlan, startEpic } from '../src/core/store/shared/planVersions.ts';
import { recordSignal } from '../src/core/store/shared/signals.ts';
import { parsePlan } from '../src/core/plan/parse.ts';
import { finishRun, startRun } from '../src/core/store/shared/runs.ts';
import { call, one } from '../src/core/store/shared/op.ts';
import { decide } from '../src/core/scheduler/decide.ts';
import type { SchedulerConfig } from '../src/core/scheduler/types.ts';
import { claimNext } from '../src/core/store/shared/claims.ts';
import { runSqlite } from '../src/core/store/sqlite/port.ts';
import type { Op } from '../src/core/store/shared/op.ts';
import type { StorePort } from '../src/core/store/shared/port.ts';
import { completeStep } from '../src/core/store/shared/complete.ts';
import { updateItems } from '../src/core/store/shared/items.ts';
import { partitionSteps } from '../src/core/store/sqlite/readiness.ts';
import { writeTransaction } from '../src/core/store/sqlite/open.ts';
import type { SqlConnection } from '../src/core/store/sqlite/sqlite.ts';
import { sqliteStore, sqliteConnection } from '../src/core/store/sqlite/sqliteStore.ts';
import type { Store } from '../src/core/store/store.ts';
import type { Actor } from '../src/core/store/types.ts';
import type { TargetRow } from './run.ts';
import type { PlanSource } from '../src/core/plan/types.ts';
import { planSourceOf } from '../src/core/plan/source.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.cjs');
const EPICS = 50;
const STEPS = 200;
const TICKS = 50;
const RUN_ROUNDS = 20;
const WARMUP = 5;
/** Status mix of the 50 epics (done epics stay in the table but not in the snapshot). */
const MIX = [
  ['planned', 3],
  ['proposed', 7],
  ['ready', 8],
  ['in_progress', 20],
  ['implemented', 7],
  ['verified', 3],
  ['done', 2],
] as const;
const CONFIG: SchedulerConfig = {
  maxParallelAgents: 16,
  runTimeoutMs: 3_600_000,
  sameFailureLimit: 3,
  roles: { lisa: ['a'], ralph: ['a'], bart: ['a'] },
  verificationConfigured: true,
  retryLimit: 3,
  retryBackoffMs: [15_000, 60_000, 240_000],
  setupConfigured: false,
};
const STAMP = "require('node:fs').writeFileSync(process.argv[1], String(performance.timeOrigin + performance.now()))";

interface Summary {
  readonly median: number;
  readonly p95: number;
}

/** Scheduler tick over 50 epics × 200 steps, and `springfield run` overhead around an agent. */
export async function benchScheduler(): Promise<TargetRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sf-bench-sched-'));
  try {
    // The run overhead first: spawning from a process that holds a big store in memory costs more.
    const run = benchRunOverhead(dir);
    return [...(await benchTick(dir)), ...run];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function planText(n: number, steps: number): string {
  const lines = [`# Plan: Bench epic ${n}`, '', '## Approach', 'Measure the scheduler.', ''];
  for (let i = 1; i <= steps; i++) {
    const deps = [...(i > 10 ? [i - 10] : []), ...(i % 20 === 0 ? [i - 1] : [])];
    lines.push(
      `## Step ${i}: Part ${i} {#step-${i}}`,
      ...(deps.length ? [`**Depends on:** ${deps.map((d) => `#step-${d}`).join(', ')}`] : []),
    );
    lines.push('**Tasks:**', `- [ ] Task a of ${i}`, `- [ ] Task b of ${i}`, '**Tests:**', `- [ ] Test of ${i}`, '');
  }
  return lines.join('\n');
}

/** One Ralph run per step, as the orchestrator does it: claim, run row, items, complete, verification. */
function buildSteps(
  db: SqlConnection,
  epicId: string,
  source: PlanSource,
  count: number,
  verdicts: (k: number) => 'pass' | 'fail',
): void {
  const ralph: Actor = { worktree: `/repo.springfield/${epicId}`, agent: 'ralph' };
  for (let k = 0; k < count; k++) {
    const now = new Date();
    const claim = runSqlite(db, now, (p) => claimNext(p, source, ralph, 7200, null));
    if (!claim.claimed) throw new Error(`${epicId}: nothing to claim after ${k} steps`);
    const holder = { ...ralph, token: claim.claim_token };
    const run = runSqlite(db, now, (p) =>
      startRun(
        p,
        {
          epicId,
          planPath: source.planPath,
          stepAnchor: claim.step_anchor,
          role: 'ralph',
          iteration: 1,
          worktree: ralph.worktree,
          agentId: 'ralph',
          command: ['a'],
          pid: process.pid,
        },
        holder,
      ),
    );
    runSqlite(db, now, (p) =>
      updateItems(p, source, claim.step_anchor, [{ selector: { all: true }, status: 'completed' }], holder),
    );
    runSqlite(db, now, (p) => completeStep(p, source, claim.step_anchor, holder, { commitHash: null }));
    runSqlite(db, now, (p) => finishRun(p, run.id, { exitCode: 0, signal: null }, holder));
    runSqlite(db, now, (p) =>
      one(
        p.insertVerifications([
          {
            runId: run.id,
            epicId,
            planPath: null,
            stepAnchor: null,
            command: 'npm test',
            exitCode: verdicts(k) === 'pass' ? 0 : 1,
            verdict: verdicts(k),
            durationMs: 900,
            outputTail: '',
          },
        ]),
      ),
    );
  }
}

/** Builds the 50-epic store through the store's own functions, one write transaction per epic. */
async function buildStore(store: Store): Promise<Record<string, number>> {
  const marge: Actor = { worktree: '/repo', agent: 'marge' };
  const lisa: Actor = { worktree: '/repo', agent: 'lisa' };
  const kinds = MIX.flatMap(([kind, n]) => Array.from({ length: n }, () => kind));
  const counts: Record<string, number> = {};
  for (const [i, kind] of kinds.entries()) {
    counts[kind] = (counts[kind] ?? 0) + 1;
    const planPath = `plans/e${i}.md`;
    const text = planText(i, STEPS);
    const source: PlanSource = planSourceOf(planPath, parsePlan(text, planPath));
    const db = sqliteConnection(store);
    writeTransaction(db, () => {
      const op = <T>(fn: (p: StorePort) => Op<T>): T => runSqlite(db, new Date(), fn);
      const complexity = i % 10 === 0 ? 'critical' : i % 7 === 0 ? 'simple' : 'standard';
      const epic = op((p) =>
        createEpic(
          p,
          {
            title: `Bench epic ${i}`,
            brief: '',
            priority: (['P1', 'P2', 'P2', 'P3'] as const)[i % 4] ?? 'P2',
            complexity,
          },
          marge,
        ),
      );
      if (kind === 'planned') return;
      op((p) => proposePlan(p, epic.id, { ...source, body: text }, lisa));
      if (kind === 'proposed') return;
      op((p) => approvePlan(p, epic.id, source, marge));
      if (kind === 'ready') return;
      op((p) => startEpic(p, epic.id, source, marge));
      if (kind === 'in_progress') {
        const done = (i * 37) % 190;
        buildSteps(db, epic.id, source, done, (k) => (k === done - 1 && i % 3 === 0 ? 'fail' : 'pass'));
        if (i % 2 === 0) {
          const holder: Actor = { worktree: `/repo.springfield/${epic.id}`, agent: 'ralph' };
          const claim = runSqlite(db, new Date(), (p) => claimNext(p, source, holder, 7200, null));
          if (claim.claimed)
            op((p) =>
              startRun(
                p,
                {
                  epicId: epic.id,
                  planPath,
                  stepAnchor: claim.step_anchor,
                  role: 'ralph',
                  iteration: 1,
                  worktree: holder.worktree,
                  agentId: 'ralph',
                  command: ['a'],
                  pid: process.pid,
                },
                holder,
              ),
            );
        }
        return;
      }
      buildSteps(db, epic.id, source, STEPS, () => 'pass');
      op((p) => finishEpic(p, epic.id, marge, 'bench: all steps completed, verification passed', true));
      if (kind === 'implemented') {
        if (i % 3 === 0) {
          const bart = op((p) =>
            startRun(
              p,
              {
                epicId: epic.id,
                planPath,
                stepAnchor: null,
                role: 'bart',
                iteration: 1,
                worktree: '/repo',
                agentId: 'bart',
                command: ['a'],
                pid: process.pid,
              },
              null,
            ),
          );
          op((p) => finishRun(p, bart.id, { exitCode: 0, signal: null }, null));
        }
        if (i % 3 === 1)
          op((p) => recordSignal(p, epic.id, 'implementation_failure', 'needs a person', [], marge, true));
        return;
      }
      op((p) => recordSignal(p, epic.id, 'pass', 'reviewed', [], marge));
      if (kind === 'done') op((p) => applyEpicEvent(p, epic.id, 'merged', marge, 'bench'));
    });
  }
  return counts;
}

async function benchTick(dir: string): Promise<TargetRow[]> {
  const store = sqliteStore(join(dir, 'state.db'), { ifMissing: 'create' });
  try {
    const t0 = performance.now();
    const counts = await buildStore(store);
    const buildS = (performance.now() - t0) / 1000;
    const rows = (sql: string): number => Number(sqliteConnection(store).prepare(sql).pluck().get());
    const snaps: number[] = [];
    const decides: number[] = [];
    const ticks: number[] = [];
    let actions: ReturnType<typeof decide> = [];
    let epicsIn = 0;
    for (let i = 0; i < WARMUP + TICKS; i++) {
      const a = performance.now();
      const snapshot = await store.schedulerSnapshot();
      const b = performance.now();
      actions = decide(snapshot, CONFIG, new Date());
      const c = performance.now();
      epicsIn = snapshot.epics.length;
      if (i < WARMUP) continue;
      snaps.push(b - a);
      decides.push(c - b);
      ticks.push(c - a);
    }
    const snapshot = await store.schedulerSnapshot();
    const d0 = performance.now();
    for (let i = 0; i < 1000; i++) decide(snapshot, CONFIG, new Date());
    const decideMean = (performance.now() - d0) / 1000;
    const partition: number[] = [];
    const plans = sqliteConnection(store).prepare('SELECT plan_path FROM plans').pluck().all() as string[];
    for (let i = 0; i < WARMUP + TICKS; i++) {
      const a = performance.now();
      const db = sqliteConnection(store);
      const now = new Date().toISOString();
      db.transaction(() => {
        for (const p of plans) partitionSteps(db, p, now);
      })();
      if (i >= WARMUP) partition.push(performance.now() - a);
    }
    const snap = summarize(snaps);
    const dec = summarize(decides);
    const tick = summarize(ticks);
    const byKind: Record<string, number> = {};
    for (const a of actions) byKind[a.kind] = (byKind[a.kind] ?? 0) + 1;
    console.log(
      `\n== Scheduler tick (${EPICS} epics × ${STEPS} steps: ${Object.entries(counts)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')}; store built in ${buildS.toFixed(1)} s)`,
    );
    console.log(
      `  store: ${rows('SELECT COUNT(*) FROM steps')} steps, ${rows('SELECT COUNT(*) FROM events')} events, ${rows('SELECT COUNT(*) FROM runs')} runs (${rows("SELECT COUNT(*) FROM runs WHERE status = 'running'")} running), ${rows('SELECT COUNT(*) FROM verifications')} verifications; ${epicsIn} epics in the snapshot`,
    );
    console.log(
      `  one tick's actions (maxParallelAgents ${CONFIG.maxParallelAgents}): ${Object.entries(byKind)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')}`,
    );
    console.log(`  ${TICKS} ticks after ${WARMUP} warm-up:`);
    console.log(line('schedulerSnapshot (in store.read)', snap));
    console.log(line('decide()', dec) + `   mean of 1000 back to back ${(decideMean * 1000).toFixed(1)} µs`);
    console.log(line('tick = snapshot + decide', tick) + `   per epic ${(tick.median / epicsIn).toFixed(3)} ms`);
    console.log(line(`  of which partitionSteps × ${plans.length} plans`, summarize(partition)));
    return [
      {
        metric: `scheduler tick, ${EPICS} epics × ${STEPS} steps (median)`,
        target: '<= 10 ms',
        measured: `${tick.median.toFixed(2)} ms (p95 ${tick.p95.toFixed(2)})`,
        met: tick.median <= 10,
      },
      {
        metric: '  of which schedulerSnapshot / decide (median)',
        target: '(report)',
        measured: `${snap.median.toFixed(2)} / ${dec.median.toFixed(3)} ms`,
        met: true,
      },
      {
        metric: '  tick per epic (median)',
        target: '(report)',
        measured: `${(tick.median / epicsIn).toFixed(3)} ms`,
        met: true,
      },
    ];
  } finally {
    store.close();
  }
}

function benchRunOverhead(dir: string): TargetRow[] {
  const repo = join(dir, 'repo');
  const env = childEnv();
  const { id: epicId, worktree } = makeRepo(repo);
  const stampFile = join(dir, 'stamp');
  const node = process.execPath;
  const runArgs = [CLI, 'run', '--role', 'ralph', '--epic', epicId, '--'];
  const zodChunk = findChunk('node_modules/zod/');
  // The CLI turns on Node's compile cache (default folder); the what-if import of the zod chunk uses the same one.
  const cached = { ...env, NODE_COMPILE_CACHE: env.NODE_COMPILE_CACHE ?? join(tmpdir(), 'node-compile-cache') };
  const time = (args: string[], withEnv = env): number => {
    const t0 = performance.now();
    const r = spawnSync(node, args, { cwd: worktree, env: withEnv, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${String(r.status)}: ${r.stderr}`);
    return performance.now() - t0;
  };
  /** Total wall time, and time from our spawn to the agent's first line of JS. */
  const stamped = (prefix: string[]): { total: number; toAgent: number } => {
    const start = performance.timeOrigin + performance.now();
    const total = time([...prefix, '-e', STAMP, stampFile]);
    return { total, toAgent: Number(readFileSync(stampFile, 'utf8')) - start };
  };
  const variants: Record<string, () => number | { total: number; toAgent: number }> = {
    nodeA: () => time(['-e', '0']),
    nodeB: () => time(['-e', '0']),
    run: () => time([...runArgs, node, '-e', '0']),
    stampDirect: () => stamped([]),
    stampRun: () => stamped([...runArgs, node]),
    zod: () => time(['--input-type=module', '-e', `import(${JSON.stringify(zodChunk.url)})`], cached),
    collator: () => time(['-e', "'a'.localeCompare('b')"]),
  };
  const names = Object.keys(variants);
  const totals: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const toAgent: Record<string, number[]> = { stampDirect: [], stampRun: [] };
  for (let r = -WARMUP; r < RUN_ROUNDS; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + Math.max(r, 0)) % names.length] as string;
      const v = (variants[name] as () => number | { total: number; toAgent: number })();
      if (r < 0) continue;
      totals[name]?.push(typeof v === 'number' ? v : v.total);
      if (typeof v !== 'number') toAgent[name]?.push(v.toAgent);
    }
  }
  const med = (xs: number[] | undefined): number => summarize(xs ?? []).median;
  const a = med(totals.nodeA);
  const noise = med(totals.nodeB) / a;
  const run = med(totals.run);
  const overhead = run - a;
  const pre = med(toAgent.stampRun) - med(toAgent.stampDirect);
  const post = med(totals.stampRun) - med(toAgent.stampRun) - (med(totals.stampDirect) - med(toAgent.stampDirect));
  console.log(
    `\n== springfield run overhead (load average ${loadavg()[0]?.toFixed(2)}; ${RUN_ROUNDS} alternating rounds after ${WARMUP} warm-up; lisa on an in-progress epic, no step)`,
  );
  console.log(line('node -e 0', summarize(totals.nodeA ?? [])));
  console.log(line('node -e 0 again (noise floor)', summarize(totals.nodeB ?? [])) + `   ratio ${noise.toFixed(2)}x`);
  console.log(line('springfield run -- node -e 0', summarize(totals.run ?? [])) + `   ratio ${(run / a).toFixed(2)}x`);
  console.log(`  overhead = run − node -e 0: ${overhead.toFixed(1)} ms = ${(overhead / a).toFixed(2)}x node -e 0`);
  console.log(
    `  spawn → agent's first line: direct ${med(toAgent.stampDirect).toFixed(1)} ms, through run ${med(toAgent.stampRun).toFixed(1)} ms (+${pre.toFixed(1)} ms before exec); after the agent exits: +${post.toFixed(1)} ms`,
  );
  console.log(
    `  of which, fresh-process deltas over node -e 0: importing the zod chunk (${zodChunk.name}, ${zodChunk.kb} KB, loaded by 'run' for config.json) +${(med(totals.zod) - a).toFixed(1)} ms; a first String#localeCompare (ICU collator) +${(med(totals.collator) - a).toFixed(1)} ms`,
  );
  profileRun(dir, worktree, env, runArgs);
  return [
    {
      metric: 'springfield run overhead / node -e 0 (median)',
      target: '(report)',
      measured: `${(overhead / a).toFixed(2)}x (${overhead.toFixed(1)} ms over ${a.toFixed(1)} ms)`,
      met: true,
    },
    {
      metric: '  run -- node -e 0 / node -e 0 (median)',
      target: '(report)',
      measured: `${(run / a).toFixed(2)}x (noise floor ${noise.toFixed(2)}x)`,
      met: true,
    },
    {
      metric: '  start → agent exec / after agent exit',
      target: '(report)',
      measured: `+${pre.toFixed(1)} ms / +${post.toFixed(1)} ms`,
      met: true,
    },
  ];
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a sample goes: the first group any frame of its stack matches (so the groups add up to the whole). */
const PHASES: readonly [string, (f: ProfileNode['callFrame']) => boolean][] = [
  ['(idle): waiting, mostly for the agent', (f) => f.functionName === '(idle)'],
  [
    'compiling JS (ESM chunks, node builtins)',
    (f) => /^compile(SourceTextModule|ForInternalLoader|Function)$/.test(f.functionName),
  ],
  ['git rev-parse (locateRepo)', (f) => f.functionName === 'locateRepo'],
  ['open state.db (pragmas, schema check)', (f) => f.functionName === 'openDatabase'],
  ['context file (buildContext, render, write)', (f) => f.functionName === 'writeContextFile'],
  ['store writes: prepare + finishRun (COMMIT fsync)', (f) => f.functionName === 'writeTransaction'],
  ['spawning the agent', (f) => f.functionName === 'supervise' || f.functionName === 'spawn'],
  ['other module loading (resolve, link, evaluate)', (f) => f.url.startsWith('node:internal/modules')],
  ['garbage collector', (f) => f.functionName === '(garbage collector)'],
  ['(program): native, not attributed', (f) => f.functionName === '(program)'],
];

/** `--cpu-prof` of a few runs: time by phase and the top functions by self time (profiles start after Node's bootstrap). */
function profileRun(dir: string, cwd: string, env: NodeJS.ProcessEnv, runArgs: string[]): void {
  const out = join(dir, 'prof');
  const runs = 5;
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(
      process.execPath,
      ['--cpu-prof', '--cpu-prof-interval', '250', '--cpu-prof-dir', out, ...runArgs, process.execPath, '-e', '0'],
      { cwd, env, encoding: 'utf8' },
    );
    if (r.status !== 0) return void console.log(`  (profile run failed: ${r.stderr.trim()})`);
  }
  const phases = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  for (const file of readdirSync(out).filter((f) => f.endsWith('.cpuprofile'))) {
    const prof = JSON.parse(readFileSync(join(out, file), 'utf8')) as Profile;
    total += (prof.endTime - prof.startTime) / 1000;
    const byId = new Map(prof.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    prof.samples.forEach((id, i) => {
      const ms = (prof.timeDeltas[i] ?? 0) / 1000;
      const stack: ProfileNode['callFrame'][] = [];
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const n = byId.get(cur);
        if (n) stack.push(n.callFrame);
      }
      const phase =
        PHASES.find(([, match]) => stack.some(match))?.[0] ?? 'everything else (CLI code, sqlite, url/path)';
      phases.set(phase, (phases.get(phase) ?? 0) + ms);
      const top = stack[0];
      if (!top) return;
      const url = top.url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
      const fn = `${top.functionName || '(anonymous)'}${url ? ` ${url}:${top.lineNumber + 1}` : ''}`;
      fns.set(fn, (fns.get(fn) ?? 0) + ms);
    });
  }
  const list = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((x, y) => y[1] - x[1])
      .slice(0, n)
      .map(([k, v]) => `    ${(v / runs).toFixed(1).padStart(6)} ms  ${k}`)
      .join('\n');
  console.log(
    `  --cpu-prof of ${runs} runs (mean ${(total / runs).toFixed(1)} ms profiled each, profiler overhead included), mean time by phase:`,
  );
  console.log(list(phases, PHASES.length + 1));
  console.log('  top functions by self time (mean per run):');
  console.log(list(fns, 10));
}

/** The CLI chunk that bundles a given package (chunk names carry a content hash). */
function findChunk(marker: string): { name: string; url: string; kb: number } {
  const chunks = join(ROOT, 'dist', 'full', 'chunks');
  for (const name of readdirSync(chunks)) {
    const text = readFileSync(join(chunks, name), 'utf8');
    if (text.includes(`// ${marker}`))
      return { name, url: pathToFileURL(join(chunks, name)).href, kb: Math.round(text.length / 1024) };
  }
  return { name: '(not found)', url: 'data:text/javascript,', kb: 0 };
}

function makeRepo(repo: string): { id: string; worktree: string } {
  mkdirSync(join(repo, 'plans'), { recursive: true });
  const git = (...args: string[]): void => void execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
  const text = planText(0, 3);
  writeFileSync(join(repo, 'plans', 'p.md'), text);
  writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'bench@example.com');
  git('config', 'user.name', 'bench');
  git('add', '-A');
  git('commit', '-qm', 'plan');
  const store = sqliteStore(join(repo, '.springfield', 'state.db'), { ifMissing: 'create' });
  const source: PlanSource = planSourceOf('plans/p.md', parsePlan(text, 'plans/p.md'));
  const id = sqliteConnection(store).transaction(() => {
    const op = <T>(fn: (p: StorePort) => Op<T>): T => runSqlite(sqliteConnection(store), new Date(), fn);
    const epic = op((p) =>
      createEpic(
        p,
        { title: 'Bench run overhead', brief: '', priority: 'P2', complexity: 'standard' },
        { worktree: repo, agent: 'marge' },
      ),
    );
    op((p) => proposePlan(p, epic.id, { ...source, body: text }, { worktree: repo, agent: 'lisa' }));
    op((p) => approvePlan(p, epic.id, source, { worktree: repo, agent: 'marge' }));
    op((p) => startEpic(p, epic.id, source, { worktree: repo, agent: 'marge' }));
    return epic.id;
  })();
  // Agents never work in the main worktree: the epic gets its own, on its branch, as `epic start` gives it.
  const worktree = join(dirname(repo), 'worktree');
  git('worktree', 'add', '-q', '-b', `springfield/${id}`, worktree);
  runSqlite(sqliteConnection(store), new Date(), (p) =>
    call(p.setEpicWorktree(id, worktree, `refs/heads/springfield/${id}`)),
  );
  store.close();
  return { id, worktree };
}

function childEnv(): NodeJS.ProcessEnv {
  const dropped = (k: string): boolean => k === 'ELECTRON_RUN_AS_NODE' || /^(VSCODE_|SPRINGFIELD_|GIT_)/.test(k);
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !dropped(k)));
}

function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  return { median: at(0.5), p95: at(0.95) };
}

function line(label: string, s: Summary): string {
  const f = (v: number): string => (v < 1 ? v.toFixed(3) : v.toFixed(2)).padStart(7);
  return `  ${label.padEnd(36)} median ${f(s.median)} ms   p95 ${f(s.p95)} ms`;
}

function table(rows: readonly TargetRow[]): string {
  const all = [
    ['metric', 'target', 'measured', 'within target'],
    ...rows.map((r) => [r.metric, r.target, r.measured, r.target === '(report)' ? '-' : r.met ? 'yes' : 'NO']),
  ];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...all.map((c) => (c[i] ?? '').length)));
  const fmt = (c: string[]): string => `| ${c.map((v, i) => v.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [fmt(all[0] ?? []), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...all.slice(1).map(fmt)].join(
    '\n',
  );
}

if (import.meta.main) {
  const rows = await benchScheduler();
  console.log(
    `\n== Summary (node ${process.version}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
  );
  console.log(table(rows));
  console.log('Figures, not assertions: the exit code does not depend on them.');
}
