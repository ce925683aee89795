// The real agent CLIs (installed from npm into .cache/agent-clis by scripts/agentClis.ts, at the
// versions the presets name) driven by a scripted model on 127.0.0.1 (scriptedModel/): what each
// needs to talk to it and nothing else, and a whole epic run through the headless scheduler with the
// preset exactly as `springfield agents use` writes it (docs/agents.md, "Tested end to end").
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { anthropic } from './scriptedModel/anthropic.ts';
import { gemini } from './scriptedModel/gemini.ts';
import { openaiChat } from './scriptedModel/openaiChat.ts';
import { openaiResponses } from './scriptedModel/openaiResponses.ts';
import {
  startScriptedModel,
  type Adapter,
  type Failure,
  type ModelRequest,
  type ScriptedModel,
} from './scriptedModel/server.ts';
import { roleSpec } from '../../src/shared/roles.ts';
import { cleanEnv, ensureCli, PROJECT_ROOT, runCliAsync, type CliResult } from './gitRepo.ts';

/**
 * How long a test of a real agent CLI may take before it counts as hung: a bound on a hang, never a
 * verdict on the machine's speed. A whole epic with opencode takes 45 s alone on a quiet 2-core machine,
 * 75 s beside four CPU hogs, about 200 s inside `npm test`, and went past 300 s in a CI run.
 */
export const REAL_AGENT_TEST_MS = 20 * 60_000;

/** Where the test pass installs the agent CLIs (scripts/prepareTests.ts). */
export const AGENT_BIN = join(PROJECT_ROOT, '.cache', 'agent-clis', 'node_modules', '.bin');

export interface AgentCli {
  readonly preset: string;
  readonly adapter: Adapter;
  /** The environment (and files under `home`) that point the CLI at the scripted model and nowhere else. */
  prepare(home: string, modelUrl: string): Record<string, string>;
}

export const CLAUDE: AgentCli = {
  preset: 'claude',
  adapter: anthropic,
  prepare: (_home, url) => ({
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: 'sk-ant-scripted',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  }),
};

export const CODEX: AgentCli = {
  preset: 'codex',
  adapter: openaiResponses,
  prepare: (home, url) => {
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    // A custom provider needs no login; plugins, analytics and unbounded retries would reach the network.
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model = "gpt-5.5"',
        'model_provider = "scripted"',
        'check_for_update_on_startup = false',
        '',
        '[features]',
        'plugins = false',
        'unbounded_connection_retries = false',
        '',
        '[analytics]',
        'enabled = false',
        '',
        '[feedback]',
        'enabled = false',
        '',
        '[model_providers.scripted]',
        'name = "Springfield scripted model"',
        `base_url = "${url}/v1"`,
        'wire_api = "responses"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        'stream_idle_timeout_ms = 20000',
        '',
      ].join('\n'),
    );
    return { CODEX_HOME: codexHome };
  },
};

export const OPENCODE: AgentCli = {
  preset: 'opencode',
  adapter: openaiChat,
  prepare: (home, url) => {
    const dir = join(home, '.config', 'opencode');
    mkdirSync(dir, { recursive: true });
    // Each start would install its plugin package into the config folder from the npm registry: a folder that has it already is left alone.
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ dependencies: { '@opencode-ai/plugin': '1.18.33' } }));
    writeFileSync(
      join(dir, 'package-lock.json'),
      JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies: { '@opencode-ai/plugin': '1.18.33' } } } }),
    );
    mkdirSync(join(dir, 'node_modules'));
    writeFileSync(
      join(dir, 'opencode.json'),
      JSON.stringify(
        {
          $schema: 'https://opencode.ai/config.json',
          autoupdate: false,
          share: 'disabled',
          // opencode's own undo history (a shadow git repository it adds every file of the worktree to) and
          // its language servers: neither is what these tests are about, and they took a quarter of its CPU.
          snapshot: false,
          lsp: false,
          model: 'scripted/scripted-model',
          small_model: 'scripted/scripted-model',
          enabled_providers: ['scripted'],
          provider: {
            scripted: {
              npm: '@ai-sdk/openai-compatible',
              name: 'Springfield scripted model',
              options: { baseURL: `${url}/v1`, apiKey: 'sk-scripted' },
              models: { 'scripted-model': { name: 'Scripted model' } },
            },
          },
        },
        null,
        2,
      ),
    );
    return {
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local', 'share'),
      XDG_CACHE_HOME: join(home, '.cache'),
      XDG_STATE_HOME: join(home, '.local', 'state'),
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    };
  },
};

