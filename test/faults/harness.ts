// The fault suite's bench: a real git repository, real `springfield orchestrate` processes and a
// scripted agent (a real process) whose misbehaviour per role and epic is chosen by the test, plus
// the convergence checks every scenario asserts (docs/scheduler-faults.md).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, CLI_PATH, ensureCli } from '../helpers/gitRepo.ts';
import { runCliSync } from '../helpers/cliSync.ts';
import { ADMIT_ANY_MACHINE } from '../../src/shared/fleetSettings.ts';

/** A two-step plan (step-2 after step-1). */
export function planText(title: string): string {
  return [
    `# Plan: ${title}`,
    '',
    '## Approach',
    'One file per step.',
    '',
    '## Step 1: First part {#step-1}',
    '**Tasks:**',
    '- [ ] Write part one',
    '',
    '## Step 2: Second part {#step-2}',
    '**Depends on:** #step-1',
    '**Tasks:**',
    '- [ ] Write part two',
    '',
  ].join('\n');
}

/**
 * The scripted agent. SF_BEHAVIOUR (a JSON file) maps `<epic>:<role>` (or `<role>`) to a behaviour
 * for the first N runs (`{ "do": "exit1", "times": 2 }`, times omitted: always), after which it does
 * its job. Every run and every commit it makes is appended to SF_LOG as one JSON line.
 */
