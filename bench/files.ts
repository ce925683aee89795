// Files-aware scheduling, measured (docs/files.md): the same simulated workload — 3 epics of 6 steps,
// a third of the steps editing a file another epic's step edits too, scripted builders that append a
// line to their steps' files and commit, 8 agent slots — run through the real `springfield orchestrate`
// with "filesAware" on and off, in the same run. A merge that conflicts blocks its epic; the bench then
// spends one builder session resolving it (a real `springfield run`, counted like any other) and
// retries it, as a person would. Reports conflicts, sessions and wall time, off against on.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TargetRow } from './run.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.cjs');
const EPICS = ['alpha', 'beta', 'gamma'] as const;
const STEPS = 6;
/** Which steps share a file with another epic's step: 6 of the 18. */
const SHARED: Readonly<Record<string, Readonly<Record<number, string>>>> = {
  alpha: { 2: 'src/shared/a.ts', 5: 'src/shared/c.ts' },
  beta: { 3: 'src/shared/a.ts', 5: 'src/shared/b.ts' },
  gamma: { 2: 'src/shared/b.ts', 4: 'src/shared/c.ts' },
};
/** How long each builder works on a step. */
const WORK_MS = Number(process.env.SF_BENCH_FILES_WORK_MS ?? 400);
const ROUNDS = Number(process.env.SF_BENCH_FILES_ROUNDS ?? 1);

/** The builder: appends a line to each file its step's **Files:** line names, works WORK_MS, completes the step with a commit. */
const BUILDER = String.raw`
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const env = process.env, step = env.SPRINGFIELD_STEP;
const section = fs.readFileSync(env.SPRINGFIELD_PLAN, 'utf8').split(/^## /m).find((s) => s.includes('{#' + step + '}')) || '';
const files = ((/^\*\*Files:\*\*(.*)$/m.exec(section) || [])[1] || '').split(',').map((f) => f.trim()).filter(Boolean);
for (const f of files) { fs.mkdirSync(path.dirname(f), { recursive: true }); fs.appendFileSync(f, env.SPRINGFIELD_EPIC + ' ' + step + '\n'); }
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(env.BENCH_WORK_MS));
const sf = (...a) => execFileSync(process.execPath, [env.BENCH_CLI, ...a], { stdio: 'ignore' });
sf('update', env.SPRINGFIELD_PLAN, step, '--all', 'completed');
sf('commit', '-m', 'Build ' + step);
`;

/** The re-work after a conflict, as long a session as a step's: rebase onto main, keeping both sides of every conflicting hunk (the files only ever gain lines). */
const RESOLVER = String.raw`
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(process.env.BENCH_WORK_MS));
const git = (...a) => spawnSync('git', a, { encoding: 'utf8', env: { ...process.env, GIT_EDITOR: 'true' } });
let r = git('rebase', 'main');
for (let i = 0; i < 50 && r.status !== 0; i++) {
  const files = git('diff', '--name-only', '--diff-filter=U').stdout.split('\n').filter(Boolean);
  if (files.length === 0) { console.error(r.stderr); process.exit(1); }
  for (const f of files) {
    fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(/^<<<<<<< .*\n([\s\S]*?)^=======\n([\s\S]*?)^>>>>>>> .*\n/gm, '$1$2'));
    git('add', '--', f);
  }
  r = git('rebase', '--continue');
}
process.exit(r.status === 0 ? 0 : 1);
`;

interface Outcome {
  readonly conflicts: number;
  readonly sessions: number;
  readonly rework: number;
  readonly wallMs: number;
  readonly merged: number;
  readonly predicted: number;
}