export const GEMINI: AgentCli = {
  preset: 'gemini',
  adapter: gemini,
  prepare: (home, url) => {
    mkdirSync(join(home, '.gemini'), { recursive: true });
    // The API-key sign-in must be chosen in settings: with only a base URL, 0.61 picks a gateway sign-in it then refuses.
    writeFileSync(
      join(home, '.gemini', 'settings.json'),
      JSON.stringify(
        {
          security: { auth: { selectedType: 'gemini-api-key' } },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1 },
          ide: { enabled: false },
        },
        null,
        2,
      ),
    );
    return { GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'scripted-key' };
  },
};

/** Copilot's native package unpacks itself (about 235 MB) on first use: once for the whole test pass. */
const COPILOT_CACHE = join(PROJECT_ROOT, '.cache', 'copilot-home-cache');

export const COPILOT: AgentCli = {
  preset: 'copilot',
  adapter: openaiChat,
  // Its documented bring-your-own-key mode, offline: no GitHub sign-in and no other traffic.
  prepare: (_home, url) => ({
    COPILOT_PROVIDER_BASE_URL: `${url}/v1`,
    COPILOT_MODEL: 'gpt-4.1',
    COPILOT_OFFLINE: 'true',
    XDG_CACHE_HOME: COPILOT_CACHE,
  }),
};

export interface RealAgentRepo {
  readonly base: string;
  readonly repo: string;
  readonly model: ScriptedModel;
  readonly env: Record<string, string>;
  /** `springfield …` in the main worktree with the agents' environment (never blocks the scripted model). */
  sf(...args: string[]): Promise<CliResult>;
  /** Keeps the directory (repository, agents' logs, every model request) after the test, for a person to read. */
  keep(): void;
  git(...args: string[]): string;
}

/** PATH without any `springfield`, with the agent CLIs in `bin`: what a person's shell would have before installing Springfield. */
export function agentPath(bin = AGENT_BIN): string {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => d && !existsSync(join(d, 'springfield')));
  return [bin, ...dirs].join(delimiter);
}

/**
 * A repository with a committed README and a person's untracked note in the main checkout, the
 * scripted model started, the CLI pointed at it, `agents use <preset>` written as a person would,
 * a verification command, and the config allowed.
 */
export async function realAgentRepo(
  t: { after: (fn: () => unknown) => void },
  cli: AgentCli,
  options: {
    fail?: (r: ModelRequest) => Failure | null;
    delayMs?: (r: ModelRequest) => number;
    config?: Record<string, unknown>;
    /** Other CLIs the same scripted model serves (a fallback preset), pointed at it too. */
    also?: readonly AgentCli[];
  } = {},
): Promise<RealAgentRepo> {
  ensureCli();
  assert.ok(
    existsSync(join(AGENT_BIN, cli.preset === 'claude' ? 'claude' : cli.preset)),
    `${cli.preset} is installed in ${AGENT_BIN} (npm test installs it: scripts/prepareTests.ts)`,
  );
  const base = realpathSync(mkdtempSync(join(tmpdir(), `sf-${cli.preset}-`)));
  const repo = join(base, 'repo');
  const home = join(base, 'home');
  mkdirSync(repo);
  mkdirSync(home);
  const model = await startScriptedModel({
    adapters: [cli.adapter, ...(options.also ?? []).map((a) => a.adapter)],
    logFile: join(base, 'requests.jsonl'),
    maxRequests: 300,
    lifetimeMs: REAL_AGENT_TEST_MS,
    ...(options.fail ? { fail: options.fail } : {}),
    ...(options.delayMs ? { delayMs: options.delayMs } : {}),
  });
  let kept = Boolean(process.env.SPRINGFIELD_KEEP_TEST_DIRS);
  t.after(async () => {
    await model.close();
    if (!kept) rmSync(base, { recursive: true, force: true });
  });
  // Only the CLIs the test uses are installed, as on a person's machine: `springfield agents` asks each one it finds.
  const bin = join(base, 'bin');
  mkdirSync(bin);
  for (const c of [cli, ...(options.also ?? [])]) symlinkSync(join(AGENT_BIN, c.preset), join(bin, c.preset));
  const env: Record<string, string> = {
    HOME: home,
    PATH: agentPath(bin),
    TMPDIR: join(base, 'tmp'),
    ...cli.prepare(home, model.url),
  };
  for (const other of options.also ?? []) Object.assign(env, other.prepare(home, model.url));
  mkdirSync(join(base, 'tmp'));
  const full = cleanEnv(env);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: full, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'person@springfield.invalid');
  git('config', 'user.name', 'A Person');
  writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
  writeFileSync(join(repo, 'README.md'), '# Greeter\n');
  git('add', '-A');
  git('commit', '-qm', 'start');
  writeFileSync(join(repo, 'notes-of-a-person.txt'), 'mine, not committed\n');
  const sf = (...args: string[]) => runCliAsync(repo, args, env);
  const use = await sf('agents', 'use', cli.preset, '--json');
  assert.equal(use.code, 0, use.stderr);
  const configFile = join(repo, '.springfield', 'config.json');
  const config = JSON.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
  Object.assign(config, {
    verification: [[process.execPath, '-e', "require('node:fs').accessSync('src/greeting.ts')"]],
    retryBackoffSeconds: [0],
    ...options.config,
  });
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const allowed = await sf('allow', '--json');
  assert.equal(allowed.code, 0, allowed.stderr);
  return {
    base,
    repo,
    model,
    env,
    sf,
    git,
    keep: () => {
      kept = true;
    },
  };
}