const AGENT = String.raw`
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const env = process.env;
const role = env.SPRINGFIELD_ROLE, epic = env.SPRINGFIELD_EPIC, step = env.SPRINGFIELD_STEP;
const sf = (...a) => execFileSync(process.execPath, [env.SF_CLI, ...a], { encoding: 'utf8' });
const git = (...a) => execFileSync('git', a, { encoding: 'utf8' }).trim();
const log = (o) => fs.appendFileSync(env.SF_LOG, JSON.stringify({ role, epic, step: step || null, pid: process.pid, ...o }) + '\n');
const rules = JSON.parse(fs.readFileSync(env.SF_BEHAVIOUR, 'utf8'));
const rule = rules[epic + ':' + role] || rules[role] || { do: 'ok' };
const seen = fs.readFileSync(env.SF_LOG, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.event === 'start' && r.role === role && r.epic === epic).length;
const behaviour = rule.times === undefined || seen < rule.times ? rule.do : 'ok';
const context = env.SPRINGFIELD_CONTEXT_FILE ? fs.readFileSync(env.SPRINGFIELD_CONTEXT_FILE, 'utf8') : '';
log({ event: 'start', behaviour, previous: (/^## Your previous session \(run \d+\) did not succeed\n(.*)$/m.exec(context) || [])[1] || null });
const commit = (file, text, message, viaSpringfield) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  if (viaSpringfield) { sf('update', env.SPRINGFIELD_PLAN, step, '--all', 'completed'); sf('commit', '-m', message); }
  else { git('add', '-A'); git('commit', '-qm', message); }
  log({ event: 'commit', commit: git('rev-parse', 'HEAD'), file, text });
};
const doJob = () => {
  if (role === 'lisa') sf('plan', 'propose', epic, JSON.parse(fs.readFileSync(env.SF_PLANS, 'utf8'))[epic]);
  if (role === 'ralph' && step) commit('work/' + epic + '/' + step + '.txt', epic + ' ' + step + '\n', 'Build ' + step, true);
  if (role === 'ralph' && !step) commit('work/' + epic + '/fix.txt', 'fixed\n', 'Fix', false);
  if (role === 'bart') sf('signal', epic, '--type', 'pass', '--summary', 'reviewed');
};
// Usage reports as the real CLIs print them (docs/lifecycle.md): Claude Code's result event, Codex's turn.completed events.
const report = () => {
  if (rule.usage === 'claude') console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, total_cost_usd: rule.cost === undefined ? 0.0123 : rule.cost, usage: { input_tokens: 1000, output_tokens: 200, cache_read_input_tokens: 50, cache_creation_input_tokens: 10 } }));
  if (rule.usage === 'codex') for (const n of [1, 2]) console.log(JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 300 * n, cached_input_tokens: 100, output_tokens: 40 } }));
};
switch (behaviour) {
  case 'ok':
    // rule.ms: works that long first (a run still under way while others end).
    if (rule.ms) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, rule.ms);
    doJob(); report(); break;
  case 'exit1': console.log('starting ' + role); console.error('model unavailable: ANTHROPIC_API_KEY is not set'); process.exit(1);
  case 'noop': console.log('nothing to do, apparently'); break;
  case 'hang': {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    log({ event: 'spawned', child: child.pid });
    console.log('thinking very hard');
    setInterval(() => {}, 1000);
    break;
  }
  case 'silent':
    // Prints nothing and changes nothing, forever (a CLI waiting on a model that never answers).
    setInterval(() => {}, 1000);
    break;
  case 'quiet-progress': {
    // Works without a word: records a breadcrumb on its step every half second (rule.n of them), then commits.
    let i = 0;
    const tick = setInterval(() => {
      if (i < (rule.n || 6)) { sf('artifact', env.SPRINGFIELD_PLAN, step, '--kind', 'note', '--summary', 'quiet ' + i++); return; }
      clearInterval(tick);
      commit('work/' + epic + '/' + step + '.txt', epic + ' ' + step + '\n', 'Build ' + step, true);
    }, 500);
    break;
  }
  case 'commit-then-fail':
    commit('work/' + epic + '/attempt-' + seen + '.txt', 'attempt ' + seen + '\n', 'Attempt ' + seen, false);
    console.error('tests failed, giving up'); process.exit(1);
  case 'dirty':
    fs.mkdirSync('work/' + epic, { recursive: true });
    fs.writeFileSync('work/' + epic + '/leftover-' + seen + '.txt', 'half-done work ' + seen + '\n');
    log({ event: 'leftover', file: 'work/' + epic + '/leftover-' + seen + '.txt', text: 'half-done work ' + seen + '\n' });
    break;
  case 'killed-mid-commit': {
    fs.mkdirSync('work/' + epic, { recursive: true });
    fs.writeFileSync('work/' + epic + '/' + step + '.txt', 'interrupted\n');
    git('add', '-A');
    fs.writeFileSync(path.join(git('rev-parse', '--absolute-git-dir'), 'index.lock'), '');
    process.kill(process.pid, 'SIGKILL');
    break;
  }
  case 'wrong-branch':
    git('checkout', '-q', '-b', 'rogue-' + epic);
    commit('work/' + epic + '/' + step + '.txt', 'on the wrong branch\n', 'Build ' + step + ' (wrong branch)', true);
    break;
  case 'orphan': {
    // Kill our own supervisor (springfield run), then keep working as if nothing happened.
    fs.writeFileSync(env.SF_ORPHAN, String(process.pid));
    process.kill(process.ppid, 'SIGKILL');
    setInterval(() => {}, 1000);
    break;
  }
  case 'stage-plan': {
    // Plans in her own worktree: a new draft staged in its index, then waits (bounded) until rule.n
    // planners have staged theirs, so they overlap; records what her index holds, then proposes the draft.
    const plan = JSON.parse(fs.readFileSync(env.SF_PLANS, 'utf8'))[epic];
    const draft = plan.replace(/\.md$/, '-draft.md');
    fs.writeFileSync(draft, fs.readFileSync(plan, 'utf8').replace(/^# Plan: .*$/m, '# Plan: drafted for ' + epic));
    git('add', draft);
    fs.writeFileSync(path.join(env.SF_SYNC, epic + '.staged'), '');
    const deadline = Date.now() + 60000;
    while (fs.readdirSync(env.SF_SYNC).filter((n) => n.endsWith('.staged')).length < (rule.n || 1) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    log({ event: 'planning', toplevel: git('rev-parse', '--show-toplevel'), head: git('rev-parse', 'HEAD'), branch: git('rev-parse', '--abbrev-ref', 'HEAD'), staged: git('diff', '--cached', '--name-only') });
    sf('plan', 'propose', epic, draft);
    break;
  }
  case 'edit': {
    // Edits the files its step names (rule.files[step], else the step's **Files:** line in the plan),
    // one line added at the end of each, and completes the step through springfield. Stamps its start
    // and end. It lingers up to rule.ms, going on early once another epic's agent works on one of its
    // files, so two agents allowed to share a file surely overlap in time; or, with rule.waitFor, until
    // the edit of rule.waitFor[step] ('<epic> <step>') has started (a step not named there: no wait).
    const text = fs.readFileSync(env.SPRINGFIELD_PLAN, 'utf8');
    const section = text.split(/^## /m).find((s) => s.includes('{#' + step + '}')) || '';
    const declared = ((/^\*\*Files:\*\*(.*)$/m.exec(section) || [])[1] || '').split(',').map((f) => f.trim()).filter((f) => f && !/[*?]/.test(f));
    const files = (rule.files && rule.files[step]) || declared;
    log({ event: 'edit-start', at: Date.now(), files });
    const mark = (f) => path.join(env.SF_SYNC, encodeURIComponent(f) + '@' + epic);
    for (const f of files) fs.writeFileSync(mark(f), '');
    const others = () => fs.readdirSync(env.SF_SYNC).some((n) => files.some((f) => n.startsWith(encodeURIComponent(f) + '@') && !n.endsWith('@' + epic)));
    const waitFor = rule.waitFor && rule.waitFor[step];
    const deadline = Date.now() + (rule.waitFor && !waitFor ? 0 : rule.ms || 0);
    const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    const started = () => fs.readFileSync(env.SF_LOG, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).some((r) => r.event === 'edit-start' && r.epic + ' ' + r.step === waitFor);
    while (Date.now() < deadline && !(waitFor ? started() : others())) pause(50);
    if (others()) pause(300);
    for (const f of files) { fs.mkdirSync(path.dirname(f), { recursive: true }); fs.appendFileSync(f, epic + ' ' + step + '\n'); }
    sf('update', env.SPRINGFIELD_PLAN, step, '--all', 'completed');
    sf('commit', '-m', 'Build ' + step);
    for (const f of files) fs.rmSync(mark(f), { force: true });
    log({ event: 'edit-end', at: Date.now(), files, commit: git('rev-parse', 'HEAD') });
    break;
  }
  case 'serve': {
    // Starts its app's server on $SPRINGFIELD_PORT (else port rule.port, a fixed default as a tool
    // would have), keeps it up until another epic's server has tried to start too, up or refused its
    // port (bounded by rule.ms), then does its job. Logs whether the port was free, and what the env
    // map gave it.
    const port = Number(env.SPRINGFIELD_PORT || rule.port);
    const server = require('node:net').createServer();
    const up = (ok, error) => {
      log({ event: 'serve', ok, error: error || null, port, ports: env.SPRINGFIELD_PORTS || null, database: env.DATABASE_URL || null, at: Date.now() });
      fs.writeFileSync(path.join(env.SF_SYNC, 'served@' + epic), '');
      const deadline = Date.now() + (rule.ms || 0);
      const others = () => fs.readdirSync(env.SF_SYNC).some((n) => n.startsWith('served@') && n !== 'served@' + epic);
      const wait = setInterval(() => {
        if (Date.now() < deadline && !others()) return;
        clearInterval(wait);
        server.close();
        doJob();
      }, 50);
    };
    server.once('error', (e) => up(false, e.code));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => up(true));
    break;
  }
  case 'viability':
    sf('signal', epic, '--type', 'option_viability_failure', '--summary', 'the approach cannot scale past one file');
    break;
  case 'replan': {
    // A new version of the plan in her (re-)planning worktree: the same steps plus a third.
    const plan = JSON.parse(fs.readFileSync(env.SF_PLANS, 'utf8'))[epic];
    log({ event: 'replanning', toplevel: git('rev-parse', '--show-toplevel'), head: git('rev-parse', 'HEAD'), text: fs.readFileSync(plan, 'utf8') });
    fs.appendFileSync(plan, '\n## Step 3: Sharded store {#step-3}\n**Depends on:** #step-2\n**Tasks:**\n- [ ] Shard the store\n');
    fs.writeFileSync(plan, fs.readFileSync(plan, 'utf8').replace('One file per step.', 'Shard the store; one file per step.'));
    sf('plan', 'propose', epic, plan);
    break;
  }
  case 'uncommitted-plan': {
    const main = env.SF_MAIN;
    const plan = JSON.parse(fs.readFileSync(env.SF_PLANS, 'utf8'))[epic];
    fs.mkdirSync(path.join(main, path.dirname(plan)), { recursive: true });
    fs.writeFileSync(path.join(main, plan), fs.readFileSync(env.SF_PLAN_TEXT, 'utf8'));
    execFileSync(process.execPath, [env.SF_CLI, 'plan', 'propose', epic, plan], { cwd: main, encoding: 'utf8' });
    break;
  }
  case 'drift': {
    doJob();
    const plan = env.SPRINGFIELD_PLAN;
    fs.appendFileSync(plan, '\n## Step 3: Something I made up {#step-3}\n**Tasks:**\n- [ ] More work\n');
    commit(plan, fs.readFileSync(plan, 'utf8'), 'Plan more work', false);
    break;
  }
  default: throw new Error('unknown behaviour ' + behaviour);
}
`;

