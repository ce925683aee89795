// What each start-up trick saves, for the ledger in docs/cli-cost.md: builds the fast path as it is and
// once without each trick (bench/cliVariantBuilds.ts), then times them as whole processes in one run,
// in turn, each command beside a `node -e 0` run.
//
//   node bench/cliVariants.ts [NAME…]     (no names: every variant; `today` is always built, and compared with)
//
// Per build and plan size (20 and 2,000 steps): `claim --json` (the step reset between runs, untimed),
// `show PLAN --step STEP --json` and `ready PLAN --json`: the median of each command's wall-time ratio to
// its paired `node -e 0`, and the median CPU time (user + system, read by the process itself at exit
// through a preloaded module, the same in every run) with its difference from today's. On a loaded
// machine a process waits for a core for longer than a trick saves, and the wall time says little; the
// CPU time a process used is what the tricks change, and waiting does not add to it. (A git process a
// build runs is its own process: its CPU shows in no column, its time in the wall ratio.)
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteStore } from '../src/core/store/sqlite/sqliteStore.ts';
import type { Store } from '../src/core/store/store.ts';
import { buildVariants, VARIANTS } from './cliVariantBuilds.ts';
import { childEnv, inRounds, makePlanRepo, PLAN, ProcessTimer, Samples } from './processTiming.ts';

const SIZES = [20, 2000];
const WARMUP = 3;
const ROUNDS = Number(process.env.SF_BENCH_ROUNDS ?? 20);
const COMMANDS = ['claim', 'show', 'ready'] as const;

const names = process.argv.slice(2);
for (const n of names)
  if (!VARIANTS.some((v) => v.name === n))
    throw new Error(`no variant '${n}': ${VARIANTS.map((v) => v.name).join(', ')}`);
const work = mkdtempSync(join(tmpdir(), 'sf-bench-variants-'));
const timer = new ProcessTimer(work);
const env = childEnv();
const load = loadavg()[0] ?? NaN;
const built = await buildVariants(names.length ? names : VARIANTS.map((v) => v.name));
const builds = built.builds;
const first = builds[0];
if (first === undefined) throw new Error('nothing built');
const repos = SIZES.map((n) => makePlanRepo(n, first.cli, env, timer));
const stores = repos.map((dir) => sqliteStore(join(dir, '.springfield', 'state.db')));
const samples = new Samples();
try {
  await inRounds(WARMUP, ROUNDS, samples, async (r, keep) => {
    for (let i = 0; i < builds.length; i++) {
      // Builds in turn, starting one later each round, so none always runs in the same slot.
      const b = builds[(i + Math.max(r, 0)) % builds.length] as (typeof builds)[number];
      for (const [s, dir] of repos.entries()) {
        const at = `${b.name} @${SIZES[s]}`;
        const base = timer.time(['-e', '0'], dir, env);
        const claim = timer.time([b.cli, 'claim', PLAN, '--json'], dir, env);
        const step = (JSON.parse(claim.stdout) as { step_anchor?: string }).step_anchor;
        if (!step) throw new Error(`${b.name}: claim did not claim: ${claim.stdout}`);
        const show = timer.time([b.cli, 'show', PLAN, '--step', step, '--json'], dir, env);
        const ready = timer.time([b.cli, 'ready', PLAN, '--json'], dir, env);
        const base2 = timer.time(['-e', '0'], dir, env);
        await (stores[s] as Store).reset(PLAN, step, { worktree: dir, agent: 'bench' }, 'bench');
        for (const [cmd, run, against] of [
          ['claim', claim, base],
          ['show', show, base2],
          ['ready', ready, base2],
          ['base', base, base],
        ] as const) {
          keep(`cpu ${cmd} ${at}`, run.cpu);
          keep(`ratio ${cmd} ${at}`, run.ms / against.ms);
        }
      }
    }
  });
  console.log(
    `\n== CLI builds side by side (node ${process.version}, ${ROUNDS} rounds after ${WARMUP} warm-up, builds in turn, each command beside a node -e 0 run; load average ${load.toFixed(1)} at the start, ${(loadavg()[0] ?? NaN).toFixed(1)} at the end)`,
  );
  console.log(`  ${'command'.padEnd(18)} ${'build'.padEnd(22)} wall/node -e 0   CPU ms (median)`);
  for (const cmd of ['base', ...COMMANDS]) {
    for (const n of SIZES) {
      const ref = samples.median(`cpu ${cmd} ${first.name} @${n}`);
      for (const b of builds) {
        const cpu = samples.median(`cpu ${cmd} ${b.name} @${n}`);
        const diff = b === first ? '' : `   ${cpu - ref >= 0 ? '+' : ''}${(cpu - ref).toFixed(2)} ms vs ${first.name}`;
        const label = cmd === 'base' ? `node -e 0 @ ${n}` : `${cmd} @ ${n} steps`;
        const ratio = samples.median(`ratio ${cmd} ${b.name} @${n}`);
        console.log(
          `  ${label.padEnd(18)} ${b.name.padEnd(22)} ${ratio.toFixed(3).padStart(9)}x   ${cpu.toFixed(2).padStart(7)}${diff}`,
        );
      }
    }
  }
  console.log('\n  Each build is today without one trick:');
  for (const b of builds.slice(1)) console.log(`  ${b.name.padEnd(22)} ${b.without}`);
} finally {
  for (const s of stores) s.close();
  for (const dir of [...repos, work]) rmSync(dir, { recursive: true, force: true });
  built.remove();
}
