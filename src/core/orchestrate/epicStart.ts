import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadPlanSource } from '../plan/source.ts';
import type { Actor, Store, TransitionOutcome } from '../store/index.ts';
import { ensureEpicWorktree, type EpicWorktree } from './epicWorktree.ts';

export interface StartedEpic {
  readonly transition: TransitionOutcome;
  readonly worktree: EpicWorktree;
  /** The approved version whose text the branch carries. */
  readonly version: number | null;
}

/**
 * Starts an approved epic where its work will happen (docs/lifecycle.md, "Where work happens"): its
 * own worktree on branch `springfield/<epic>`, made (or reused) with the handoff and the approved
 * plan committed there, then ready → in_progress. The same for the scheduler and for a person
 * (`springfield epic start`, the editor's Start epic): a person's checkout never becomes an epic's.
 * A branch checked out in another worktree is refused, with where (the epic waits for it).
 */
export async function startEpicInWorktree(
  store: Store,
  mainRoot: string,
  epicId: string,
  actor: Actor,
  location?: string,
): Promise<StartedEpic> {
  const { livePlanPath: planPath, approved } = await store.epicPlans(epicId);
  if (!planPath) throw new Error(`${epicId} has no approved plan`);
  const worktree = await ensureEpicWorktree(mainRoot, epicId, location, approved ?? undefined);
  await store.setEpicWorktree(epicId, worktree.path, worktree.branch);
  // The plan as the branch has it (the approved text was just committed there), else the main worktree's file.
  const root = existsSync(join(worktree.path, planPath)) ? worktree.path : mainRoot;
  const transition = await store.startEpic(epicId, loadPlanSource(root, planPath), actor);
  return { transition, worktree, version: approved?.version ?? null };
}