export interface FaultRepo {
  readonly base: string;
  readonly repo: string;
  readonly log: string;
  /** The environment the CLI and the agents run with. */
  readonly env: NodeJS.ProcessEnv;
  /** The CLI as a person runs it in the main worktree, with --json: exit code, parsed stdout, stderr. */
  sf(...args: string[]): { code: number | null; json: Record<string, unknown>; stderr: string; stdout: string };
  git(...args: string[]): string;
  /** Creates an epic whose planner proposes `plans/<slug>.md`; returns its id. */
  epic(title: string, options?: { complexity?: string; maxIterations?: number }): string;
  /** Sets the agent's behaviours (see AGENT). */
  behave(
    rules: Record<
      string,
      {
        do: string;
        times?: number;
        n?: number;
        usage?: 'claude' | 'codex';
        cost?: number;
        ms?: number;
        files?: Record<string, string[]>;
        waitFor?: Record<string, string>;
        port?: number;
      }
    >,
  ): void;
  config(extra: Record<string, unknown>): void;
  /** The agent's log lines. */
  records(): Record<string, unknown>[];
  /**
   * `springfield orchestrate --watch --until-idle`, killed by a safety timeout far above what a
   * converging run needs (`untilIdle: false` leaves the flag out, for the checker's own test).
   */
  orchestrate(options?: { untilIdle?: boolean; timeoutMs?: number; intervalSeconds?: number }): Orchestrated;
}

