import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getEpic } from '../epics/epicStore.ts';
import { approvedVersion } from '../epics/planApproval.ts';
import type { SqliteStore } from '../store/sqliteStore.ts';
import { schedulerGit } from './git.ts';

/**
 * Builders never depend on another worktree's files: when the epic's worktree lacks its plan (a
 * planner wrote it, untracked, in the main worktree), the approved version's text from the store is
 * written and committed there. An identical untracked copy in the main worktree is removed, as the
 * handoff's is: it would block the merge that brings the committed plan back (docs/agents.md).
 */
export async function depositApprovedPlan(store: SqliteStore, mainRoot: string, worktree: string, epicId: string): Promise<boolean> {
  const version = await store.read((db) => approvedVersion(db, getEpic(db, epicId)));
  if (!version) return false;
  const target = join(worktree, version.plan_path);
  if (existsSync(target)) return false;
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, version.body, { flag: 'wx' });
  const wt = schedulerGit(worktree);
  await wt.add([version.plan_path]);
  await wt.commit(`Plan for ${epicId} (version ${version.version})`, [version.plan_path], { '--trailer': `Springfield-Epic: ${epicId}` });
  const inMain = join(mainRoot, version.plan_path);
  const tracked = (await schedulerGit(mainRoot).raw(['ls-files', '--', version.plan_path])).trim() !== '';
  if (!tracked && existsSync(inMain) && readFileSync(inMain, 'utf8') === version.body) rmSync(inMain);
  return true;
}