/**
 * A whole epic through `springfield orchestrate`: Lisa plans, a person approves, Ralph builds both
 * steps, verification passes, Bart signals, the epic merges. Checks what a person must be able to
 * rely on: the main checkout is untouched until the one merge commit, every step's commit was made
 * in the epic's worktree on its branch, and nothing stays claimed.
 */
export async function runWholeEpic(r: RealAgentRepo): Promise<{ epic: string; planning: string; building: string }> {
  try {
    return await wholeEpic(r);
  } catch (err) {
    // What failed stays readable: the agents' logs under .springfield/logs and every request in requests.jsonl.
    r.keep();
    if (err instanceof Error)
      err.message += `\n(kept ${r.base}: the agents' logs in repo/.springfield/logs, the model's requests in requests.jsonl)`;
    throw err;
  }
}

async function wholeEpic(r: RealAgentRepo): Promise<{ epic: string; planning: string; building: string }> {
  const created = await r.sf(
    'epic',
    'create',
    'Greeting command',
    '--brief',
    'Print a friendly greeting from src/greeting.ts.',
    '--json',
  );
  assert.equal(created.code, 0, created.stderr);
  const epic = created.json<{ id: string }>().id;
  const start = r.git('rev-parse', 'HEAD');
  const planning = await r.sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
  assert.equal(planning.code, 0, planning.stderr);
  const versions = (await r.sf('plan', 'show', epic, '--json')).json<{
    versions: { status: string; plan_path: string }[];
  }>().versions;
  assert.deepEqual(
    versions.map((v) => v.status),
    ['proposed'],
    `Lisa proposed one plan
${planning.stderr}`,
  );
  assert.deepEqual(
    mainCheckout(r),
    [start, '?? notes-of-a-person.txt'],
    'planning wrote nothing into the main checkout',
  );

  const approved = await r.sf('plan', 'approve', epic, '--json');
  assert.equal(approved.code, 0, approved.stderr);
  const building = await r.sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
  assert.equal(building.code, 0, building.stderr);
  const shown = (await r.sf('epic', 'show', epic, '--json')).json<{ status: string; status_reason: string | null }>();
  assert.equal(
    shown.status,
    'done',
    `${shown.status_reason ?? ''}
${building.stderr}`,
  );

  const runs = (await r.sf('runs', '--epic', epic, '--json')).json<{
    runs: { role: string; status: string; worktree: string; input_tokens: number | null }[];
  }>().runs;
  assert.deepEqual(runs.map((x) => `${x.role}:${x.status}`).sort(), [
    'bart:succeeded',
    'lisa:succeeded',
    'ralph:succeeded',
    'ralph:succeeded',
  ]);
  for (const run of runs)
    assert.notEqual(run.worktree, r.repo, `${run.role} ran in its own worktree, never in the person's checkout`);
  assertAgentsWereIn(r.model, runs);

  const [head, ...status] = mainCheckout(r);
  assert.deepEqual(
    status,
    ['?? notes-of-a-person.txt'],
    "the person's untracked file is untouched and nothing else is left",
  );
  assert.equal(r.git('rev-parse', `${head}^`), start, 'main gained exactly one commit: the merge');
  assert.equal(readFileSync(join(r.repo, 'notes-of-a-person.txt'), 'utf8'), 'mine, not committed\n');
  assert.ok(existsSync(join(r.repo, 'src', 'greeting.ts')), "Ralph's work arrived through the merge");
  const plan = versions[0]?.plan_path ?? '';
  const steps =
    (await r.sf('show', plan, '--json')).json<{
      plans: { steps: { anchor: string; status: string; commit_hash: string | null }[] }[];
    }>().plans[0]?.steps ?? [];
  assert.equal(steps.length, 2);
  for (const step of steps) {
    assert.equal(step.status, 'completed', 'nothing left claimed or half done');
    const commit = step.commit_hash ?? '';
    assert.match(
      r.git('log', '-1', '--format=%B', commit),
      new RegExp(`Springfield-Epic: ${epic}`),
      `${step.anchor}'s commit carries the epic's trailer`,
    );
    assert.throws(
      () => r.git('merge-base', '--is-ancestor', commit, start),
      `${step.anchor} was committed on the epic's branch, not on main`,
    );
  }
  const signals = (await r.sf('signals', epic, '--json')).json<{
    signals: { type: string; locations: { file: string; line: number }[] }[];
  }>().signals;
  assert.equal(signals.length, 1);
  assert.equal(signals[0]?.type, 'pass');
  assert.ok((signals[0]?.locations.length ?? 0) > 0, 'Bart pointed at a line of the diff');
  return { epic, planning: planning.stderr, building: building.stderr };
}

