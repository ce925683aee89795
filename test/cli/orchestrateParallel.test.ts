// Parallel epics, headless: three epics with three agent slots run at the same time in three
// worktrees, and no epic's branch (or its squash commit on main) touches another epic's files.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ADMIT_ANY_MACHINE } from '../../src/shared/fleetSettings.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(root, 'dist', 'cli.cjs');
const STEP_MS = 1000;
/** Not a measure of speed: the longest an epic's first Ralph run waits for the other epics' (a serial scheduler's runs then end apart). */
const BARRIER_MS = 120_000;

const EPICS = [
  { title: 'Alpha report', plan: 'plans/alpha.md', steps: 3 },
  { title: 'Beta importer', plan: 'plans/beta.md', steps: 4 },
  { title: 'Gamma exporter', plan: 'plans/gamma.md', steps: 3 },
] as const;

function planText(title: string, steps: number): string {
  const lines = [`# Plan: ${title}`, '', '## Approach', 'One file per step.', ''];
  for (let i = 1; i <= steps; i++) {
    lines.push(
      `## Step ${i}: Part ${i} {#step-${i}}`,
      ...(i === steps ? [`**Depends on:** #step-${i - 1}`] : []),
      '**Tasks:**',
      `- [ ] Write part ${i}`,
      '',
    );
  }
  return lines.join('\n');
}

// Every record goes to SF_LOG (outside the repository), one JSON line per append.
const AGENT = `
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const sf = (...a) => execFileSync(process.execPath, [process.env.SF_CLI, ...a], { encoding: 'utf8' });
const git = (...a) => execFileSync('git', a, { encoding: 'utf8' }).trim();
const log = (o) => fs.appendFileSync(process.env.SF_LOG, JSON.stringify(o) + '\\n');
const role = process.env.SPRINGFIELD_ROLE;
const epic = process.env.SPRINGFIELD_EPIC;
const plans = JSON.parse(fs.readFileSync(process.env.SF_PLANS, 'utf8'));
if (role === 'lisa') sf('plan', 'propose', epic, plans[epic]);
if (role === 'ralph') {
  const start = Date.now();
  const step = process.env.SPRINGFIELD_STEP;
  const branch = git('rev-parse', '--abbrev-ref', 'HEAD');
  const wait = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  // The first run of each epic waits (at most SF_BARRIER_MS) until every epic has one under way, so
  // runs the scheduler starts side by side overlap however slowly a busy machine starts them.
  let first = true;
  try { fs.closeSync(fs.openSync(process.env.SF_BARRIER + '/' + epic, 'wx')); } catch { first = false; }
  const until = Date.now() + Number(process.env.SF_BARRIER_MS);
  while (first && fs.readdirSync(process.env.SF_BARRIER).length < Number(process.env.SF_EPICS) && Date.now() < until) wait(50);
  wait(Number(process.env.SF_STEP_MS));
  fs.mkdirSync('work/' + epic, { recursive: true });
  fs.writeFileSync('work/' + epic + '/' + step + '.txt', epic + ' ' + step + '\\n');
  sf('update', process.env.SPRINGFIELD_PLAN, step, '--all', 'completed');
  sf('commit', '-m', 'Build ' + epic + ' ' + step);
  log({ role, epic, step, cwd: process.cwd(), branch, start, end: Date.now() });
}
if (role === 'bart') {
  log({
    role, epic, cwd: process.cwd(), branch: git('rev-parse', '--abbrev-ref', 'HEAD'),
    diff: git('diff', '--name-only', 'main...HEAD').split('\\n').filter(Boolean),
    touched: git('log', '--name-only', '--format=', 'main..HEAD').split('\\n').filter(Boolean),
    epicTrailers: git('log', '--format=%(trailers:key=Springfield-Epic,valueonly,separator=%x2C)', 'main..HEAD').split(/[\\n,]/).map((s) => s.trim()).filter(Boolean),
  });
  sf('signal', epic, '--type', 'pass', '--summary', 'reviewed: only this epic\\'s files');
}
`;

interface RalphRecord {
  role: 'ralph';
  epic: string;
  step: string;
  cwd: string;
  branch: string;
  start: number;
  end: number;
}
interface BartRecord {
  role: 'bart';
  epic: string;
  cwd: string;
  branch: string;
  diff: string[];
  touched: string[];
  epicTrailers: string[];
}

