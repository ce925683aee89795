import type { WorktreeInfo } from '../maintenanceTypes.ts';

/** Directories a plan file may live in: the main worktree, then every linked worktree that still exists. */
export function planRoots(mainRoot: string | null, worktrees: readonly WorktreeInfo[]): string[] {
  const roots = mainRoot ? [mainRoot] : [];
  for (const w of worktrees) if (!w.bare && !w.missing && !roots.includes(w.path)) roots.push(w.path);
  return roots;
}
