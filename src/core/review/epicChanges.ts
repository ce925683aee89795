import { handoffFileName } from '../epics/handoff.ts';
import { RefusedError } from '../errors.ts';
import { branchDiff, type BranchDiff } from '../git/branchDiff.ts';
import { epicBranch } from '../orchestrate/epicWorktree.ts';

/** An epic's changes as a person reviews them: its branch against the main worktree's branch, from their merge base. */
export interface EpicChanges extends BranchDiff {
  readonly epicId: string;
  readonly branch: string;
}

/**
 * What `springfield/<epic>` brings against the main worktree's `HEAD` (the branch its squash merge
 * lands on), without the handoff, which the merge leaves out (docs/lifecycle.md). Refused when the
 * epic has no branch: it has not started, or the branch went with its merge.
 */
export async function epicChanges(mainRoot: string, epicId: string, env: NodeJS.ProcessEnv): Promise<EpicChanges> {
  const branch = epicBranch(epicId);
  const diff = await branchDiff(mainRoot, branch, 'HEAD', env);
  if (!diff)
    throw new RefusedError(
      'not_reviewable',
      `${epicId} has no branch ${branch} to review (it has not started, or the branch went with its merge)`,
    );
  const handoff = handoffFileName(epicId);
  return { ...diff, epicId, branch, files: diff.files.filter((f) => f.path !== handoff) };
}