function setup(t: { after: (fn: () => void) => void }) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'sf-par-')));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const repo = join(base, 'repo');
  mkdirSync(join(repo, 'plans'), { recursive: true });
  for (const e of EPICS) writeFileSync(join(repo, e.plan), planText(e.title, e.steps));
  writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
  const agent = join(base, 'agent.cjs');
  const verify = join(base, 'verify.cjs');
  const logFile = join(base, 'agents.log');
  const plansFile = join(base, 'plans.json');
  writeFileSync(agent, AGENT);
  writeFileSync(verify, "if (!require('node:fs').existsSync('plans')) process.exit(1);\n");
  writeFileSync(logFile, '');
  mkdirSync(join(base, 'barrier'));
  const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 't');
  git('add', '-A');
  git('commit', '-qm', 'three plans');
  const env: NodeJS.ProcessEnv = {
    SF_CLI: CLI,
    SF_LOG: logFile,
    SF_PLANS: plansFile,
    SF_STEP_MS: String(STEP_MS),
    SF_BARRIER: join(base, 'barrier'),
    SF_BARRIER_MS: String(BARRIER_MS),
    SF_EPICS: String(EPICS.length),
    XDG_STATE_HOME: join(base, 'state'),
  };
  for (const [k, v] of Object.entries(process.env))
    if (k !== 'ELECTRON_RUN_AS_NODE' && !k.startsWith('VSCODE_') && !k.startsWith('SPRINGFIELD_')) env[k] ??= v;
  const sf = (...args: string[]) => {
    const r = spawnSync(process.execPath, [CLI, ...args, '--json'], { cwd: repo, encoding: 'utf8', env });
    return {
      code: r.status,
      json: r.stdout ? (JSON.parse(r.stdout) as Record<string, unknown>) : {},
      stderr: r.stderr,
    };
  };
  const ids = EPICS.map((e) => {
    const created = sf('epic', 'create', e.title, '--complexity', 'standard');
    assert.equal(created.code, 0, created.stderr);
    return String(created.json.id);
  });
  writeFileSync(plansFile, JSON.stringify(Object.fromEntries(ids.map((id, i) => [id, EPICS[i]?.plan]))));
  mkdirSync(join(repo, '.springfield'), { recursive: true });
  writeFileSync(
    join(repo, '.springfield', 'config.json'),
    JSON.stringify({
      roles: { lisa: [process.execPath, agent], ralph: [process.execPath, agent], bart: [process.execPath, agent] },
      verification: [[process.execPath, verify]],
      maxParallelAgents: 3,
      // About parallel agents, not the machine: admission lets every start through.
      admission: ADMIT_ANY_MACHINE,
      leaseSeconds: 30,
    }),
  );
  assert.equal(sf('allow').code, 0, 'the person allows the commands the config names');
  const records = () =>
    readFileSync(logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as RalphRecord | BartRecord);
  return { repo, ids, sf, git, records };
}

/** The largest number of distinct epics whose Ralph runs were under way at one instant. */
function maxConcurrentEpics(runs: readonly RalphRecord[]): number {
  let best = 0;
  for (const r of runs)
    best = Math.max(best, new Set(runs.filter((o) => o.start <= r.start && r.start < o.end).map((o) => o.epic)).size);
  return best;
}

/** Wall time during which at least one Ralph run was under way (the union of the intervals). */
function coveredMs(runs: readonly RalphRecord[]): number {
  let covered = 0;
  let until = -Infinity;
  for (const r of [...runs].sort((a, b) => a.start - b.start)) {
    covered += Math.max(0, r.end - Math.max(r.start, until));
    until = Math.max(until, r.end);
  }
  return covered;
}

