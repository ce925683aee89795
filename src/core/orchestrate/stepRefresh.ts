/**
 * Before a builder starts on a step, files-aware scheduling brings the epic's branch up to the
 * default branch when that branch changed the step's files since the epic left it (another epic
 * merged there), so the step is built on top of that work rather than beside it (docs/files.md).
 */
import { CommitMemo } from '../git/commitMemo.ts';
import { gitOutAsync, gitRunAsync } from '../git/exec.ts';
import { readHead } from '../git/head.ts';
import { sharedFile } from '../scheduler/fileGlobs.ts';
import { defaultBranch } from './conflictsAhead.ts';
import { messageOf } from '../../shared/errorMessage.ts';
import { rebaseOntoMain, type Resolving } from './merge.ts';
import type { Resolution } from '../git/rebaseResolve.ts';

/** What happened: nothing to do, rebased (naming a file the default branch changed), or a rebase that would conflict (aborted). */
export type Refresh =
  | { readonly kind: 'current' }
  | {
      readonly kind: 'rebased';
      readonly file: string;
      readonly onto: string;
      readonly resolutions: readonly Resolution[];
    }
  | { readonly kind: 'conflict'; readonly reason: string };

/** Where an epic's branch left main, by the two commits (every step asks; main seldom moves). */
const mergeBases = new CommitMemo<string>();

/** Rebases the epic's worktree onto the default branch when it changed a file of `stepFiles` since their merge base. */
export async function refreshForStep(
  mainRoot: string,
  worktree: string,
  stepFiles: readonly string[],
  resolving?: Resolving,
): Promise<Refresh> {
  const main = defaultBranch(mainRoot);
  if (!main || stepFiles.length === 0) return { kind: 'current' };
  const head = readHead(worktree, process.env)?.commit ?? 'HEAD';
  const mergeBase = await mergeBases.get([head, main.commit], async () => {
    const base = await gitRunAsync(worktree, ['merge-base', head, main.commit], process.env);
    return base.status === 0 && base.stdout.trim() !== '' ? base.stdout.trim() : null;
  });
  if (mergeBase === null || mergeBase === main.commit) return { kind: 'current' };
  const moved = (
    await gitOutAsync(
      worktree,
      ['diff', '--name-only', '-z', '--no-renames', mergeBase, main.commit, '--'],
      process.env,
    )
  )
    .split('\0')
    .filter(Boolean);
  const file = sharedFile(stepFiles, moved);
  if (!file) return { kind: 'current' };
  try {
    const r = await rebaseOntoMain(mainRoot, worktree, resolving);
    return { kind: 'rebased', file, onto: main.name, resolutions: r.resolutions };
  } catch (err) {
    return { kind: 'conflict', reason: messageOf(err) };
  }
}
