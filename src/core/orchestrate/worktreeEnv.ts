import { isEditorVariable } from '../runs/agentEnv.ts';
import { expandAgentArgv } from '../runs/agentArgv.ts';
import { portVariables, type PortBlock } from './ports.ts';

/** What a command run for an epic's worktree is told about it (docs/worktrees.md, "What commands are told"). */
export interface WorktreeFacts {
  readonly epicId: string;
  readonly title: string | null;
  readonly worktree: string;
  readonly mainRoot: string;
  /** The worktree's reserved ports, if any. */
  readonly ports?: Pick<PortBlock, 'first' | 'count'> | null;
  /** The config's `env` map: set for every command, `$SPRINGFIELD_…` in a value replaced. */
  readonly env?: Readonly<Record<string, string>>;
}

/** The SPRINGFIELD_ variables of a worktree: its epic, title, paths and ports. */
export function worktreeVariables(facts: WorktreeFacts): Record<string, string> {
  return {
    SPRINGFIELD_EPIC: facts.epicId,
    ...(facts.title !== null ? { SPRINGFIELD_EPIC_TITLE: facts.title } : {}),
    SPRINGFIELD_WORKTREE: facts.worktree,
    SPRINGFIELD_WORKTREE_ID: facts.epicId,
    SPRINGFIELD_MAIN_WORKTREE: facts.mainRoot,
    ...portVariables(facts.ports ?? null),
  };
}

/** The config's `env` map with `$SPRINGFIELD_X` / `${SPRINGFIELD_X}` replaced from `vars` (nothing else is expanded; no shell). */
export function expandEnvMap(
  map: Readonly<Record<string, string>>,
  vars: Readonly<Record<string, string>>,
): Record<string, string> {
  const names = Object.keys(map);
  const values = expandAgentArgv(
    names.map((k) => map[k] as string),
    vars,
  );
  return Object.fromEntries(names.map((k, i) => [k, values[i] as string]));
}

/**
 * The environment of setup, archive, verification and app commands in an epic's worktree: the
 * scheduler's own, less the editor host's variables and any SPRINGFIELD_ a parent set, plus the
 * worktree's variables and the config's `env` map, so a setup can make a per-epic database.
 */
export function worktreeCommandEnv(base: NodeJS.ProcessEnv, facts: WorktreeFacts): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base))
    if (v !== undefined && !isEditorVariable(k) && !k.startsWith('SPRINGFIELD_')) env[k] = v;
  addWorktreeVariables(env, facts);
  env.PWD = facts.worktree;
  return env;
}

/** Sets the worktree's SPRINGFIELD_ variables and the config's `env` map (expanded from them) in `env`. */
export function addWorktreeVariables(env: NodeJS.ProcessEnv, facts: WorktreeFacts): NodeJS.ProcessEnv {
  const vars = worktreeVariables(facts);
  return Object.assign(env, expandEnvMap(facts.env ?? {}, vars), vars);
}