export interface Orchestrated {
  readonly code: number | null;
  /** The safety net fired: the orchestrator did not return by itself. */
  readonly timedOut: boolean;
  readonly stderr: string;
  readonly json: {
    actions?: unknown[];
    waiting?: { epic_id: string; kind: string; message: string; until: string | null }[];
  };
}

/** A fresh repository with the agent configured for lisa, ralph and bart, zero backoff and the default retry limit of 3. */
export function faultRepo(
  t: { after: (fn: () => void) => void },
  config: Record<string, unknown> = {},
  extraEnv: (base: string) => Record<string, string> = () => ({}),
): FaultRepo {
  ensureCli();
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'sf-fault-')));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const repo = join(base, 'repo');
  mkdirSync(join(repo, 'plans'), { recursive: true });
  writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
  const agent = join(base, 'agent.cjs');
  const log = join(base, 'agent.log');
  const behaviour = join(base, 'behaviour.json');
  const plans = join(base, 'plans.json');
  const planFile = join(base, 'plan.md');
  writeFileSync(agent, AGENT);
  writeFileSync(log, '');
  writeFileSync(behaviour, '{}');
  writeFileSync(plans, '{}');
  writeFileSync(planFile, planText('Scripted work'));
  const env = cleanEnv({
    SF_CLI: CLI_PATH,
    SF_LOG: log,
    SF_BEHAVIOUR: behaviour,
    SF_PLANS: plans,
    SF_PLAN_TEXT: planFile,
    SF_MAIN: repo,
    SF_ORPHAN: join(base, 'orphan.pid'),
    SF_SYNC: join(base, 'sync'),
    ...extraEnv(base),
  });
  mkdirSync(join(base, 'sync'));
  const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8', env }).trim();
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'faults@springfield.invalid');
  git('config', 'user.name', 'Fault suite');
  git('config', 'commit.gpgsign', 'false');
  git('add', '-A');
  git('commit', '-qm', 'start');
  const sf = (...args: string[]) => {
    const r = runCliSync(repo, [...args, '--json'], env);
    let json: Record<string, unknown> = {};
    try {
      json = r.stdout ? (JSON.parse(r.stdout) as Record<string, unknown>) : {};
    } catch {
      json = {};
    }
    return { code: r.code, json, stderr: r.stderr, stdout: r.stdout };
  };
  let current: Record<string, unknown> = {
    roles: { lisa: [process.execPath, agent], ralph: [process.execPath, agent], bart: [process.execPath, agent] },
    verification: [[process.execPath, '-e', '0']],
    maxParallelAgents: 2,
    // These scenarios are about faults, not the machine: admission lets every start through (test/faults/fleet.test.ts judges it).
    admission: ADMIT_ANY_MACHINE,
    retryBackoffSeconds: [0],
    killGraceSeconds: 1,
    ...config,
  };
  const writeConfig = () => {
    mkdirSync(join(repo, '.springfield'), { recursive: true });
    writeFileSync(join(repo, '.springfield', 'config.json'), JSON.stringify(current));
    // The person allows what they configured (nothing a config names runs before: docs/trust.md).
    const allowed = sf('allow');
    assert.equal(allowed.code, 0, allowed.stderr);
  };
  writeConfig();
  return {
    base,
    repo,
    log,
    env,
    sf,
    git,
    epic(title, options = {}) {
      const slug = title.toLowerCase().replace(/[^a-z0-9]+/g, '-');
      const created = sf(
        'epic',
        'create',
        title,
        '--complexity',
        options.complexity ?? 'simple',
        ...(options.maxIterations ? ['--max-iterations', String(options.maxIterations)] : []),
      );
      assert.equal(created.code, 0, created.stderr);
      const id = String(created.json.id);
      const path = `plans/${slug}.md`;
      writeFileSync(plans, JSON.stringify({ ...(JSON.parse(readFileSync(plans, 'utf8')) as object), [id]: path }));
      if (!existsSync(join(repo, path))) {
        writeFileSync(join(repo, path), planText(title));
        git('add', path);
        git('commit', '-qm', `Plan ${title}`);
      }
      return id;
    },
    behave(rules) {
      writeFileSync(behaviour, JSON.stringify(rules));
    },
    config(extra) {
      current = { ...current, ...extra };
      writeConfig();
    },
    records: () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    orchestrate(options = {}) {
      const args = [
        CLI_PATH,
        'orchestrate',
        '--watch',
        ...(options.untilIdle === false ? [] : ['--until-idle']),
        '--interval',
        String(options.intervalSeconds ?? 1),
        '--json',
      ];
      const r = spawnSync(process.execPath, args, {
        cwd: repo,
        encoding: 'utf8',
        env,
        timeout: options.timeoutMs ?? 150_000,
        killSignal: 'SIGKILL',
      });
      const timedOut = r.error !== undefined || r.signal !== null;
      let json: Orchestrated['json'] = {};
      try {
        json = r.stdout ? (JSON.parse(r.stdout) as Orchestrated['json']) : {};
      } catch {
        json = {};
      }
      return { code: r.status, timedOut, stderr: r.stderr, json };
    },
  };
}

