import { existsSync, realpathSync } from 'node:fs';
import { readHead, shortRef } from '../git/head.ts';
import type { Role } from '../epics/transitions.ts';
import { ROLE_REGISTRY } from '../../shared/roles.ts';
import type { EpicPlace } from '../store/index.ts';
import { planningEpicOf } from './planningWorktree.ts';

const real = (p: string): string => (existsSync(p) ? realpathSync(p) : p);

/**
 * Why an agent of `role` for `epic` may not start in `worktree`, or null (docs/lifecycle.md, "Where
 * work happens"). Checked before any agent starts, by the scheduler and by `springfield run`: never
 * in the main worktree (a person's checkout); Lisa only in the epic's planning worktree; Ralph and
 * Bart only in the epic's own worktree, on its branch (or, on PostgreSQL across machines, another
 * worktree on that branch): each role's `worktree` in the role registry (src/shared/roles.ts).
 */
export function agentPlaceProblem(
  role: Role,
  epic: EpicPlace,
  worktree: string,
  mainRoot: string | null,
  env: NodeJS.ProcessEnv,
): string | null {
  const { name, does, worktree: place } = ROLE_REGISTRY[role];
  if (place === null) return null;
  const here = real(worktree);
  if (mainRoot && here === real(mainRoot))
    return `${name} would work on ${epic.id} in the main worktree ${mainRoot}, a person's checkout; agents work only in the epic's own worktree`;
  if (place === 'planning')
    return planningEpicOf(here) === epic.id
      ? null
      : `${name} ${does} ${epic.id} only in its planning worktree (made by the scheduler), not in ${worktree}`;
  const branch = readHead(here, env)?.branch ?? null;
  const wanted = epic.branch ? shortRef(epic.branch) : null;
  const onBranch = wanted !== null && branch !== null && shortRef(branch) === wanted;
  if (epic.worktree_path && here === real(epic.worktree_path)) {
    return onBranch || wanted === null
      ? null
      : `${worktree} is on ${branch ? shortRef(branch) : 'a detached HEAD'}, not ${wanted}: ${name} commits only on the epic's branch`;
  }
  if (onBranch) return null;
  return `${name} works on ${epic.id} only in its worktree ${epic.worktree_path ?? '(none yet: it gets one when the epic starts)'}${wanted ? ` on ${wanted}` : ''}, not in ${worktree}`;
}
