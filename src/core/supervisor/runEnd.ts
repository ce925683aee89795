/** What the supervisor works out about a run as it ends (docs/scheduler-faults.md). */
import { randomBytes } from 'node:crypto';
import { type Head, isAncestor, shortRef } from '../git/head.ts';
import type { AgentRunStart, Store } from '../store/index.ts';
import { messageOf } from '../../shared/errorMessage.ts';
import { makeCliShim, sweepCliShims } from '../runs/cliShim.ts';
import { pidAlive } from '../runs/processGroup.ts';

/** Why a stopped run ended: someone sent its supervisor a signal before its timeout. */
export function stoppedReason(signal: NodeJS.Signals): string {
  return `stopped by ${signal === 'SIGINT' ? 'Ctrl+C (SIGINT)' : signal} before its timeout: a person or the scheduler stopping ended it; nothing is counted against it`;
}

/**
 * Whether the store changed for the run's epic or plan since the last call: the stall watch's other
 * sign of life (an agent that ticks items quietly is working). The first call takes the mark.
 */
export function progressProbe(store: Store, epicId: string, planPath: string | null): () => Promise<boolean> {
  let mark: string | null = null;
  return async () => {
    const newest = async (q: { epicId?: string; planPath?: string }) =>
      (await store.events({ ...q, limit: 1 })).at(-1)?.id ?? 0;
    const now = `${await newest({ epicId })}:${planPath ? await newest({ planPath }) : 0}`;
    const moved = mark !== null && now !== mark;
    mark = now;
    return moved;
  };
}

/** A run must leave the epic's worktree on the branch it found it on; anything else is a fault (docs/scheduler-faults.md). */
export function branchFault(before: Head | null, after: Head | null): string | null {
  if (!before?.branch || !after) return null;
  if (after.branch === before.branch) return null;
  const now = after.branch ? `on ${shortRef(after.branch)}` : `detached at ${after.commit?.slice(0, 12) ?? '?'}`;
  return `left ${shortRef(before.branch)}: the worktree is now ${now} (the scheduler restores ${shortRef(before.branch)}; commits made there stay reachable)`;
}

/** Whether the run's step was completed by this run with a commit that is not on `branch`. */
export async function completedOffBranch(
  store: Store,
  p: AgentRunStart,
  worktree: string,
  branch: string,
  env: NodeJS.ProcessEnv,
): Promise<boolean> {
  if (!p.planPath || !p.stepAnchor || p.holder.token == null) return false;
  const step = await store.stepRecord(p.planPath ?? '', p.stepAnchor ?? '');
  if (step.status !== 'completed' || step.completed_token !== p.holder.token) return false;
  return step.commit_hash === null || !isAncestor(worktree, step.commit_hash, branch, env);
}

/**
 * A fresh folder with a `springfield` command (the argv `cli` gives) for this run under `parent`; null (with a
 * warning) when it cannot be made: the agent then needs `springfield` on its own PATH.
 */
export async function cliShimFor(
  store: Store,
  parent: string,
  cli: () => readonly string[],
  runId: number,
  warnings: string[],
): Promise<string | null> {
  try {
    // Folders of runs that ended without removing theirs (killed with SIGKILL) go first.
    const live = (await store.runs({ active: true, limit: 1000 }))
      .filter((r) => r.pid !== null && pidAlive(r.pid))
      .map((r) => r.id);
    sweepCliShims(parent, new Set([...live, runId]));
    return makeCliShim(
      parent,
      `${runId}-${randomBytes(4).toString('hex')}`,
      cli(),
      process.versions.electron !== undefined,
    );
  } catch (err) {
    warnings.push(`could not put springfield on the agent's PATH: ${messageOf(err)}`);
    return null;
  }
}

export function describeSpawnError(program: string, err: NodeJS.ErrnoException): { code: string; message: string } {
  if (err.code === 'ENOENT') return { code: 'command_not_found', message: `agent command not found: '${program}'` };
  if (err.code === 'EACCES')
    return { code: 'command_not_executable', message: `agent command is not executable: '${program}'` };
  return { code: 'spawn_failed', message: `cannot start agent command '${program}': ${err.message}` };
}
