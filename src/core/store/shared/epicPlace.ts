import { epicElsewhereMessage } from './refusals.ts';

/**
 * Where an epic's steps are built (docs/lifecycle.md, "Where work happens"): in the epic's own
 * worktree, on its branch. A claim from any other worktree is refused with where to go instead,
 * unless that worktree is on the epic's branch too (a person may build there by choice). An epic
 * with no worktree yet (made by an older Springfield) sets no place.
 */
export interface EpicPlace {
  readonly id: string;
  readonly worktree_path: string | null;
  readonly branch: string | null;
}

/** Who claims: their worktree and the branch it is on (null when detached or unknown). */
export interface Claimer {
  readonly worktree: string;
  readonly branch?: string | null;
}

const short = (ref: string): string => ref.replace(/^refs\/heads\//, '');

/**
 * Where `claimer`'s claim on a step of `epic`'s plan belongs: where the claimer is, or (`elsewhere`)
 * the epic's own worktree. The store refuses a claim elsewhere (claimElsewhere); the editor makes it
 * for that worktree and offers to open it (src/extension/commands/flow.ts).
 */
export function claimPlace(epic: EpicPlace | null, claimer: Claimer): { worktree: string; elsewhere: boolean } {
  const here = { worktree: claimer.worktree, elsewhere: false };
  if (!epic?.worktree_path || claimer.worktree === epic.worktree_path) return here;
  if (epic.branch && claimer.branch && short(claimer.branch) === short(epic.branch)) return here;
  return { worktree: epic.worktree_path, elsewhere: true };
}

/** Why `claimer` may not claim a step of `epic`'s plan `planPath`, or null when it may. */
export function claimElsewhere(planPath: string, epic: EpicPlace | null, claimer: Claimer): string | null {
  if (!epic || !claimPlace(epic, claimer).elsewhere) return null;
  return epicElsewhereMessage(planPath, epic.id, epic.worktree_path ?? '', epic.branch ? short(epic.branch) : null);
}
