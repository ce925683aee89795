import { isAbsolute, relative, sep } from 'node:path';
import { type ErrorCode, RefusedError, SpringfieldError, UsageError } from '../errors.ts';
import type { Actor, CompleteResult, Store } from '../store/index.ts';
import { ignoredPaths } from './checkIgnore.ts';
import { firstLine, gitFailure, gitOut, gitRun } from './exec.ts';
import { hasSpringfieldTrailer, trailerArgs } from './trailers.ts';
import type { PlanSource } from '../plan/types.ts';
import { messageOf } from '../../shared/errorMessage.ts';

export interface CommitStepInput {
  readonly store: Store;
  readonly source: PlanSource;
  readonly anchor: string;
  readonly actor: Actor;
  readonly message: string;
  /** The worktree git runs in. */
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly add: boolean;
  readonly forceReason: string | null;
}

export type CommitStepResult = {
  readonly committed: true;
  readonly commit_hash: string;
  readonly step_anchor: string;
  readonly plan_path: string;
  readonly epic_id: string | null;
} & (
  | ({ readonly state_update_failed: false } & Omit<CompleteResult, 'step_anchor' | 'commit_hash'>)
  | {
      readonly state_update_failed: true;
      readonly state_error: { readonly code: ErrorCode | 'internal_error'; readonly message: string };
    }
);

/**
 * Commits the worktree's changes with Springfield trailers, then completes the step. Everything
 * `complete` would refuse (not the holder, stale token, drift, open items) is refused before git
 * is touched; a state update that fails after a good commit is reported, not thrown.
 */
export async function commitStep(input: CommitStepInput): Promise<CommitStepResult> {
  const { store, source, anchor, actor } = input;
  if (input.message.trim() === '') throw new UsageError('missing_value', 'the commit message is empty');
  if (hasSpringfieldTrailer(input.message))
    throw new UsageError('bad_message', 'the message must not carry Springfield-* trailers: commit adds them itself');
  // Everything `complete` checks, checked now with nothing written.
  const preview = await store.previewComplete(source, anchor, actor, { forceReason: input.forceReason });
  if (preview.already_completed) {
    throw new RefusedError(
      'already_completed',
      `${anchor} is already completed${preview.commit_hash ? ` by commit ${preview.commit_hash}` : ''}; nothing to commit for it`,
    );
  }
  const epicId = (await store.plan(source.planPath)).epic_id;
  const trailers = trailerArgs({ step: anchor, plan: source.planPath, epic: epicId });
  const dbFile = store.describe().file;
  if (input.add)
    gitOut(
      input.cwd,
      ['add', '-A', '--', '.', ...(dbFile ? excludeDatabase(input.cwd, dbFile, input.env) : [])],
      input.env,
    );
  const diff = ['diff', '--cached', '--quiet'];
  const staged = gitRun(input.cwd, diff, input.env);
  if (staged.status === 0)
    throw new RefusedError(
      'nothing_to_commit',
      `nothing to commit in ${input.cwd}${input.add ? '' : ' (nothing staged; --no-add)'}; if the step needs no change, complete it without a commit: springfield complete ${source.planPath} ${anchor}`,
    );
  if (staged.status !== 1) throw gitFailure(input.cwd, diff, staged);
  const commit = gitRun(input.cwd, ['commit', '-q', '-m', input.message, ...trailers], input.env);
  if (commit.status !== 0)
    throw new RefusedError(
      'commit_failed',
      `git commit failed: ${firstLine(commit.stderr) || firstLine(commit.stdout) || `exit ${commit.status}`}`,
    );
  const hash = gitOut(input.cwd, ['rev-parse', 'HEAD'], input.env).trim();
  const base = {
    committed: true as const,
    commit_hash: hash,
    step_anchor: anchor,
    plan_path: source.planPath,
    epic_id: epicId,
  };
  try {
    const r = await store.complete(source, anchor, actor, { commitHash: hash, forceReason: input.forceReason });
    const { step_anchor: _a, commit_hash: _c, ...rest } = r;
    return { ...base, state_update_failed: false, ...rest };
  } catch (err) {
    const known = err instanceof SpringfieldError;
    const state_error = { code: known ? err.code : ('internal_error' as const), message: messageOf(err) };
    return { ...base, state_update_failed: true, state_error };
  }
}

/** Pathspecs keeping the database (and its WAL files) out of `git add` when it sits unignored in the worktree. */
function excludeDatabase(cwd: string, dbPath: string, env: NodeJS.ProcessEnv): string[] {
  const rel = relative(cwd, dbPath);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return [];
  const files = ['', '-wal', '-shm', '-journal'].map((suffix) => (rel + suffix).split(sep).join('/'));
  // Excluding an ignored path would make `git add` fail.
  const ignored = new Set(ignoredPaths(cwd, files, env));
  return files.filter((f) => !ignored.has(f)).map((f) => `:(exclude,literal)${f}`);
}