/** Runs the workload with files-aware scheduling on or off, in a fresh repository, until every epic is merged. */
function workload(filesAware: boolean): Outcome {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'sf-bench-files-')));
  try {
    const repo = join(dir, 'repo');
    const env = prepare(repo, dir, filesAware);
    const sf = (cwd: string, ...args: string[]) =>
      spawnSync(process.execPath, [CLI, ...args, '--json'], { cwd, env, encoding: 'utf8', timeout: 600_000 });
    const started = performance.now();
    let conflicts = 0;
    let rework = 0;
    let predicted = 0;
    for (let round = 0; round < 20; round++) {
      const r = sf(repo, 'orchestrate', '--watch', '--until-idle', '--interval', '1');
      if (r.status !== 0)
        throw new Error(`orchestrate exited ${r.status}: ${r.stderr.split('\n').slice(-5).join(' | ')}`);
      predicted += r.stderr.split('\n').filter((l) => / conflict ahead with /.test(l)).length;
      const epics = (
        JSON.parse(sf(repo, 'epic', 'list').stdout) as {
          epics: { id: string; status: string; status_reason: string | null; worktree_path: string | null }[];
        }
      ).epics;
      const blocked = epics.filter(
        (e) => e.status === 'blocked' && e.status_reason?.startsWith('merge_failed: rebasing onto main conflicts'),
      );
      if (blocked.length === 0) {
        const open = epics.filter((e) => e.status !== 'done');
        if (open.length > 0)
          throw new Error(
            `stopped with ${open.map((e) => `${e.id} ${e.status} (${e.status_reason ?? ''})`).join(', ')}`,
          );
        break;
      }
      for (const e of blocked) {
        conflicts += 1;
        // One builder session resolves it, recorded as a run like any other; then a person's retry.
        const fix = spawnSync(
          process.execPath,
          [CLI, 'run', '--role', 'ralph', '--epic', e.id, '--', process.execPath, join(dir, 'resolver.cjs')],
          { cwd: e.worktree_path ?? repo, env, encoding: 'utf8', timeout: 600_000 },
        );
        if (fix.status !== 0)
          throw new Error(`the resolving session for ${e.id} failed: ${fix.stderr.split('\n').slice(-3).join(' | ')}`);
        rework += 1;
        sf(repo, 'epic', 'retry', e.id);
      }
    }
    const wallMs = performance.now() - started;
    const counts = (JSON.parse(sf(repo, 'runs').stdout) as { sessions: Record<string, Record<string, number>> })
      .sessions;
    const sessions = Object.values(counts).reduce((n, roles) => n + (roles.total ?? 0), 0);
    const merged = (JSON.parse(sf(repo, 'epic', 'list', '--status', 'done').stdout) as { epics: unknown[] }).epics
      .length;
    return { conflicts, sessions, rework, wallMs, merged, predicted };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A repository with the shared files on main, three approved epics whose plans name their steps' files, and the builder as Ralph. */
function prepare(repo: string, dir: string, filesAware: boolean): NodeJS.ProcessEnv {
  mkdirSync(join(repo, 'plans'), { recursive: true });
  mkdirSync(join(repo, 'src', 'shared'), { recursive: true });
  for (const f of ['a', 'b', 'c']) writeFileSync(join(repo, 'src', 'shared', `${f}.ts`), `// shared ${f}\n`);
  for (const slug of EPICS) {
    const steps = Array.from({ length: STEPS }, (_, i) => {
      const n = i + 1;
      const files = [`src/${slug}/part${n}.ts`, ...(SHARED[slug]?.[n] ? [SHARED[slug][n]] : [])];
      return [`## Step ${n}: Part ${n} {#step-${n}}`, `**Files:** ${files.join(', ')}`, `- [ ] Write part ${n}`, ''];
    }).flat();
    writeFileSync(join(repo, 'plans', `${slug}.md`), [`# Plan: ${slug}`, '', ...steps].join('\n'));
  }
  writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
  writeFileSync(join(dir, 'builder.cjs'), BUILDER);
  writeFileSync(join(dir, 'resolver.cjs'), RESOLVER);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (k !== 'ELECTRON_RUN_AS_NODE' && !/^(VSCODE_|SPRINGFIELD_|GIT_)/.test(k)) env[k] = v;
  Object.assign(env, {
    BENCH_CLI: CLI,
    BENCH_WORK_MS: String(WORK_MS),
    XDG_STATE_HOME: join(dir, 'state'),
    GIT_CONFIG_NOSYSTEM: '1',
  });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore', env });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'bench@example.com');
  git('config', 'user.name', 'bench');
  git('config', 'commit.gpgsign', 'false');
  git('add', '-A');
  git('commit', '-qm', 'plans and shared files');
  const sf = (...args: string[]) =>
    execFileSync(process.execPath, [CLI, ...args, '--json'], { cwd: repo, env, encoding: 'utf8' });
  for (const slug of EPICS) {
    // Created one after the other: alpha is the oldest, so it goes first where files meet.
    const epic = (
      JSON.parse(sf('epic', 'create', slug, '--complexity', 'trivial', '--planner', 'person')) as { id: string }
    ).id;
    sf('plan', 'propose', epic, `plans/${slug}.md`, '--agent', 'homer');
    sf('plan', 'approve', epic, '--agent', 'marge');
  }
  writeFileSync(
    join(repo, '.springfield', 'config.json'),
    JSON.stringify({
      roles: { ralph: [process.execPath, join(dir, 'builder.cjs')] },
      verification: [[process.execPath, '-e', '0']],
      maxParallelAgents: 8,
      retryBackoffSeconds: [0],
      killGraceSeconds: 1,
      filesAware,
    }),
  );
  sf('allow');
  return env;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

/** ROUNDS of each, alternating which goes first; the medians side by side and as ratios. */
export async function benchFiles(): Promise<TargetRow[]> {
  console.log(
    `\n== Files-aware scheduling: 3 epics × ${STEPS} steps, 6 steps sharing a file across epics, 8 agent slots, ${WORK_MS} ms of work per step (${ROUNDS} round${ROUNDS === 1 ? '' : 's'} each)`,
  );
  const on: Outcome[] = [];
  const off: Outcome[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    for (const aware of i % 2 === 0 ? [false, true] : [true, false]) (aware ? on : off).push(workload(aware));
  }
  const m = (xs: Outcome[], k: keyof Outcome) => median(xs.map((x) => x[k]));
  for (const [name, xs] of [
    ['off', off],
    ['on ', on],
  ] as const) {
    console.log(
      `  files-aware ${name}  merge conflicts ${m(xs, 'conflicts')}   sessions ${m(xs, 'sessions')} (re-work ${m(xs, 'rework')})   wall ${(m(xs, 'wallMs') / 1000).toFixed(1)} s   conflicts predicted ahead ${m(xs, 'predicted')}   merged ${m(xs, 'merged')}/3`,
    );
  }
  const ratio = (k: keyof Outcome) => (m(on, k) === 0 && m(off, k) === 0 ? 1 : m(on, k) / m(off, k));
  console.log(
    `  on ÷ off: conflicts ${ratio('conflicts').toFixed(2)}x   sessions ${ratio('sessions').toFixed(2)}x   wall time ${ratio('wallMs').toFixed(2)}x`,
  );
  console.log(
    '  (a conflict costs a builder session that resolves it, then a second verification and merge; files-aware scheduling instead holds a step back while another epic works on or has unmerged changes to its files, then rebases before building it)',
  );
  return [
    {
      metric: 'files-aware scheduling: merge conflicts, on vs off',
      target: 'fewer with it on',
      measured: `${m(on, 'conflicts')} vs ${m(off, 'conflicts')}`,
      met: m(on, 'conflicts') < m(off, 'conflicts'),
    },
    {
      metric: '  sessions spent (re-work included), on ÷ off',
      target: '< 1x',
      measured: `${ratio('sessions').toFixed(2)}x (${m(on, 'sessions')} vs ${m(off, 'sessions')})`,
      met: ratio('sessions') < 1,
    },
    {
      metric: '  wall time, on ÷ off',
      target: '(report)',
      measured: `${ratio('wallMs').toFixed(2)}x (${(m(on, 'wallMs') / 1000).toFixed(1)} s vs ${(m(off, 'wallMs') / 1000).toFixed(1)} s)`,
      met: true,
    },
  ];
}

if (import.meta.main) {
  const rows = await benchFiles();
  console.log(
    `\n(node ${process.version}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
  );
  for (const r of rows) console.log(`${r.metric}: ${r.measured} (target ${r.target})`);
}
