/** Short facts about an epic, as its tree row and the Needs you list say them. No vscode here. */
import type { EpicRow } from '../../core/index.ts';

/** The one fact of a blocked epic: "Ralph failed 3 times in a row", "plan drift", "iteration budget exhausted". */
export function blockedFact(e: Pick<EpicRow, 'status_reason'>): string {
  const reason = e.status_reason ?? '';
  const failed = /^agent_failed: (.+? failed \d+ times in a row)/.exec(reason)?.[1];
  if (failed) return failed;
  return reason.split(':')[0]?.replace(/_/g, ' ') ?? '';
}

/**
 * Where a signal's place is in files (its comment thread, Decide, a Signals location): the file in
 * the epic's own worktree, whose branch was reviewed; the window's checkout once the epic has none
 * (merged, or its worktree pruned). Main's copy would not have the epic's changes at those lines.
 */
export function signalFilePath(
  epic: Pick<EpicRow, 'status' | 'worktree_path'> | undefined,
  file: string,
  windowRoot: string,
): string {
  const root = epic?.worktree_path && epic.status !== 'done' ? epic.worktree_path : windowRoot;
  return `${root.replace(/\/$/, '')}/${file}`;
}
