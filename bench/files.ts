// Files-aware scheduling and conflicts that resolve themselves, measured (docs/files.md): the same
// simulated workload — 3 epics of 6 steps, a third of the steps editing a file another epic's step
// edits too, one of those three shared files a hotspot (CHANGELOG.md, lines added at the top), the
// others edited on one line (a real conflict) — run through the real `springfield orchestrate` three
// ways in one session: files-aware scheduling off, on, and on with mechanical resolution
// ("mechanicalMerge"). A conflict at the merge that does not resolve itself goes to a Ralph session
// (the builder, resolving it); a person's retry follows only if that fails. Reports conflicts
// reaching an agent or a person, conflicts resolved mechanically, sessions and wall time.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TargetRow } from './run.ts';
import { ADMIT_ANY_MACHINE } from '../src/shared/fleetSettings.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.cjs');
const EPICS = ['alpha', 'beta', 'gamma'] as const;
const STEPS = 6;
/** Which steps share a file with another epic's step: 6 of the 18; of the 3 shared files, CHANGELOG.md is a hotspot. */
const SHARED: Readonly<Record<string, Readonly<Record<number, string>>>> = {
  alpha: { 2: 'src/shared/a.ts', 5: 'CHANGELOG.md' },
  beta: { 3: 'src/shared/a.ts', 5: 'src/shared/b.ts' },
  gamma: { 2: 'src/shared/b.ts', 4: 'CHANGELOG.md' },
};
type Mode = 'off' | 'on' | 'mechanical';
const MODES: readonly Mode[] = ['off', 'on', 'mechanical'];
/** How long each builder works on a step. */
const WORK_MS = Number(process.env.SF_BENCH_FILES_WORK_MS ?? 400);
const ROUNDS = Number(process.env.SF_BENCH_FILES_ROUNDS ?? 1);
/** A directory to keep each run's orchestrate log in (`<mode>-<n>.log`), to profile a run by its timestamps. */
const LOGS = process.env.SF_BENCH_FILES_LOGS;

/**
 * The builder. On a step: adds a line at the top of CHANGELOG.md, or its mark to the first line of
 * any other file its step's **Files:** line names, works WORK_MS, completes the step with a commit.
 * In a conflict session (its context says so): as long a session as a step's, then rebases onto main
 * keeping both sides of every conflicting hunk.
 */
const BUILDER = String.raw`
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const env = process.env, step = env.SPRINGFIELD_STEP;
const work = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(env.BENCH_WORK_MS));
if (env.BENCH_RESOLVE || fs.readFileSync(env.SPRINGFIELD_CONTEXT_FILE, 'utf8').startsWith('# This run: resolve a merge conflict')) {
  work();
  const git = (...a) => spawnSync('git', a, { encoding: 'utf8', env: { ...env, GIT_EDITOR: 'true' } });
  let r = git('rebase', 'main');
  for (let i = 0; i < 50 && r.status !== 0; i++) {
    const files = git('diff', '--name-only', '--diff-filter=U').stdout.split('\n').filter(Boolean);
    if (files.length === 0) process.exit(1);
    for (const f of files) {
      fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(/^<<<<<<< .*\n([\s\S]*?)^=======\n([\s\S]*?)^>>>>>>> .*\n/gm, '$1$2'));
      git('add', '--', f);
    }
    r = git('rebase', '--continue');
  }
  process.exit(r.status === 0 ? 0 : 1);
}
const section = fs.readFileSync(env.SPRINGFIELD_PLAN, 'utf8').split(/^## /m).find((s) => s.includes('{#' + step + '}')) || '';
const files = ((/^\*\*Files:\*\*(.*)$/m.exec(section) || [])[1] || '').split(',').map((f) => f.trim()).filter(Boolean);
const mark = env.SPRINGFIELD_EPIC + ' ' + step;
for (const f of files) {
  fs.mkdirSync(path.dirname(f), { recursive: true });
  const lines = fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n') : [''];
  if (f === 'CHANGELOG.md') lines.splice(1, 0, '- ' + mark);
  else lines[0] = (lines[0] + ' ' + mark).trim();
  fs.writeFileSync(f, lines.join('\n'));
}
work();
const sf = (...a) => execFileSync(process.execPath, [env.BENCH_CLI, ...a], { stdio: 'ignore' });
sf('update', env.SPRINGFIELD_PLAN, step, '--all', 'completed');
sf('commit', '-m', 'Build ' + step);
`;

