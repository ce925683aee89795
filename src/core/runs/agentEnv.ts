import { realpathSync } from 'node:fs';

/** The values `springfield run` hands an agent; null means "not applicable to this run". */
export interface AgentValues {
  readonly epic: string;
  readonly step: string | null;
  readonly plan: string | null;
  readonly worktree: string;
  readonly claimToken: number | null;
  readonly contextFile: string | null;
  readonly role: string;
  readonly runId: number;
  readonly agent: string | null;
  readonly db: string;
}

const KEYS: Readonly<Record<keyof AgentValues, string>> = {
  epic: 'SPRINGFIELD_EPIC',
  step: 'SPRINGFIELD_STEP',
  plan: 'SPRINGFIELD_PLAN',
  worktree: 'SPRINGFIELD_WORKTREE',
  claimToken: 'SPRINGFIELD_CLAIM_TOKEN',
  contextFile: 'SPRINGFIELD_CONTEXT_FILE',
  role: 'SPRINGFIELD_ROLE',
  runId: 'SPRINGFIELD_RUN_ID',
  agent: 'SPRINGFIELD_AGENT',
  db: 'SPRINGFIELD_DB',
};

/** True for variables an editor leaks into child processes (they make Electron's node act oddly). */
export function isEditorVariable(key: string): boolean {
  return key === 'ELECTRON_RUN_AS_NODE' || key.startsWith('VSCODE_');
}

/**
 * The agent's environment: `base` without editor variables, with every SPRINGFIELD_* value of this
 * run set, and those that do not apply removed, so a nested run never inherits a stale claim token.
 * `PWD` is the worktree the agent runs in: many CLIs take their folder from `$PWD`, not from the
 * process's working directory, and the one inherited is the launcher's (docs/agents.md).
 */
export function agentEnv(base: NodeJS.ProcessEnv, values: AgentValues): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) {
    if (!isEditorVariable(key) && value !== undefined) env[key] = value;
  }
  for (const [field, key] of Object.entries(KEYS) as [keyof AgentValues, string][]) {
    const value = values[field];
    if (value === null) delete env[key];
    else env[key] = String(value);
  }
  env.PWD = values.worktree;
  return env;
}

/**
 * True when an agent command runs `runtime` itself and that runtime is an editor's Electron (the demo
 * agents the editor configures: its runtime running the stand-in's bundle). Electron runs a script
 * only as Node, so that agent alone keeps ELECTRON_RUN_AS_NODE=1, which agentEnv removes for any other.
 */
export function runsEditorRuntime(program: string | undefined, runtime: string, electron: boolean): boolean {
  if (!electron || !program) return false;
  try {
    return realpathSync(program) === realpathSync(runtime);
  } catch {
    return false;
  }
}
