import { existsSync, readFileSync, rmSync } from 'node:fs';
import { replaceFile } from '../safeFiles.ts';
import { join } from 'node:path';
import { RefusedError } from '../errors.ts';
import { firstLine, gitOutAsync, gitRunAsync } from '../git/exec.ts';
import { isConflicted, worktreeStatus } from '../git/status.ts';
import { epicBranch } from './epicWorktree.ts';
import { handoffFileName } from '../epics/handoff.ts';
import { rebaseResolving, type Regenerate, type Resolution } from '../git/rebaseResolve.ts';

export interface MergeResult {
  readonly merged: true;
  readonly epic_id: string;
  readonly commit_hash: string;
  readonly branch: string;
  readonly trailers: number;
}

/**
 * Lovejoy's mechanical part: squash-merges `springfield/<epic>` into the main worktree's branch,
 * keeping every Springfield trailer of the branch's commits in the squash commit's message.
 * Refuses uncommitted tracked changes in the main worktree, and a branch that does not apply cleanly
 * (undoing only the merge's own changes), so nothing is lost or left half-done.
 */
/** Lovejoy's mechanical additions to the squash commit: the retrospective in the summary and in PLAN.md. */
export interface MergeNotes {
  readonly summary: (text: string) => string;
  readonly planMd: (text: string) => string | null;
}

/** Tracked files with uncommitted changes in the main worktree: a squash merge waits until there are none. */
export async function mainChanges(mainRoot: string): Promise<string[]> {
  return (await worktreeStatus(mainRoot, process.env))
    .filter((f) => f.index !== '?' && f.worktree !== '?')
    .map((f) => f.path);
}

export async function squashMerge(
  mainRoot: string,
  epicId: string,
  title: string,
  notes?: MergeNotes,
  body?: string,
): Promise<MergeResult> {
  const env = process.env;
  const git = (args: readonly string[]) => gitOutAsync(mainRoot, args, env);
  const branch = epicBranch(epicId);
  const tracked = await mainChanges(mainRoot);
  if (tracked.length > 0)
    throw new RefusedError(
      'main_dirty',
      `cannot merge ${epicId}: the main worktree has uncommitted changes (${tracked.slice(0, 3).join(', ')}); commit or stash them first — nothing was touched`,
    );
  await clearUntrackedCopies(mainRoot, branch, epicId);
  const log = await git([
    'log',
    `HEAD..${branch}`,
    '--format=%(trailers:key=Springfield-Step,key=Springfield-Plan,unfold)%x1e',
  ]);
  const trailers = [
    ...new Set(
      log.split('\x1e').flatMap((block) =>
        block
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => /^Springfield-(Step|Plan): /.test(l)),
      ),
    ),
  ];
  let failure: string | undefined;
  const merged = await gitRunAsync(mainRoot, ['merge', '--squash', branch], env);
  const conflicted = (await worktreeStatus(mainRoot, env)).filter(isConflicted).map((f) => f.path);
  if (conflicted.length > 0) failure = `conflicts in ${conflicted.slice(0, 3).join(', ')}`;
  else if (merged.status !== 0)
    failure = gitCause(merged.stderr) || firstLine(merged.stdout) || `exit ${merged.status}`;
  if (failure !== undefined) {
    // Only the merge's own changes are undone (there were no other tracked changes; untracked files stay).
    await gitRunAsync(mainRoot, ['reset', '--merge'], env);
    const current = (await gitRunAsync(mainRoot, ['symbolic-ref', '--short', '-q', 'HEAD'], env)).stdout.trim();
    // The true cause, in git's words: "rebase it" only where a rebase is the fix.
    const rebase = conflicted.length > 0 || /conflict/i.test(failure);
    throw new RefusedError(
      'merge_conflict',
      `${branch} does not merge into ${current || 'the main branch'}: ${failure}${rebase ? '; rebase it and verify again' : ''}`,
    );
  }
  // The handoff belongs to the epic's branch only (docs/lifecycle.md): the squash leaves it out.
  const handoff = handoffFileName(epicId);
  if ((await git(['diff', '--cached', '--name-only', '--diff-filter=A', '--', handoff])).trim() !== '') {
    await git(['rm', '-q', '--cached', '--', handoff]);
    rmSync(join(mainRoot, handoff), { force: true });
  }
  const staged = (await git(['diff', '--cached', '--name-only'])).trim();
  if (staged === '') throw new RefusedError('nothing_to_merge', `${branch} has no changes to merge`);
  if (notes) await addNotes(git, mainRoot, epicId, staged.split('\n'), notes);
  const args = ['commit', '-q', '-m', `${title} (${epicId})`, ...(body ? ['-m', body] : [])];
  args.push('--trailer', `Springfield-Epic: ${epicId}`);
  for (const t of trailers) args.push('--trailer', t);
  await git(args);
  const hash = (await git(['rev-parse', 'HEAD'])).trim();
  return { merged: true, epic_id: epicId, commit_hash: hash, branch, trailers: trailers.length };
}