interface Outcome {
  /** Conflicts at the merge that reached an agent (a Ralph session) or a person. */
  readonly conflicts: number;
  /** Conflicts at the merge resolved mechanically. */
  readonly mechanical: number;
  readonly sessions: number;
  /** Sessions spent on conflicts (Ralph's, and a person's stand-in). */
  readonly rework: number;
  readonly wallMs: number;
  readonly merged: number;
  readonly predicted: number;
  /** The 1-minute load average when the run ended. */
  readonly load: number;
}

let runsSoFar = 0;

/** Runs the workload in one mode, in a fresh repository, until every epic is merged. */
function workload(mode: Mode): Outcome {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'sf-bench-files-')));
  try {
    const repo = join(dir, 'repo');
    const env = prepare(repo, dir, mode);
    const sf = (cwd: string, ...args: string[]) =>
      spawnSync(process.execPath, [CLI, ...args, '--json'], { cwd, env, encoding: 'utf8', timeout: 600_000 });
    const started = performance.now();
    const logName = (runsSoFar += 1);
    let person = 0;
    let predicted = 0;
    for (let round = 0; round < 20; round++) {
      const r = sf(repo, 'orchestrate', '--watch', '--until-idle', '--interval', '1');
      if (r.status !== 0)
        throw new Error(`orchestrate exited ${r.status}: ${r.stderr.split('\n').slice(-5).join(' | ')}`);
      if (LOGS) appendFileSync(join(LOGS, `${mode}-${logName}.log`), r.stderr);
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
        person += 1;
        // A person has a builder session resolve it, recorded as a run like any other; then retries.
        const fix = spawnSync(
          process.execPath,
          [CLI, 'run', '--role', 'ralph', '--epic', e.id, '--', process.execPath, join(dir, 'builder.cjs')],
          { cwd: e.worktree_path ?? repo, env: { ...env, BENCH_RESOLVE: '1' }, encoding: 'utf8', timeout: 600_000 },
        );
        if (fix.status !== 0)
          throw new Error(`the resolving session for ${e.id} failed: ${fix.stderr.split('\n').slice(-3).join(' | ')}`);
        sf(repo, 'epic', 'retry', e.id);
      }
    }
    const wallMs = performance.now() - started;
    const counts = (JSON.parse(sf(repo, 'runs').stdout) as { sessions: Record<string, Record<string, number>> })
      .sessions;
    const sessions = Object.values(counts).reduce((n, roles) => n + (roles.total ?? 0), 0);
    const done = (JSON.parse(sf(repo, 'epic', 'list', '--status', 'done').stdout) as { epics: { id: string }[] }).epics;
    // Who resolved each conflict met at a merge: the event log, as epic show reports it.
    const rates = done.map(
      (e) =>
        (JSON.parse(sf(repo, 'epic', 'show', e.id).stdout) as { conflicts_at_merge: Record<string, number> })
          .conflicts_at_merge,
    );
    const sum = (k: string) => rates.reduce((n, r) => n + (r[k] ?? 0), 0);
    const agents = sum('ralph') + sum('person');
    return {
      conflicts: agents,
      mechanical: sum('mechanical'),
      sessions,
      rework: sum('ralph') + person,
      wallMs,
      load: loadavg()[0] ?? NaN,
      merged: done.length,
      predicted,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A repository with the shared files on main, three approved epics whose plans name their steps' files, and the builder as Ralph. */
function prepare(repo: string, dir: string, mode: Mode): NodeJS.ProcessEnv {
  mkdirSync(join(repo, 'plans'), { recursive: true });
  mkdirSync(join(repo, 'src', 'shared'), { recursive: true });
  for (const f of ['a', 'b']) writeFileSync(join(repo, 'src', 'shared', `${f}.ts`), `// shared ${f}\n`);
  writeFileSync(join(repo, 'CHANGELOG.md'), '# Changes\n- the start\n');
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
      // Admission never holds: on a shared machine the others' load, not the scheduling, would decide.
      admission: ADMIT_ANY_MACHINE,
      retryBackoffSeconds: [0],
      killGraceSeconds: 1,
      filesAware: mode !== 'off',
      ...(mode === 'mechanical' ? {} : { mechanicalMerge: false }),
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

/** ROUNDS of each mode, rotating which goes first; the medians side by side and as ratios. */
export async function benchFiles(): Promise<TargetRow[]> {
  console.log(
    `\n== Files-aware scheduling and hotspots: 3 epics × ${STEPS} steps, 6 steps sharing a file across epics (1 of the 3 shared files a hotspot), 8 agent slots, ${WORK_MS} ms of work per step (${ROUNDS} round${ROUNDS === 1 ? '' : 's'} each)`,
  );
  const runs: Record<Mode, Outcome[]> = { off: [], on: [], mechanical: [] };
  for (let i = 0; i < ROUNDS; i++)
    for (let k = 0; k < MODES.length; k++) {
      const mode = MODES[(i + k) % MODES.length] as Mode;
      runs[mode].push(workload(mode));
    }
  const m = (mode: Mode, k: keyof Outcome) => median(runs[mode].map((x) => x[k]));
  const names: Record<Mode, string> = {
    off: 'off             ',
    on: 'on              ',
    mechanical: 'on + mechanical ',
  };
  for (const mode of MODES)
    console.log(
      `  files-aware ${names[mode]} conflicts reaching an agent or a person ${m(mode, 'conflicts')}   resolved mechanically ${m(mode, 'mechanical')}   sessions ${m(mode, 'sessions')} (on conflicts ${m(mode, 'rework')})   wall ${(m(mode, 'wallMs') / 1000).toFixed(1)} s   merged ${m(mode, 'merged')}/3`,
    );
  if (ROUNDS > 1)
    for (const mode of MODES)
      console.log(
        `  each round, ${names[mode]} wall ${runs[mode].map((o) => (o.wallMs / 1000).toFixed(1)).join(', ')} s at load ${runs[mode].map((o) => o.load.toFixed(0)).join(', ')}`,
      );
  const ratio = (a: Mode, b: Mode, k: keyof Outcome) =>
    m(b, k) === 0 ? (m(a, k) === 0 ? 1 : Infinity) : m(a, k) / m(b, k);
  console.log(
    `  on ÷ off: sessions ${ratio('on', 'off', 'sessions').toFixed(2)}x   wall ${ratio('on', 'off', 'wallMs').toFixed(2)}x;  on + mechanical ÷ off: sessions ${ratio('mechanical', 'off', 'sessions').toFixed(2)}x   wall ${ratio('mechanical', 'off', 'wallMs').toFixed(2)}x`,
  );
  const merges = 3 * ROUNDS;
  const rate = (mode: Mode) => runs[mode].reduce((n, o) => n + o.conflicts + o.mechanical, 0) / merges;
  console.log(
    `  conflict rate at merge (met ÷ merges): off ${(100 * rate('off')).toFixed(0)}%, on ${(100 * rate('on')).toFixed(0)}%, on + mechanical ${(100 * rate('mechanical')).toFixed(0)}% (of which reaching an agent or a person ${m('mechanical', 'conflicts')}); the study of agent pull requests: 27.67%`,
  );
  return [
    {
      metric: 'hotspots: conflicts reaching an agent or a person, on + mechanical',
      target: '0',
      measured: String(m('mechanical', 'conflicts')),
      met: m('mechanical', 'conflicts') === 0,
    },
    {
      metric: '  sessions, on + mechanical vs on',
      target: '≤ on',
      measured: `${m('mechanical', 'sessions')} vs ${m('on', 'sessions')}`,
      met: m('mechanical', 'sessions') <= m('on', 'sessions'),
    },
    {
      metric: '  wall time, on + mechanical ÷ off',
      target: '≤ 1.0x',
      measured: `${ratio('mechanical', 'off', 'wallMs').toFixed(2)}x (${(m('mechanical', 'wallMs') / 1000).toFixed(1)} s vs ${(m('off', 'wallMs') / 1000).toFixed(1)} s)`,
      met: ratio('mechanical', 'off', 'wallMs') <= 1,
    },
    {
      metric: '  files-aware on (no mechanical) ÷ off: wall time',
      target: '(report)',
      measured: `${ratio('on', 'off', 'wallMs').toFixed(2)}x, conflicts ${m('on', 'conflicts')} vs ${m('off', 'conflicts')}`,
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
