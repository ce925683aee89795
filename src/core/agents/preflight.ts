import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { presetFor, type AgentPreset } from '../runs/presets.ts';
import { startGroup } from '../runs/processGroup.ts';
import { which } from './detect.ts';

/** What a preflight found: null reason when the agent can run (docs/agents.md, "Preflight"). */
export interface Preflight {
  /** Why the agent cannot run, as the block's headline ("Claude Code is not logged in — run claude once to log in"), or null. */
  readonly reason: string | null;
  /** What was checked, in words (for `springfield agents` and the scheduler's log). */
  readonly checked: string;
}

/**
 * Checks, without spending a token, that an agent command can run: its program is installed (on the
 * PATH it will get, or at the path it names), and, for a preset CLI that can tell, that it is logged
 * in. A check that cannot decide (its status command hangs or answers oddly) passes: a preflight
 * only blocks what it knows cannot work, and the run's own outcome covers the rest.
 */
export async function preflight(command: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Preflight> {
  const program = command[0] ?? '';
  const preset = presetFor(command);
  const name = preset?.name ?? program;
  const path = locate(program, env, cwd);
  if (!path) {
    const install = preset ? ` — install it: ${preset.install}` : '';
    return {
      reason: `${name} is not installed: '${program}' is not ${program.includes('/') ? 'an executable file' : 'on PATH'}${install}`,
      checked: 'installed',
    };
  }
  const login = preset ? LOGIN[preset.id] : undefined;
  if (!login) return { reason: null, checked: `installed (${path})` };
  const reason = await login(path, env, cwd, preset as AgentPreset);
  return { reason, checked: `installed (${path}), logged in` };
}

function locate(program: string, env: NodeJS.ProcessEnv, cwd: string): string | null {
  if (!program) return null;
  if (!program.includes('/') && !program.includes('\\')) return which(program, env);
  const path = isAbsolute(program) ? program : resolve(cwd, program);
  try {
    if (!statSync(path).isFile()) return null;
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return null;
  }
}

type LoginCheck = (path: string, env: NodeJS.ProcessEnv, cwd: string, preset: AgentPreset) => Promise<string | null>;

/**
 * Runs a CLI's own status command (no shell, no stdin, bounded); null when it could not be run to an
 * answer. It leads its own process group, so a timeout also ends what it started: Gemini CLI
 * restarts itself in a child that would otherwise keep the pipe, and the caller, open.
 */
async function status(
  path: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ code: number; out: string } | null> {
  const end = await startGroup([path, ...args], {
    cwd,
    env,
    timeoutMs: statusTimeoutMs(env),
    graceMs: 1000,
    stdout: null,
    stderr: null,
    stdin: 'ignore',
    captureStdoutBytes: 1024 * 1024,
    captureStderrBytes: 1024 * 1024,
  }).done;
  if (end.timedOut || end.spawnError || end.signal) return null;
  return { code: end.exitCode, out: `${end.stdout ?? ''}${end.stderr ?? ''}` };
}

/**
 * How long a CLI's status command may take before the check gives up and passes (15 s;
 * SPRINGFIELD_PREFLIGHT_TIMEOUT in seconds, 1–3600, for a machine so loaded that a CLI starts slower).
 */
function statusTimeoutMs(env: NodeJS.ProcessEnv): number {
  const s = Number(env.SPRINGFIELD_PREFLIGHT_TIMEOUT);
  return Number.isInteger(s) && s >= 1 && s <= 3600 ? s * 1000 : 15_000;
}

const home = (env: NodeJS.ProcessEnv): string => env.HOME || homedir();
const set = (env: NodeJS.ProcessEnv, ...keys: string[]): boolean => keys.some((k) => (env[k] ?? '') !== '');

/** Per preset, how it says whether it is logged in (docs/agents.md, "Preflight"): only what costs no token and no network. */
const LOGIN: Readonly<Record<string, LoginCheck>> = {
  // `claude auth status` prints {"loggedIn": …} and exits 1 when it is not (API key, token, OAuth login alike).
  claude: async (path, env, cwd) => {
    const r = await status(path, ['auth', 'status', '--json'], env, cwd);
    if (!r || r.code === 0) return null;
    return /"loggedIn":\s*false/.test(r.out)
      ? 'Claude Code is not logged in — run claude once to log in, or set ANTHROPIC_API_KEY'
      : null;
  },
  // `codex login status` exits 1 when neither a login nor a saved key exists; a custom model provider
  // in config.toml, or a key in the environment, needs neither.
  codex: async (path, env, cwd) => {
    if (set(env, 'OPENAI_API_KEY', 'CODEX_API_KEY')) return null;
    const config = join(env.CODEX_HOME || join(home(env), '.codex'), 'config.toml');
    const provider = existsSync(config)
      ? /^\s*model_provider\s*=\s*"([^"]+)"/m.exec(readFileSync(config, 'utf8'))?.[1]
      : undefined;
    if (provider && provider !== 'openai') return null;
    const r = await status(path, ['login', 'status'], env, cwd);
    if (!r || r.code === 0) return null;
    return /not logged in/i.test(r.out) ? 'Codex CLI is not logged in — run codex login (or set OPENAI_API_KEY)' : null;
  },
  // An empty prompt makes gemini check its auth settings and stop before any request: exit 41 when none is set.
  gemini: async (path, env, cwd) => {
    const r = await status(path, ['--prompt', '', '--skip-trust', '--output-format', 'json'], env, cwd);
    if (!r || r.code !== 41) return null;
    return 'Gemini CLI has no sign-in — run gemini once to choose one, or set GEMINI_API_KEY';
  },
  // Copilot reads a token from the environment, its own login (under ~/.copilot), or the gh CLI's.
  copilot: async (_path, env, cwd) => {
    if (set(env, 'COPILOT_GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_TOKEN', 'COPILOT_PROVIDER_BASE_URL')) return null;
    if (existsSync(env.COPILOT_HOME || join(home(env), '.copilot'))) return null;
    const gh = which('gh', env);
    if (gh && (await status(gh, ['auth', 'token'], env, cwd))?.code === 0) return null;
    return 'GitHub Copilot CLI is not logged in — run copilot and /login, or set COPILOT_GITHUB_TOKEN';
  },
  // `cursor-agent status` says "Not logged in" when it is not.
  cursor: async (path, env, cwd) => {
    const r = await status(path, ['status'], env, cwd);
    return r && /not logged in/i.test(r.out) ? 'Cursor Agent is not logged in — run cursor-agent login' : null;
  },
};