/** Appends the retrospective to the staged summary and writes it beside the epic's id in PLAN.md (files replaced, never written through a link). */
async function addNotes(
  git: (args: readonly string[]) => Promise<string>,
  mainRoot: string,
  epicId: string,
  staged: readonly string[],
  notes: MergeNotes,
): Promise<void> {
  const summary = `SUMMARY-${epicId}.md`;
  if (staged.includes(summary) && existsSync(join(mainRoot, summary))) {
    replaceFile(join(mainRoot, summary), notes.summary(readFileSync(join(mainRoot, summary), 'utf8')));
    await git(['add', '--', summary]);
  }
  const tracked = (await git(['ls-files', '--', 'PLAN.md'])).trim() !== '';
  if (!tracked || !existsSync(join(mainRoot, 'PLAN.md'))) return;
  const text = readFileSync(join(mainRoot, 'PLAN.md'), 'utf8');
  const next = notes.planMd(text);
  if (next === null || next === text) return;
  replaceFile(join(mainRoot, 'PLAN.md'), next);
  await git(['add', '--', 'PLAN.md']);
}

/** git's message without its hints, the file list joined on one line (what is in the way, and where). */
function gitCause(message: string): string {
  const lines = message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('hint:'));
  return lines.slice(0, 4).join(' ').replace(/\s+/g, ' ').slice(0, 400);
}

/**
 * Files the branch adds that exist untracked in the main worktree would stop the merge: an identical
 * copy (the plan a planner proposed without committing it) is removed, since the merge brings it back
 * byte for byte; a different one is refused, so nothing a person wrote is lost.
 */
async function clearUntrackedCopies(mainRoot: string, branch: string, epicId: string): Promise<void> {
  const git = (args: string[]) => gitOutAsync(mainRoot, args, process.env);
  const added = (await git(['diff', '--name-only', '-z', '--diff-filter=A', `HEAD...${branch}`]))
    .split('\0')
    .filter(Boolean);
  if (added.length === 0) return;
  const untracked = new Set(
    (await git(['ls-files', '-z', '--others', '--exclude-standard'])).split('\0').filter(Boolean),
  );
  for (const file of added.filter((f) => untracked.has(f))) {
    const [mine, theirs] = await Promise.all([
      git(['hash-object', '--', file]),
      git(['rev-parse', `${branch}:${file}`]),
    ]);
    if (mine.trim() !== theirs.trim()) {
      throw new RefusedError(
        'main_untracked',
        `cannot merge ${epicId}: ${file} is untracked in the main worktree and differs from the epic's committed copy; move or commit it — nothing was touched`,
      );
    }
    rmSync(join(mainRoot, file));
  }
}

/** A rebase that met a real conflict (aborted: the branch is as it was), with what stopped it for whoever resolves it next. */
export class RebaseConflict extends RefusedError {
  readonly target: string;
  readonly files: readonly string[];
  readonly commit: string;
  readonly resolutions: readonly Resolution[];
  constructor(
    message: string,
    target: string,
    files: readonly string[],
    commit: string,
    resolutions: readonly Resolution[],
  ) {
    super('merge_conflict', message);
    this.target = target;
    this.files = files;
    this.commit = commit;
    this.resolutions = resolutions;
  }
}

/** How a rebase resolves what resolves itself: the config's regeneration commands and how to run one. */
export interface Resolving {
  /** false: nothing is resolved mechanically. */
  readonly mechanical?: boolean;
  readonly regenerate: readonly Regenerate[];
  readonly run: (argv: readonly string[]) => Promise<string | null>;
}

/** The config's `regenerate` map as a list, in its order. */
export function regenerateOf(config: {
  readonly regenerate?: Readonly<Record<string, readonly string[]>>;
}): Regenerate[] {
  return Object.entries(config.regenerate ?? {}).map(([glob, argv]) => ({ glob, argv }));
}

/**
 * The merge queue's check before landing: rebase the epic's branch onto the current main branch in
 * its worktree, so a green epic is never merged onto a main it was not tested against. Conflicts that
 * resolve themselves are resolved (rebaseResolve.ts) and returned; a real one is aborted and refused
 * (RebaseConflict), the branch as it was.
 */
export async function rebaseOntoMain(
  mainRoot: string,
  worktree: string,
  resolving: Resolving = { regenerate: [], run: () => Promise.resolve('no command may run here') },
): Promise<{ moved: boolean; before: string; target: string; resolutions: readonly Resolution[] }> {
  const env = process.env;
  const target = (await gitOutAsync(mainRoot, ['rev-parse', '--abbrev-ref', 'HEAD'], env)).trim() || 'HEAD';
  const head = async () => (await gitOutAsync(worktree, ['rev-parse', 'HEAD'], env)).trim();
  const before = await head();
  const r = await rebaseResolving(worktree, target, { ...resolving, env });
  if (r.kind === 'conflict') {
    const what =
      r.files.length > 0
        ? `conflicts in ${r.files.slice(0, 3).join(', ')}${r.files.length > 3 ? ` and ${r.files.length - 3} more` : ''}`
        : 'conflicts';
    throw new RebaseConflict(
      `rebasing onto ${target} ${what}: ${r.said}; resolve it in ${worktree}`,
      target,
      r.files,
      r.commit,
      r.resolutions,
    );
  }
  return { moved: (await head()) !== before, before, target, resolutions: r.resolutions };
}
