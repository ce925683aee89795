/**
 * The agent CLIs Springfield knows how to start headless, one entry each: the argv per role, how the
 * CLI accepts edits and commands without prompting, and where its output reports usage and cost.
 * Every flag was read from the CLI's own `--help` at the version named in the entry's comment;
 * test/cli/agentPresets.test.ts installs the npm-published ones at those versions and checks each
 * flag against their help (Aider and Cursor against captured help texts in test/fixtures/agent-help).
 * Why the argv look the way they do: docs/agents.md.
 */
import { ROLE_REGISTRY, STARTED_ROLES, type StartedRole } from '../../shared/roles.ts';
import type { ErrorSpec } from './agentErrors.ts';
import type { LimitSpec } from './limits.ts';
import type { UsageSpec } from './usage.ts';

/** The roles a preset can fill: those the scheduler starts an agent for (Lovejoy is mechanical: Springfield merges itself). */
export const PRESET_ROLES = STARTED_ROLES;
export type PresetRole = StartedRole;

export interface AgentPreset {
  readonly id: string;
  readonly name: string;
  /** The executable looked up on PATH. */
  readonly program: string;
  /** The subcommand whose `--help` lists the flags used (e.g. `codex exec`), empty for the top level. */
  readonly subcommand: readonly string[];
  /** The version whose help the flags were checked against. */
  readonly checkedVersion: string;
  /** npm package (installed by the flag test), or null for CLIs distributed otherwise. */
  readonly npm: string | null;
  readonly install: string;
  /** argv per role; `$SPRINGFIELD_CONTEXT_FILE` is replaced by `springfield run` (docs/agents.md). */
  readonly roles: Readonly<Partial<Record<PresetRole, readonly string[]>>>;
  /** How edits and commands are accepted without a prompt, in one sentence. */
  readonly permissions: string;
  /** Machine-readable usage and cost in the output, or null where the CLI prints none. */
  readonly usage: UsageSpec | null;
  /** A limit the user must know before choosing it. */
  readonly caveat?: string;
  /** Lines the CLI prints while it retries an unreachable model: no sign of life for the stall watch (docs/scheduler-faults.md). */
  readonly retryLines?: readonly RegExp[];
  /** Where its output says why it failed: the headline of a failed run (docs/scheduler-faults.md, "The headline"). */
  readonly errors?: readonly ErrorSpec[];
  /** How it says it met a usage or rate limit (docs/agents.md, "Usage limits"); the generic wording applies to every CLI. */
  readonly limits?: readonly LimitSpec[];
}

/**
 * The prompt given as an argument: the context file carries the real instructions. The path is
 * filled in by `springfield run`; the `cat` form also works where the variable is only in the environment.
 */
export function kickoff(role: PresetRole): string {
  return `You are ${ROLE_REGISTRY[role].name}, ${ROLE_REGISTRY[role].title}, started by Springfield. Your instructions and everything you need are in the file $SPRINGFIELD_CONTEXT_FILE: read all of it first (cat "$SPRINGFIELD_CONTEXT_FILE"), then do exactly what it says.`;
}

/** The same options for every role, with the role's kickoff prompt where `PROMPT` stands. */
function perRole(argv: readonly string[]): Record<PresetRole, readonly string[]> {
  const out = {} as Record<PresetRole, readonly string[]>;
  for (const role of PRESET_ROLES) out[role] = argv.map((a) => (a === PROMPT ? kickoff(role) : a));
  return out;
}
const PROMPT = '\u0000prompt';

/** A model API's rate limit or spent quota, as a CLI passes it on. */
const API_LIMIT = /\b429\b|rate[ _-]?limit|too many requests|usage limit|\bquota\b|insufficient_quota/i;
/** Claude Code's own words for a subscription's limit, in its result or as a line of text. */
const CLAUDE_PLAN_LIMIT = /usage limit reached|hit your (?:usage )?limit|limit reached\s*[·∙•|]/i;
/** The same, or the API's rate limit, in a result that is an error. */
const CLAUDE_LIMIT = /usage limit reached|hit your (?:usage )?limit|limit reached\s*[·∙•|]|\b429\b|rate[ _-]?limit/i;

