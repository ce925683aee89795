import { existsSync, realpathSync } from 'node:fs';
import { gitOutAsync } from '../git/exec.ts';
import { branchExists } from '../git/status.ts';
import type { Actor, Store } from '../store/index.ts';
import { epicBranch, removeEmptyWorktreeFolder } from './epicWorktree.ts';
import { removePlanningWorktree } from './planningWorktree.ts';
import { archiveWorktree } from './setup.ts';
import { springfieldWorktrees, type SpringfieldWorktree } from './worktreeList.ts';
import { stopApp } from './apps.ts';
import { worktreeCommandEnv } from './worktreeEnv.ts';
import { releaseWorktreePorts, worktreeFacts } from './worktreePorts.ts';

export interface PruneOptions {
  readonly dryRun: boolean;
  /** Removes worktrees with uncommitted work too, recording this reason; never one with a live run. */
  readonly force: string | null;
  readonly archive: readonly (readonly string[])[];
  readonly archiveTimeoutMs: number;
  readonly location?: string;
  /** The config's ports and env map, for the archive commands' environment. */
  readonly config: {
    readonly ports: number;
    readonly env: Readonly<Record<string, string>>;
    readonly killGraceSeconds: number;
  };
  /** Called before a worktree is removed (the editor closes it in Source Control first). */
  readonly beforeRemove?: (path: string) => Promise<void>;
}

export interface PrunedWorktree {
  readonly path: string;
  readonly epic_id: string;
  readonly kind: 'epic' | 'planning';
  /** Why it went (or would go), from the list's `prunable`. */
  readonly reason: string;
  /** Whether its branch was deleted too: only an epic that is done (its work is on main). */
  readonly branch_deleted: boolean;
}

export interface KeptWorktree {
  readonly path: string;
  readonly epic_id: string;
  /** Why it stays. */
  readonly reason: string;
}

export interface WorktreePruneResult {
  readonly dry_run: boolean;
  readonly removed: PrunedWorktree[];
  readonly kept: KeptWorktree[];
}

/**
 * Removes the worktrees Springfield made whose epic is done, deferred or gone (docs/worktrees.md):
 * never one with a live run; one with uncommitted work only when forced with a reason; the archive
 * commands first (a failure keeps the worktree); the branch kept unless the epic is done.
 */
export async function pruneWorktrees(
  store: Store,
  mainRoot: string,
  actor: Actor | null,
  o: PruneOptions,
): Promise<WorktreePruneResult> {
  const all = await springfieldWorktrees(store, mainRoot, o.location);
  const removed: PrunedWorktree[] = [];
  const kept: KeptWorktree[] = [];
  for (const w of all) {
    const why = keepReason(w, o.force);
    if (why !== null) {
      kept.push({ path: w.path, epic_id: w.epic_id, reason: why });
      continue;
    }
    const reason = w.prunable as string;
    const deleteBranch = w.kind === 'epic' && w.status === 'done';
    if (o.dryRun) {
      removed.push({ path: w.path, epic_id: w.epic_id, kind: w.kind, reason, branch_deleted: deleteBranch });
      continue;
    }
    // An app started there is not work: it is stopped with its worktree.
    await stopApp(w.path, o.config.killGraceSeconds * 1000);
    if (w.kind === 'epic' && existsSync(w.path) && o.archive.length > 0) {
      const facts = await worktreeFacts(store, {
        epic: { id: w.epic_id, title: w.title },
        worktree: w.path,
        mainRoot,
        config: o.config,
        env: process.env,
      });
      const env = worktreeCommandEnv(process.env, facts);
      const failed = await archiveWorktree(w.path, o.archive, env, o.archiveTimeoutMs);
      if (failed) {
        kept.push({
          path: w.path,
          epic_id: w.epic_id,
          reason: `the archive command \`${failed.command}\` ${failed.timed_out ? 'timed out' : `exited ${failed.exit_code ?? '?'}`}`,
        });
        continue;
      }
    }
    const recorded = await recordedPath(store, w);
    await o.beforeRemove?.(w.path).catch(() => undefined);
    const branchDeleted = await removeOne(mainRoot, w, deleteBranch, o.location);
    if (recorded) await store.forgetEpicWorktree(w.epic_id, recorded);
    await releaseWorktreePorts(store, w.path, process.env);
    const forced =
      w.dirty > 0 ? ` (forced with ${w.dirty} uncommitted file${w.dirty === 1 ? '' : 's'}: ${o.force})` : '';
    if (actor && w.status !== null) {
      await store.recordWorktreeEvent(
        w.epic_id,
        actor,
        'prune',
        `${w.kind === 'planning' ? 'planning ' : ''}worktree ${w.path} removed: ${reason}${forced}`,
        {
          path: w.path,
          branch: w.branch,
          branch_deleted: branchDeleted,
          dirty: w.dirty,
          ...(w.dirty > 0 ? { force: o.force } : {}),
        },
      );
    }
    removed.push({
      path: w.path,
      epic_id: w.epic_id,
      kind: w.kind,
      reason: reason + forced,
      branch_deleted: branchDeleted,
    });
  }
  removeEmptyWorktreeFolder(mainRoot, o.location);
  return { dry_run: o.dryRun, removed, kept };
}

/** The path the store records for this epic worktree (git lists real paths), or null when it records another or none. */
async function recordedPath(store: Store, w: SpringfieldWorktree): Promise<string | null> {
  if (w.kind !== 'epic' || w.status === null) return null;
  const path = (await store.getEpic(w.epic_id)).worktree_path;
  return path && (path === w.path || (existsSync(path) && realpathSync(path) === w.path)) ? path : null;
}

/** Why a worktree stays, or null when prune may remove it. */
function keepReason(w: SpringfieldWorktree, force: string | null): string | null {
  if (w.live_runs > 0) return `${w.live_runs} agent run${w.live_runs === 1 ? ' is' : 's are'} working there`;
  if (w.prunable === null) return `its epic is ${w.status ?? 'worked on'}`;
  if (w.dirty > 0 && force === null)
    return `${w.dirty} uncommitted file${w.dirty === 1 ? '' : 's'}; commit or stash them, or prune with --force REASON`;
  return null;
}

async function removeOne(
  mainRoot: string,
  w: SpringfieldWorktree,
  deleteBranch: boolean,
  location?: string,
): Promise<boolean> {
  if (w.kind === 'planning') {
    await removePlanningWorktree(mainRoot, w.epic_id, location);
    return false;
  }
  const git = (args: readonly string[]): Promise<string> => gitOutAsync(mainRoot, args, process.env);
  if (existsSync(w.path)) await git(['worktree', 'remove', '--force', '--force', w.path]);
  await git(['worktree', 'prune']);
  const branch = w.branch ?? epicBranch(w.epic_id);
  if (deleteBranch && (await branchExists(mainRoot, branch, process.env))) {
    await git(['branch', '-D', branch]);
    return true;
  }
  return false;
}
