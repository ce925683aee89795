// Timing whole CLI processes, shared by cliPlanSize.ts and cliVariants.ts: a repository with a plan of
// n steps initialised, each process timed (wall and, through a preloaded module, the CPU time it used),
// and rounds after a warm-up whose samples are kept by name and read back as medians.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PLAN = 'plans/p.md';

export interface Timed {
  /** Wall time, ms. */
  readonly ms: number;
  /** User + system CPU time the process used by its exit, ms (waiting for a core does not add to it); NaN when not asked. */
  readonly cpu: number;
  readonly stdout: string;
}

/**
 * Times whole `node` processes. Given a folder `cpuIn`, each reports its CPU time at exit through a
 * module written there and preloaded (which costs every process, `node -e 0` too, the same small time).
 */
export class ProcessTimer {
  private readonly preload: string | undefined;

  constructor(cpuIn?: string) {
    if (cpuIn === undefined) return;
    this.preload = join(cpuIn, 'cpu.cjs');
    writeFileSync(
      this.preload,
      `process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write('\\nsf-cpu-us ' + (u.user + u.system) + '\\n'); });`,
    );
  }

  /** Runs `node ARGS` in `cwd`; a non-zero exit throws with its stderr. */
  time(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Timed {
    const t0 = performance.now();
    const preload = this.preload === undefined ? [] : ['--require', this.preload];
    const r = spawnSync(process.execPath, [...preload, ...args], {
      cwd,
      env,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${String(r.status)}: ${r.stderr}`);
    if (this.preload === undefined) return { ms, cpu: NaN, stdout: r.stdout };
    const cpu = /\nsf-cpu-us (\d+)\n$/.exec(r.stderr)?.[1];
    if (cpu === undefined) throw new Error(`node ${args.join(' ')} did not report its CPU time: ${r.stderr}`);
    return { ms, cpu: Number(cpu) / 1000, stdout: r.stdout };
  }
}

/** Samples kept by name, read back as medians. */
export class Samples {
  private readonly byName = new Map<string, number[]>();

  add(name: string, value: number): void {
    const list = this.byName.get(name) ?? [];
    list.push(value);
    this.byName.set(name, list);
  }

  median(name: string): number {
    return median(this.byName.get(name) ?? []);
  }
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
}

/** Runs `round` `warmup` times (its samples dropped), then `rounds` times into `samples`. */
export async function inRounds(
  warmup: number,
  rounds: number,
  samples: Samples,
  round: (index: number, keep: (name: string, value: number) => void) => void | Promise<void>,
): Promise<void> {
  for (let r = -warmup; r < rounds; r++) {
    await round(r, (name, value) => {
      if (r >= 0) samples.add(name, value);
    });
  }
}

/** A git repository in the temporary directory holding an `n`-step plan at PLAN, committed and initialised by `cli`. */
export function makePlanRepo(n: number, cli: string, env: NodeJS.ProcessEnv, timer: ProcessTimer): string {
  const dir = mkdtempSync(join(tmpdir(), `sf-bench-plan${n}-`));
  const git = (...args: string[]): void => void execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('config', 'user.email', 'bench@example.com');
  git('config', 'user.name', 'bench');
  mkdirSync(join(dir, 'plans'));
  writeFileSync(join(dir, PLAN), planText(n));
  git('add', '.');
  git('commit', '-qm', 'plan');
  timer.time([cli, 'init', PLAN, '--json'], dir, env);
  return dir;
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

/** This environment without what would redirect the CLI (the editor's, Springfield's and git's variables). */
export function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'ELECTRON_RUN_AS_NODE' || k.startsWith('VSCODE_') || k.startsWith('SPRINGFIELD_') || k.startsWith('GIT_'))
      continue;
    env[k] = v;
  }
  return env;
}
