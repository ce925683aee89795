import {
  configPathFor,
  epicHolds,
  loadRoleCommands,
  retryStatus,
  type RoleLimit,
  roleLimits,
  type RoleRetry,
  type Store,
  type Waiting,
} from '../core/index.ts';
import { str } from './args.ts';
import type { CliContext } from './cliContext.ts';

/** The store for the commands beyond steps: the same one `ctx.store` opens (kept while callers move over). */
export function planningStore(ctx: CliContext, mode: 'create' | 'write' | 'read'): Store {
  return ctx.store(mode);
}

/**
 * The roles of an epic that are backing off after failures, as the scheduler would see them now
 * (epic show, context). A bad configuration only costs this line: the command still answers.
 */
export async function retriesOf(ctx: CliContext, store: Store, epicId: string): Promise<RoleRetry[]> {
  try {
    return await retryStatus(
      store,
      epicId,
      loadRoleCommands(configPathFor(ctx.stateFile)),
      ctx.location.mainRoot ?? ctx.location.worktreeRoot ?? ctx.location.commonDir,
    );
  } catch {
    return [];
  }
}

/** Where this repository's epic worktrees go: `--worktrees`, else config.json's "worktreeRoot", else the default (undefined). */
export function worktreeLocation(ctx: CliContext): string | undefined {
  return str(ctx.args, 'worktrees') ?? loadRoleCommands(configPathFor(ctx.stateFile)).worktreeRoot;
}

/** The epic's roles whose preset is limited on this host (docs/agents.md, "Usage limits"); none for an epic at rest. */
export function limitsOf(ctx: CliContext, status: string): RoleLimit[] {
  if (status === 'done' || status === 'deferred' || status === 'blocked') return [];
  try {
    return roleLimits(loadRoleCommands(configPathFor(ctx.stateFile)), ctx.env);
  } catch {
    return [];
  }
}

/**
 * Why the scheduler would hold the epic back now (the person's queue, the machine, a slot, the daily
 * budget), in a pass's words; none for an epic at rest. A bad configuration only costs this line.
 */
export async function holdsOf(ctx: CliContext, store: Store, epicId: string, status: string): Promise<Waiting[]> {
  const mainRoot = ctx.location.mainRoot;
  if (!mainRoot || status === 'done' || status === 'deferred') return [];
  try {
    return await epicHolds(store, mainRoot, loadRoleCommands(configPathFor(ctx.stateFile)), epicId);
  } catch {
    return [];
  }
}
