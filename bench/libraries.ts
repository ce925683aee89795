// What simple-git and execa would cost Springfield (docs/architecture.md, "Git and processes by hand"):
// the founding design named them; the code spawns git and agents with node:child_process instead.
// Measured here, in one run, against that baseline: the startup of a process that makes one git
// call (what every `springfield claim` pays), the time per call in a warm process (what the
// scheduler pays), and the bundle bytes each adds.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { execa } from 'execa';
import { simpleGit } from 'simple-git';
import { gitRunAsync } from '../src/core/git/exec.ts';
import type { TargetRow } from './run.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STARTUP_ROUNDS = 30;
const CALLS = 60;

const SCRIPTS: Record<string, { file: string; source: string }> = {
  child_process: {
    file: 'cp.cjs',
    source:
      "const { spawnSync } = require('node:child_process'); const r = spawnSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }); if (r.status !== 0) process.exit(1);",
  },
  'simple-git': {
    file: 'sg.cjs',
    source:
      "const { simpleGit } = require('simple-git'); simpleGit(process.cwd()).raw(['rev-parse', 'HEAD']).catch(() => process.exit(1));",
  },
  // ESM only, bundled into CommonJS as dist/cli.cjs would bundle it.
  execa: {
    file: 'ex.cjs',
    source: "import { execa } from 'execa'; execa('git', ['rev-parse', 'HEAD']).catch(() => process.exit(1));",
  },
};

export async function benchLibraries(): Promise<TargetRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sf-bench-libs-'));
  try {
    const repo = join(dir, 'repo');
    spawnSync('git', ['init', '-q', repo]);
    spawnSync('git', [
      '-C',
      repo,
      '-c',
      'user.name=b',
      '-c',
      'user.email=b@b',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'x',
    ]);
    const bundles: Record<string, string> = {};
    const bytes: Record<string, number> = {};
    for (const [name, s] of Object.entries(SCRIPTS)) {
      const entry = join(dir, `entry-${s.file}`);
      writeFileSync(entry, s.source);
      const out = join(dir, s.file);
      // Bundled as the CLI is (esbuild, minified), so the figure is what it would ship, not node_modules resolution.
      await build({
        entryPoints: [entry],
        bundle: true,
        minify: true,
        platform: 'node',
        format: 'cjs',
        outfile: out,
        nodePaths: [join(ROOT, 'node_modules')],
        logLevel: 'error',
      });
      bundles[name] = out;
      bytes[name] = statSync(out).size;
    }
    const startup: Record<string, number[]> = {
      'node -e 0': [],
      ...Object.fromEntries(Object.keys(SCRIPTS).map((k) => [k, []])),
    };
    for (let round = -3; round < STARTUP_ROUNDS; round++) {
      for (const name of Object.keys(startup)) {
        const args = name === 'node -e 0' ? ['-e', '0'] : [bundles[name] as string];
        const t = performance.now();
        const r = spawnSync(process.execPath, args, { cwd: repo, stdio: 'ignore' });
        const ms = performance.now() - t;
        if (r.status !== 0) throw new Error(`${name}: exit ${r.status}`);
        if (round >= 0) startup[name]?.push(ms);
      }
    }
    const sg = simpleGit(repo);
    const perCall: Record<string, () => Promise<unknown>> = {
      child_process: () => gitRunAsync(repo, ['rev-parse', 'HEAD'], process.env),
      'simple-git': () => sg.raw(['rev-parse', 'HEAD']),
      execa: () => execa('git', ['rev-parse', 'HEAD'], { cwd: repo }),
    };
    const calls: Record<string, number[]> = Object.fromEntries(Object.keys(perCall).map((k) => [k, []]));
    for (let i = -5; i < CALLS; i++) {
      for (const [name, call] of Object.entries(perCall)) {
        const t = performance.now();
        await call();
        if (i >= 0) calls[name]?.push(performance.now() - t);
      }
    }
    const base = median(startup.child_process ?? []);
    const baseCall = median(calls.child_process ?? []);
    console.log(
      `\n== simple-git and execa against node:child_process (${STARTUP_ROUNDS} interleaved process starts, ${CALLS} interleaved calls in one process; bundles minified by esbuild)`,
    );
    console.log(`  node -e 0                          ${median(startup['node -e 0'] ?? []).toFixed(1)} ms`);
    for (const name of Object.keys(SCRIPTS)) {
      const s = median(startup[name] ?? []);
      const c = median(calls[name] ?? []);
      console.log(
        `  ${name.padEnd(14)} start + 1 git call ${s.toFixed(1)} ms (${(s / base).toFixed(2)}x)   warm call ${c.toFixed(2)} ms (${(c / baseCall).toFixed(2)}x)   bundle ${(bytes[name] ?? 0).toLocaleString('en-US')} B`,
      );
    }
    const ratio = (name: string): number => median(startup[name] ?? []) / base;
    return [
      {
        metric: 'process start + git call: simple-git / child_process',
        target: '(report)',
        measured: `${ratio('simple-git').toFixed(2)}x (+${(median(startup['simple-git'] ?? []) - base).toFixed(1)} ms)`,
        met: true,
      },
      {
        metric: 'process start + git call: execa / child_process',
        target: '(report)',
        measured: `${ratio('execa').toFixed(2)}x (+${(median(startup.execa ?? []) - base).toFixed(1)} ms)`,
        met: true,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : (s[Math.floor(s.length / 2)] as number);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await benchLibraries();
