import { isEditorVariable } from '../runs/agentEnv.ts';

/** What a command run for an epic's worktree is told about it (docs/worktrees.md, "What commands are told"). */
export interface WorktreeFacts {
  readonly epicId: string;
  readonly title: string | null;
  readonly worktree: string;
  readonly mainRoot: string;
}

/**
 * The environment of setup, archive, verification and app commands in an epic's worktree: the
 * scheduler's own, less the editor host's variables and any SPRINGFIELD_ a parent set, plus the
 * epic's id and title, the worktree and the main worktree, so a setup can make a per-epic database.
 */
export function worktreeCommandEnv(base: NodeJS.ProcessEnv, facts: WorktreeFacts): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined && !isEditorVariable(k) && !k.startsWith('SPRINGFIELD_')) env[k] = v;
  env.SPRINGFIELD_EPIC = facts.epicId;
  env.SPRINGFIELD_WORKTREE = facts.worktree;
  env.SPRINGFIELD_MAIN_WORKTREE = facts.mainRoot;
  if (facts.title !== null) env.SPRINGFIELD_EPIC_TITLE = facts.title;
  env.PWD = facts.worktree;
  return env;
}