export interface Expectation {
  readonly epic: string;
  /** At most this many sessions of each role (the retry limit, or a successful run's count). */
  readonly maxSessions: Readonly<Record<string, number>>;
  readonly status: string;
  /** The status reason must match. */
  readonly reason?: RegExp;
}

/**
 * The convergence checks of docs/scheduler-faults.md, as a list of violations (empty: converged):
 * `--until-idle` returned by itself, sessions stayed within bounds, the epic ended where expected,
 * no step is held by a run that is not running, and every commit an agent made is still reachable
 * (or, for a merged epic, its content is on main).
 */
export function violations(f: FaultRepo, run: Orchestrated, expect: Expectation): string[] {
  const out: string[] = [];
  if (run.timedOut) out.push('orchestrate --until-idle did not return by itself');
  else if (run.code !== 0) out.push(`orchestrate exited ${run.code}: ${run.stderr.split('\n').slice(-3).join(' | ')}`);
  const sessions =
    (f.sf('runs', '--epic', expect.epic).json.sessions as Record<string, Record<string, number>> | undefined)?.[
      expect.epic
    ] ?? {};
  for (const [role, max] of Object.entries(expect.maxSessions)) {
    if ((sessions[role] ?? 0) > max) out.push(`${role} ran ${sessions[role]} sessions, more than ${max}`);
  }
  const epic = f.sf('epic', 'show', expect.epic).json as { status?: string; status_reason?: string | null };
  if (epic.status !== expect.status)
    out.push(`${expect.epic} is ${epic.status} (${epic.status_reason ?? ''}), expected ${expect.status}`);
  if (expect.reason && !expect.reason.test(epic.status_reason ?? ''))
    out.push(`${expect.epic}'s reason "${epic.status_reason ?? ''}" does not match ${String(expect.reason)}`);
  out.push(...heldByDeadRuns(f), ...lostCommits(f, epic.status === 'done'));
  return out;
}