/** opencode's log line for a failed model request (`--print-logs`): `level=ERROR … message="stream error" … error.error="…"`. */
const OPENCODE_ATTEMPT = /\blevel=ERROR\b.*\bmessage="stream error"/;
/** The same for a limit, its error's words captured. */
const OPENCODE_LIMITED_ATTEMPT =
  /\bmessage="stream error".*\berror\.error="(?:AI_\w+: )?(?<message>[^"]*(?:\b429\b|rate[ _-]?limit|too many requests|usage limit|\bquota\b)[^"]*)"/i;

export const AGENT_PRESETS: readonly AgentPreset[] = [
  // Claude Code 2.1.330 (`claude --help`): -p prints and exits; acceptEdits accepts file edits, and
  // --allowedTools Bash lets it run springfield, git and the tests; stream-json needs --verbose in
  // print mode (the CLI says so), and its last line is the `result` event with cost and usage.
  {
    id: 'claude',
    name: 'Claude Code',
    program: 'claude',
    subcommand: [],
    checkedVersion: '2.1.330',
    npm: '@anthropic-ai/claude-code',
    install: 'npm install -g @anthropic-ai/claude-code',
    roles: perRole([
      'claude',
      '-p',
      PROMPT,
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      'Bash',
      '--output-format',
      'stream-json',
      '--verbose',
    ]),
    permissions: '--permission-mode acceptEdits accepts edits; --allowedTools Bash runs commands without asking',
    usage: {
      format: 'jsonl',
      match: { type: 'result' },
      costUsd: 'total_cost_usd',
      inputTokens: 'usage.input_tokens',
      outputTokens: 'usage.output_tokens',
      cacheReadTokens: 'usage.cache_read_input_tokens',
      cacheWriteTokens: 'usage.cache_creation_input_tokens',
    },
    // Its API retries (up to 10, a minute apart at the end) print `api_retry` events; an error ends in a result event with is_error.
    retryLines: [/"subtype":"api_retry"/],
    errors: [
      { match: { type: 'result', is_error: true }, paths: ['result', 'subtype'] },
      { match: { type: 'assistant', 'message.model': '<synthetic>' }, paths: ['message.content.0.text'] },
    ],
    // The API's 429 ends in a result event with api_error_status; a subscription's limit is a result text
    // ("Claude AI usage limit reached|<epoch>", "You've hit your limit · resets 3pm").
    limits: [
      { match: { type: 'result', api_error_status: 429 }, paths: ['result'] },
      { match: { type: 'assistant', error: 'rate_limit' }, paths: ['message.content.0.text'] },
      { match: { type: 'result', is_error: true }, paths: ['result'], says: CLAUDE_LIMIT },
      { says: CLAUDE_PLAN_LIMIT },
    ],
  },
  // Codex CLI 0.169.0 (`codex exec --help`): exec is the non-interactive mode and never asks for
  // approval; the workspace-write sandbox keeps .git and paths outside the worktree read-only, so
  // `springfield` (the database lives in the main worktree) and `git commit` need danger-full-access.
  // --json prints JSONL events; `turn.completed` carries token usage (no cost). Its commands run in a
  // login shell by default (`bash -lc`), which rebuilds PATH from /etc/profile and loses the
  // `springfield` Springfield puts first on it: -c allow_login_shell=false keeps the PATH it was given.
  {
    id: 'codex',
    name: 'Codex CLI',
    program: 'codex',
    subcommand: ['exec'],
    checkedVersion: '0.169.0',
    npm: '@openai/codex',
    install: 'npm install -g @openai/codex',
    roles: perRole([
      'codex',
      'exec',
      '--sandbox',
      'danger-full-access',
      '-c',
      'allow_login_shell=false',
      '--json',
      PROMPT,
    ]),
    permissions:
      'exec never asks; --sandbox danger-full-access lets it write the state database and commit (workspace-write keeps .git read-only); allow_login_shell=false keeps the PATH Springfield gives it (a login shell rebuilds PATH from /etc/profile)',
    usage: {
      format: 'jsonl',
      match: { type: 'turn.completed' },
      inputTokens: 'usage.input_tokens',
      outputTokens: 'usage.output_tokens',
      cacheReadTokens: 'usage.cached_input_tokens',
      sum: true,
    },
    retryLines: [/Reconnecting/i],
    errors: [
      { match: { type: 'turn.failed' }, paths: ['error.message'] },
      { match: { type: 'error' }, paths: ['message'] },
    ],
    // "You've hit your usage limit. … try again in 2 days 3 hours" (a ChatGPT plan), or an API's 429 after its
    // retries: "exceeded retry limit, last status: 429 Too Many Requests".
    limits: [
      { match: { type: 'turn.failed' }, paths: ['error.message'], says: API_LIMIT },
      { match: { type: 'error' }, paths: ['message'], says: API_LIMIT },
    ],
  },
  // Gemini CLI 0.61.0 (`gemini --help`): -p/--prompt is headless; --approval-mode yolo approves every
  // tool, but only in a trusted folder (otherwise it falls back to "default"), hence --skip-trust;
  // --output-format json ends with `stats.models.<model>.tokens`.
  {
    id: 'gemini',
    name: 'Gemini CLI',
    program: 'gemini',
    subcommand: [],
    checkedVersion: '0.61.0',
    npm: '@google/gemini-cli',
    install: 'npm install -g @google/gemini-cli',
    roles: perRole([
      'gemini',
      '--prompt',
      PROMPT,
      '--approval-mode',
      'yolo',
      '--skip-trust',
      '--output-format',
      'json',
    ]),
    permissions:
      '--approval-mode yolo approves every tool; --skip-trust keeps it from falling back to asking in an untrusted folder',
    usage: {
      format: 'json',
      match: {},
      perModel: 'stats.models',
      inputTokens: 'tokens.prompt',
      outputTokens: 'tokens.candidates',
      cacheReadTokens: 'tokens.cached',
      sum: true,
    },
    // An error is one pretty-printed JSON document on stderr (stdout stays empty).
    errors: [{ match: {}, paths: ['error.message'], document: true }],
    // "Usage limit reached for gemini-2.5-pro.", "You have exhausted your daily quota on this model.", or the
    // API's RESOURCE_EXHAUSTED ("Please retry in 34.5s") in the error it prints on stderr.
    limits: [{ says: /Usage limit reached for|exhausted your (daily )?quota|RESOURCE_EXHAUSTED|Quota exceeded/i }],
  },
  // GitHub Copilot CLI 1.0.102 (`copilot --help`): -p/--prompt is non-interactive and needs
  // --allow-all-tools; --allow-all-paths lets it read the context file outside the worktree;
  // --no-ask-user keeps it from stopping for questions. --output-format json prints JSONL whose
  // `result` event reports premium requests (no tokens).
  {
    id: 'copilot',
    name: 'GitHub Copilot CLI',
    program: 'copilot',
    subcommand: [],
    checkedVersion: '1.0.102',
    npm: '@github/copilot',
    install: 'npm install -g @github/copilot',
    roles: perRole([
      'copilot',
      '--prompt',
      PROMPT,
      '--allow-all-tools',
      '--allow-all-paths',
      '--no-ask-user',
      '--output-format',
      'json',
    ]),
    permissions:
      '--allow-all-tools and --allow-all-paths approve every tool and path; --no-ask-user never waits for an answer',
    usage: { format: 'jsonl', match: { type: 'result' }, premiumRequests: 'usage.premiumRequests' },
    errors: [{ match: { type: 'session.error' }, paths: ['data.message'] }, { pattern: /^Error: (.+)$/ }],
    // A rate limit or a spent premium-request allowance, as its session error or its closing `Error:` line.
    limits: [
      { match: { type: 'session.error' }, paths: ['data.message'], says: API_LIMIT },
      { says: /^Error: .*(?:429|rate[ _-]?limit|too many requests|premium request|quota|usage limit)/i },
    ],
  },
  // opencode 1.18.33 (`opencode run --help`): `run` sends one message and exits; --auto approves
  // permissions not explicitly denied; --format json prints raw events, each `step_finish` with
  // tokens and cost. It retries a 429 up to 5 times, each after the retry-after it was given, and
  // prints nothing meanwhile: --print-logs --log-level ERROR puts each failed attempt on stderr.
  {
    id: 'opencode',
    name: 'opencode',
    program: 'opencode',
    subcommand: ['run'],
    checkedVersion: '1.18.33',
    npm: 'opencode-ai',
    install: 'npm install -g opencode-ai',
    roles: perRole(['opencode', 'run', '--auto', '--format', 'json', '--print-logs', '--log-level', 'ERROR', PROMPT]),
    permissions: '--auto approves every permission that is not explicitly denied',
    usage: {
      format: 'jsonl',
      match: { type: 'step_finish' },
      costUsd: 'part.cost',
      inputTokens: 'part.tokens.input',
      outputTokens: 'part.tokens.output',
      cacheReadTokens: 'part.tokens.cache.read',
      cacheWriteTokens: 'part.tokens.cache.write',
      sum: true,
    },
    errors: [{ match: { type: 'error' }, paths: ['error.data.message', 'error.message', 'error.name'] }],
    // Its logged attempts ("stream error") are no sign of life; a run stalled in them met the limit they name.
    retryLines: [OPENCODE_ATTEMPT],
    // What it gives up with is its error event; until then, its last logged attempt.
    limits: [
      { match: { type: 'error' }, paths: ['error.data.message', 'error.message'], says: API_LIMIT },
      { says: OPENCODE_LIMITED_ATTEMPT },
    ],
  },
  // Cursor Agent 2026.09.28-64d2043 (captured `cursor-agent --help`, test/fixtures/agent-help):
  // --print is headless with every tool; --force runs commands unless denied; --trust skips the
  // workspace trust prompt; --sandbox disabled lets it write the state database and .git outside
  // the worktree. Its json result reports duration, no tokens.
  {
    id: 'cursor',
    name: 'Cursor Agent',
    program: 'cursor-agent',
    subcommand: [],
    checkedVersion: '2026.09.28-64d2043',
    npm: null,
    install: 'curl https://cursor.com/install -fsS | bash',
    roles: perRole([
      'cursor-agent',
      '--print',
      '--force',
      '--trust',
      '--sandbox',
      'disabled',
      '--output-format',
      'json',
      PROMPT,
    ]),
    permissions:
      '--force runs commands unless denied; --trust skips the workspace prompt; --sandbox disabled allows writes outside the worktree',
    usage: null,
  },
  // Aider 0.86.2 (captured `aider --help`, test/fixtures/agent-help): --message-file sends the
  // context file as the one message and exits; --yes-always accepts edits. Aider never runs shell
  // commands under --yes-always, so it cannot tick items or commit: Ralph only, with a caveat.
  // It prints "Tokens: … Cost: $… session" as text.
  {
    id: 'aider',
    name: 'Aider',
    program: 'aider',
    subcommand: [],
    checkedVersion: '0.86.2',
    npm: null,
    install: 'python -m pip install aider-install && aider-install',
    roles: {
      ralph: [
        'aider',
        '--message-file',
        '$SPRINGFIELD_CONTEXT_FILE',
        '--yes-always',
        '--no-auto-commits',
        '--no-suggest-shell-commands',
        '--no-pretty',
        '--no-stream',
        '--no-check-update',
        '--no-show-release-notes',
      ],
    },
    permissions: '--yes-always accepts every edit; shell commands are never run',
    usage: { format: 'text', pattern: 'Cost: \\$[\\d.]+ message, \\$([\\d.]+) session', costUsdGroup: 1 },
    caveat:
      'Aider edits files but does not run shell commands unattended, so it cannot tick items or run springfield commit: after its run, finish the step yourself (springfield commit -m …). Use another preset for Lisa and Bart.',
  },
];

/** The preset with this id, or undefined. */
export function findPreset(id: string): AgentPreset | undefined {
  return AGENT_PRESETS.find((p) => p.id === id);
}

/** The preset whose program a command runs (`claude`, `/usr/local/bin/codex`), or undefined for any other command. */
export function presetFor(command: readonly string[]): AgentPreset | undefined {
  const program = (command[0] ?? '')
    .split(/[\\/]/)
    .at(-1)
    ?.replace(/\.(cmd|exe)$/i, '');
  return AGENT_PRESETS.find((p) => p.program === program);
}
