import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchClaimInProcess } from './claimInProcess.ts';
import { benchCliPlanSize } from './cliPlanSize.ts';
import { benchCliStartup } from './cliStartup.ts';
import { benchContention } from './contention.ts';
import { benchDoctor } from './doctor.ts';
import { benchEditor } from './editor.ts';
import { benchFiles } from './files.ts';
import { benchFleet } from './fleet.ts';
import { benchLibraries } from './libraries.ts';
import { benchReaction } from './reaction.ts';
import { benchScheduler } from './scheduler.ts';
import { benchTree } from './tree.ts';
import { messageOf } from '../src/shared/errorMessage.ts';

/** One line of the final table: a target next to what this run measured. */
export interface TargetRow {
  readonly metric: string;
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
}

const BENCHES: readonly { name: string; run: () => Promise<TargetRow[]> }[] = [
  { name: 'cli startup', run: benchCliStartup },
  { name: 'cli cost by plan size', run: benchCliPlanSize },
  { name: 'in-process claim', run: benchClaimInProcess },
  { name: 'contention', run: benchContention },
  { name: 'tree model', run: benchTree },
  { name: 'scheduler', run: benchScheduler },
  { name: 'scheduler reaction', run: benchReaction },
  { name: 'doctor on a long history', run: () => benchDoctor() },
  { name: 'simple-git and execa', run: benchLibraries },
  { name: 'files-aware scheduling', run: benchFiles },
  { name: 'fleet governor', run: benchFleet },
  ...(process.argv.includes('--editor') ? [{ name: 'editor (code-server)', run: benchEditor }] : []),
];

function machine(): string {
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return `node ${process.version}, ${cpus().length} CPUs, load average ${load}`;
}

function table(rows: readonly TargetRow[]): string {
  const head: TargetRow = { metric: 'metric', target: 'target', measured: 'measured', met: true };
  const cells = (r: TargetRow, met: string): string[] => [r.metric, r.target, r.measured, met];
  const all = [
    cells(head, 'within target'),
    ...rows.map((r) => cells(r, r.target === '(report)' ? '-' : r.met ? 'yes' : 'NO')),
  ];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...all.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]): string => `| ${c.map((v, i) => v.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [line(all[0] ?? []), rule, ...all.slice(1).map(line)].join('\n');
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(join(root, 'dist', 'cli.cjs'))) {
  console.error('dist/cli.cjs is missing: build first (npm run build)');
  process.exit(2);
}
const started = performance.now();
console.log(`Springfield benchmarks — ${machine()}`);
const rows: TargetRow[] = [];
for (const bench of BENCHES) {
  try {
    rows.push(...(await bench.run()));
  } catch (err) {
    console.log(`\n!! ${bench.name} could not run: ${messageOf(err)}`);
    rows.push({ metric: bench.name, target: '-', measured: 'did not run (see above)', met: false });
  }
}
console.log(`\n== Summary (${((performance.now() - started) / 1000).toFixed(0)} s; ${machine()})`);
console.log(table(rows));
console.log(
  'Figures, not assertions: the exit code does not depend on them. Ratios compare against baselines measured in this same run.',
);