test(
  "three epics with three slots run concurrently in three worktrees without touching each other's branches",
  { timeout: 600_000 },
  async (t) => {
    const { repo, ids, sf, git, records } = setup(t);
    const planning = sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
    assert.equal(planning.code, 0, planning.stderr);
    for (const id of ids) assert.equal(sf('plan', 'approve', id).code, 0, `approve ${id}`);
    const started = Date.now();
    const run = sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
    const elapsed = Date.now() - started;
    assert.equal(run.code, 0, run.stderr);
    for (const id of ids) assert.equal(sf('epic', 'show', id).json.status, 'done', `${id}\n${run.stderr}`);

    const all = records();
    const ralph = all.filter((r): r is RalphRecord => r.role === 'ralph');
    const bart = all.filter((r): r is BartRecord => r.role === 'bart');
    ids.forEach((id, i) => {
      const mine = ralph.filter((r) => r.epic === id);
      assert.deepEqual(
        mine.map((r) => r.step).sort(),
        Array.from({ length: EPICS[i]?.steps ?? 0 }, (_, s) => `step-${s + 1}`),
        `${id}: one Ralph run per step`,
      );
      for (const r of mine) {
        assert.equal(r.cwd, join(`${repo}.springfield`, id), `${id} ${r.step} ran in its own worktree`);
        assert.equal(r.branch, `springfield/${id}`, `${id} ${r.step} ran on its own branch`);
      }
    });
    // Concurrency: every pair of epics had Ralph runs overlapping in time, and never more than the three slots.
    for (const a of ids) {
      for (const b of ids.filter((x) => x > a)) {
        const overlap = ralph.some(
          (x) => x.epic === a && ralph.some((y) => y.epic === b && x.start < y.end && y.start < x.end),
        );
        assert.ok(overlap, `Ralph runs of ${a} and ${b} overlap in time`);
      }
    }
    assert.equal(maxConcurrentEpics(ralph), 3, 'all three epics were being built at the same instant');
    const total = ralph.reduce((s, r) => s + (r.end - r.start), 0);
    const covered = coveredMs(ralph);
    assert.ok(covered < total, `Ralph runs covered ${covered} ms of wall time for ${total} ms of work`);

    // Each branch, captured by Bart before the merge, touched only its own epic's files.
    assert.equal(bart.length, 3, 'one review per epic');
    for (const id of ids) {
      const b = bart.find((r) => r.epic === id);
      assert.ok(b, `Bart reviewed ${id}`);
      assert.equal(b.cwd, join(`${repo}.springfield`, id));
      assert.equal(b.branch, `springfield/${id}`);
      const others = ids.filter((o) => o !== id);
      for (const files of [b.diff, b.touched]) {
        assert.ok(files.length > 0, `${id}: the branch changed files`);
        for (const f of files) {
          assert.ok(f.includes(id), `${id}'s branch touched ${f}, not one of its files`);
          assert.ok(!others.some((o) => f.includes(o)), `${id}'s branch touched ${f}`);
        }
      }
      assert.ok(b.diff.includes(`SUMMARY-${id}.md`), `${id}: the summary is on its branch`);
      assert.deepEqual([...new Set(b.epicTrailers)], [id], `${id}: every branch commit names only ${id}`);
    }

    // Main has every epic's files, and each squash commit names only its own epic and plan.
    assert.equal(git('status', '--porcelain'), '', 'the main worktree is clean');
    const tracked = git('ls-files').split('\n');
    ids.forEach((id, i) => {
      for (let s = 1; s <= (EPICS[i]?.steps ?? 0); s++)
        assert.ok(tracked.includes(`work/${id}/step-${s}.txt`), `main has ${id} step-${s}`);
      assert.ok(tracked.includes(`SUMMARY-${id}.md`), `main has SUMMARY-${id}.md`);
    });
    const squashes = git('log', '--format=%H', '--grep=Springfield-Epic:', 'main').split('\n').filter(Boolean);
    assert.equal(squashes.length, 3, 'three squash commits on main');
    const merged = new Set<string>();
    for (const hash of squashes) {
      const epicsNamed = git('log', '-1', '--format=%(trailers:key=Springfield-Epic,valueonly,separator=%x2C)', hash)
        .split(',')
        .filter(Boolean);
      assert.equal(epicsNamed.length, 1, `${hash} names one epic: ${epicsNamed.join(', ')}`);
      const id = epicsNamed[0] as string;
      merged.add(id);
      const plans = new Set(
        git('log', '-1', '--format=%(trailers:key=Springfield-Plan,valueonly,separator=%x2C)', hash)
          .split(',')
          .filter(Boolean),
      );
      assert.deepEqual([...plans], [EPICS[ids.indexOf(id)]?.plan], `${id}'s squash commit names only its plan`);
      const files = git('show', '--name-only', '--format=', hash).split('\n').filter(Boolean);
      for (const f of files) assert.ok(f.includes(id), `${id}'s squash commit touched ${f}`);
    }
    assert.deepEqual([...merged].sort(), [...ids].sort(), 'every epic merged once');
    for (const id of ids) assert.ok(!existsSync(join(`${repo}.springfield`, id)), `${id}'s worktree is removed`);
    assert.equal(git('branch', '--list', 'springfield/*'), '', 'the epic branches are deleted after the merge');
    t.diagnostic(
      `build phase ${elapsed} ms; ${ralph.length} Ralph runs: ${total} ms of work in ${covered} ms of wall time`,
    );
  },
);
