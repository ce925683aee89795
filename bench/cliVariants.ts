// What one start-up trick saves: builds of the CLI side by side, each a folder holding a dist/ (the
// build as it is, and one built without the trick), timed as whole processes in one run, in turn, each
// beside a `node -e 0` run. For the ledger in docs/cli-cost.md.
//
//   node bench/cliVariants.ts NAME=DIST_FOLDER[,VAR=VALUE…] …   (the first is the one the others are compared with)
//
// Per build and plan size (20 and 2,000 steps): `claim --json` (the step reset between runs, untimed)
// and `show PLAN --step STEP --json`: the median of each command's wall-time ratio to its paired
// `node -e 0`, and the median CPU time (user + system, read by the process itself at exit through a
// preloaded module, the same in every run) with its difference from the first build's. On a loaded
// machine a process waits for a core for longer than a trick saves, and the wall time says little;
// the CPU time a process used is what the tricks change, and waiting does not add to it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/core/store/sqlite/sqliteStore.ts';
import { childEnv, planText } from './cliPlanSize.ts';

const PLAN = 'plans/p.md';
const SIZES = [20, 2000];
const WARMUP = 3;
const ROUNDS = Number(process.env.SF_BENCH_ROUNDS ?? 30);

interface Build {
  readonly name: string;
  readonly cli: string;
  readonly env: NodeJS.ProcessEnv;
}

function parseBuild(arg: string): Build {
  const [head = '', ...vars] = arg.split(',');
  const [name = '', dir = ''] = head.split('=');
  if (!name || !dir) throw new Error(`expected NAME=DIST_FOLDER[,VAR=VALUE…], got '${arg}'`);
  const env = childEnv();
  for (const v of vars) {
    const at = v.indexOf('=');
    env[v.slice(0, at)] = v.slice(at + 1);
  }
  return { name, cli: join(dir, 'cli.cjs'), env };
}

const work = mkdtempSync(join(tmpdir(), 'sf-bench-variants-'));
// Preloaded into every timed process: its CPU time at exit, on a line of its own on stderr.
const CPU = join(work, 'cpu.cjs');
writeFileSync(
  CPU,
  `process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write('\\nsf-cpu-us ' + (u.user + u.system) + '\\n'); });`,
);

function time(args: string[], cwd: string, env: NodeJS.ProcessEnv): { ms: number; cpu: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--require', CPU, ...args], { cwd, env, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${String(r.status)}: ${r.stderr}`);
  const cpu = /\nsf-cpu-us (\d+)\n$/.exec(r.stderr)?.[1];
  if (cpu === undefined) throw new Error(`node ${args.join(' ')} did not report its CPU time: ${r.stderr}`);
  return { ms, cpu: Number(cpu) / 1000, stdout: r.stdout };
}

function makeRepo(n: number, cli: string): string {
  const dir = mkdtempSync(join(tmpdir(), `sf-bench-variants${n}-`));
  const git = (...args: string[]): void => void execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('config', 'user.email', 'bench@example.com');
  git('config', 'user.name', 'bench');
  mkdirSync(join(dir, 'plans'));
  writeFileSync(join(dir, PLAN), planText(n));
  git('add', '.');
  git('commit', '-qm', 'plan');
  time([cli, 'init', PLAN, '--json'], dir, childEnv());
  return dir;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
}

const builds = process.argv.slice(2).map(parseBuild);
if (builds.length === 0) throw new Error('name at least one build: NAME=DIST_FOLDER[,VAR=VALUE…]');
const first = builds[0] as Build;
const repos = SIZES.map((n) => makeRepo(n, first.cli));
const stores = repos.map((dir) => new SqliteStore(join(dir, '.springfield', 'state.db')));
interface Samples {
  readonly cpu: number[];
  readonly ratio: number[];
}
const samples = new Map<string, Samples>();
const sample = (key: string, run: { ms: number; cpu: number }, base: { ms: number; cpu: number }): void => {
  const s = samples.get(key) ?? { cpu: [], ratio: [] };
  s.cpu.push(run.cpu);
  s.ratio.push(run.ms / base.ms);
  samples.set(key, s);
};
try {
  for (let r = -WARMUP; r < ROUNDS; r++) {
    for (let i = 0; i < builds.length; i++) {
      const b = builds[(i + Math.max(r, 0)) % builds.length] as Build;
      for (const [s, dir] of repos.entries()) {
        const base = time(['-e', '0'], dir, b.env);
        const claim = time([b.cli, 'claim', PLAN, '--json'], dir, b.env);
        const step = (JSON.parse(claim.stdout) as { step_anchor?: string }).step_anchor;
        if (!step) throw new Error(`${b.name}: claim did not claim: ${claim.stdout}`);
        const show = time([b.cli, 'show', PLAN, '--step', step, '--json'], dir, b.env);
        const base2 = time(['-e', '0'], dir, b.env);
        await (stores[s] as SqliteStore).reset(PLAN, step, { worktree: dir, agent: 'bench' }, 'bench');
        if (r < 0) continue;
        sample(`${b.name} claim@${SIZES[s]}`, claim, base);
        sample(`${b.name} show@${SIZES[s]}`, show, base2);
        sample(`${b.name} base@${SIZES[s]}`, base, base);
      }
    }
  }
  console.log(
    `\n== CLI builds side by side (node ${process.version}, ${ROUNDS} rounds after ${WARMUP} warm-up, builds in turn, each command beside a node -e 0 run)`,
  );
  console.log(`  ${'command'.padEnd(18)} ${'build'.padEnd(22)} wall/node -e 0   CPU ms (median)`);
  for (const cmd of ['base', 'claim', 'show']) {
    for (const n of SIZES) {
      const ref = median(samples.get(`${first.name} ${cmd}@${n}`)?.cpu ?? []);
      for (const b of builds) {
        const s = samples.get(`${b.name} ${cmd}@${n}`) ?? { cpu: [], ratio: [] };
        const cpu = median(s.cpu);
        const diff = b === first ? '' : `   ${cpu - ref >= 0 ? '+' : ''}${(cpu - ref).toFixed(2)} ms vs ${first.name}`;
        const label = cmd === 'base' ? `node -e 0 @ ${n}` : `${cmd} @ ${n} steps`;
        console.log(
          `  ${label.padEnd(18)} ${b.name.padEnd(22)} ${median(s.ratio).toFixed(3).padStart(9)}x   ${cpu.toFixed(2).padStart(7)}${diff}`,
        );
      }
    }
  }
} finally {
  for (const s of stores) s.close();
  for (const dir of [...repos, work]) rmSync(dir, { recursive: true, force: true });
}