/** The main worktree: its HEAD, then `git status --porcelain` lines (untracked files shown, ignored ones not). */
function mainCheckout(r: RealAgentRepo): string[] {
  return [
    r.git('rev-parse', 'HEAD'),
    ...r.git('status', '--porcelain', '--untracked-files=all').split('\n').filter(Boolean),
  ];
}

/**
 * Each agent's shell was in its run's worktree: the folder every conversation's first command (`pwd`)
 * answered, by role, is the worktree the store recorded for a run of that role, one conversation a run.
 */
export function assertAgentsWereIn(
  model: ScriptedModel,
  runs: readonly { role: string; worktree: string | null }[],
): void {
  const told = model
    .conversations()
    .map((c) => `${/\bYou are (\w+), [^\n]*started by Springfield/.exec(c.kickoff)?.[1] ?? c.kickoff}: ${c.folder}`);
  const recorded = runs.map((run) => `${roleSpec(run.role)?.name ?? run.role}: ${run.worktree}`);
  assert.deepEqual(told.sort(), recorded.sort(), "each agent's pwd answered its run's worktree");
}

/** The requests of the conversation Springfield's kickoff began (not titles, quota checks, compactions). */
export function agentTurns(model: ScriptedModel): ModelRequest[] {
  return model.requests.filter((q) => JSON.stringify(q.body ?? '').includes('started by Springfield'));
}

/**
 * The builders' logs as a person reads them (what `springfield run` showed): each has the agent's
 * commands as readable lines and its closing line, and none of the raw JSON events its CLI printed.
 */
export function assertReadableBuilderLogs(r: RealAgentRepo, finished: RegExp): void {
  const dir = join(r.repo, '.springfield', 'logs');
  const logs = readdirSync(dir)
    .filter((n) => n.startsWith('Ralph_'))
    .map((n) => readFileSync(join(dir, n), 'utf8'));
  assert.ok(logs.length >= 2, 'a log per builder run');
  for (const log of logs) {
    const raw = log.split('\n').filter((l) => /^\s*\{"/.test(l));
    assert.deepEqual(
      raw.map((l) => l.slice(0, 120)),
      [],
      'no raw JSON event reaches the terminal',
    );
    assert.match(
      log,
      /^▸ .*springfield commit -m "Build .*" --plan plans\/.*\.md --step step-\d$/m,
      `the commit command is shown as run:\n${log.slice(0, 2000)}`,
    );
    assert.match(log, /^ {4}Committed [0-9a-f]{12} and completed step-\d/m, 'with the start of its output');
    assert.match(log, finished);
  }
}