/** Steps claimed or in progress whose holder has no running run: nobody would ever finish or release them. */
export function heldByDeadRuns(f: FaultRepo): string[] {
  const plans = (f.sf('show').json.plans ?? []) as {
    plan_path: string;
    steps: { anchor: string; status: string; claimed_by: string | null }[];
  }[];
  const running = (f.sf('runs', '--active').json.runs ?? []) as {
    step_anchor: string | null;
    worktree: string | null;
  }[];
  const out: string[] = [];
  for (const p of plans) {
    for (const s of p.steps) {
      if (s.status !== 'claimed' && s.status !== 'in_progress') continue;
      if (!running.some((r) => r.step_anchor === s.anchor && r.worktree === s.claimed_by))
        out.push(`${p.plan_path}#${s.anchor} is ${s.status} by ${s.claimed_by ?? '?'} with no run alive`);
    }
  }
  return out;
}

/** Commits the agents made that no ref reaches, unless their content landed on main with a merged epic. */
export function lostCommits(f: FaultRepo, merged: boolean): string[] {
  const out: string[] = [];
  for (const r of f.records()) {
    if (r.event !== 'commit' && r.event !== 'leftover') continue;
    if (r.event === 'commit') {
      const refs = spawnSync('git', ['for-each-ref', '--contains', String(r.commit), '--format=%(refname)'], {
        cwd: f.repo,
        encoding: 'utf8',
      }).stdout.trim();
      if (refs !== '') continue;
    }
    const onMain = spawnSync('git', ['show', `main:${String(r.file)}`], { cwd: f.repo, encoding: 'utf8' });
    const onBranch = f
      .git('for-each-ref', '--format=%(refname)', 'refs/heads/')
      .split('\n')
      .some(
        (ref) =>
          spawnSync('git', ['show', `${ref}:${String(r.file)}`], { cwd: f.repo, encoding: 'utf8' }).stdout === r.text,
      );
    if ((merged && onMain.stdout === r.text) || onBranch) continue;
    out.push(`${String(r.event)} ${String(r.commit ?? '')} (${String(r.file)}) by ${String(r.role)} is lost`);
  }
  return out;
}

/** Sessions per role of an epic. */
export function sessionsOf(f: FaultRepo, epic: string): Record<string, number> {
  return (
    (f.sf('runs', '--epic', epic).json.sessions as Record<string, Record<string, number>> | undefined)?.[epic] ?? {}
  );
}

/** Approves the epic's proposed plan as a person would. */
export function approve(f: FaultRepo, epic: string): void {
  const r = f.sf('plan', 'approve', epic, '--agent', 'marge');
  assert.equal(r.code, 0, r.stderr);
}
