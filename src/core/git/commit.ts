import { isAbsolute, relative, sep } from 'node:path';
import { RefusedError, SpringfieldError, UsageError } from '../errors.ts';
import { completeStep } from '../store/sqlite/complete.ts';
import { findPlan, requireStep } from '../store/sqlite/rows.ts';
import type { Database } from '../store/sqlite/sqlite.ts';
import type { SqliteStore } from '../store/sqlite/sqliteStore.ts';
import type { Actor, CompleteResult, PlanSource } from '../store/types.ts';
import { ignoredPaths } from './checkIgnore.ts';
import { firstLine, gitFailure, gitOut, gitRun } from './exec.ts';
import { hasSpringfieldTrailer, trailerArgs } from './trailers.ts';

export interface TargetQuery {
  readonly step?: string;
  readonly planPath?: string;
  readonly worktree: string;
  readonly agent: string | null;
}

export interface CommitTarget {
  readonly planPath: string;
  readonly anchor: string;
}

export interface CommitStepInput {
  readonly store: SqliteStore;
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
  | { readonly state_update_failed: true; readonly state_error: { readonly code: string; readonly message: string } }
);

/**
 * Finds the step to commit: the named one (in the named plan, or the one plan that has it), else
 * the single top-level step this worktree holds. None or several is a usage error.
 */
export function resolveTarget(db: Database, q: TargetQuery): CommitTarget {
  if (q.step !== undefined) {
    if (q.planPath !== undefined) return { planPath: requireStep(db, q.planPath, q.step).plan_path, anchor: q.step };
    const plans = db.prepare('SELECT plan_path FROM steps WHERE anchor = ? ORDER BY plan_path').pluck().all(q.step) as string[];
    if (plans.length === 0) throw new UsageError('unknown_step', `no initialised plan has a step '${q.step}' (see 'springfield show')`);
    if (plans.length === 1) return { planPath: plans[0] as string, anchor: q.step };
    const held = heldSteps(db, q).filter((h) => plans.includes(h.plan_path) && (h.anchor === q.step || h.has_substep === 1));
    if (held.length === 1) return { planPath: (held[0] as HeldRow).plan_path, anchor: q.step };
    throw new UsageError('ambiguous_step', `several plans have a step '${q.step}' (${plans.join(', ')}): pass --plan PATH`);
  }
  const held = heldSteps(db, q).filter((h) => q.planPath === undefined || h.plan_path === q.planPath);
  if (held.length === 1) return { planPath: (held[0] as HeldRow).plan_path, anchor: (held[0] as HeldRow).anchor };
  const where = q.planPath ? ` in ${q.planPath}` : '';
  if (held.length === 0) throw new UsageError('no_claimed_step', `${q.worktree} holds no claimed step${where}: claim one first, or pass --step ANCHOR`);
  const list = held.map((h) => `${h.plan_path} ${h.anchor}`).join(', ');
  throw new UsageError('ambiguous_step', `${q.worktree} holds ${held.length} steps${where} (${list}): pass --step ANCHOR${q.planPath ? '' : ' and --plan PATH'}`);
}

interface HeldRow {
  plan_path: string;
  anchor: string;
  has_substep: number;
}

function heldSteps(db: Database, q: TargetQuery): HeldRow[] {
  return db.prepare(`SELECT s.plan_path, s.anchor,
      EXISTS (SELECT 1 FROM steps c WHERE c.plan_path = s.plan_path AND c.parent_anchor = s.anchor AND c.anchor = @step) AS has_substep
    FROM steps s WHERE s.parent_anchor IS NULL AND s.claimed_by = @wt AND s.status IN ('claimed', 'in_progress')
      AND (s.claimed_agent IS NULL OR @agent IS NULL OR s.claimed_agent = @agent)
    ORDER BY s.plan_path, s.step_index`).all({ wt: q.worktree, agent: q.agent, step: q.step ?? null }) as HeldRow[];
}

/**
 * Commits the worktree's changes with Springfield trailers, then completes the step. Everything
 * `complete` would refuse (not the holder, stale token, drift, open items) is refused before git
 * is touched; a state update that fails after a good commit is reported, not thrown.
 */
export async function commitStep(input: CommitStepInput): Promise<CommitStepResult> {
  const { store, source, anchor, actor } = input;
  if (input.message.trim() === '') throw new UsageError('missing_value', 'the commit message is empty');
  if (hasSpringfieldTrailer(input.message)) throw new UsageError('bad_message', 'the message must not carry Springfield-* trailers: commit adds them itself');
  const epicId = findPlan(store.db, source.planPath)?.epic_id ?? null;
  const trailers = trailerArgs({ step: anchor, plan: source.planPath, epic: epicId });
  const options = { forceReason: input.forceReason };
  const preview = await preflight(store, source, anchor, actor, options);
  if (preview.already_completed) {
    throw new RefusedError('already_completed', `${anchor} is already completed${preview.commit_hash ? ` by commit ${preview.commit_hash}` : ''}; nothing to commit for it`);
  }
  if (input.add) gitOut(input.cwd, ['add', '-A', '--', '.', ...excludeDatabase(input.cwd, store.location, input.env)], input.env);
  const diff = ['diff', '--cached', '--quiet'];
  const staged = gitRun(input.cwd, diff, input.env);
  if (staged.status === 0) throw new RefusedError('nothing_to_commit', `nothing to commit in ${input.cwd}${input.add ? '' : ' (nothing staged; --no-add)'}`);
  if (staged.status !== 1) throw gitFailure(input.cwd, diff, staged);
  const commit = gitRun(input.cwd, ['commit', '-q', '-m', input.message, ...trailers], input.env);
  if (commit.status !== 0) throw new RefusedError('commit_failed', `git commit failed: ${firstLine(commit.stderr) || firstLine(commit.stdout) || `exit ${commit.status}`}`);
  const hash = gitOut(input.cwd, ['rev-parse', 'HEAD'], input.env).trim();
  const base = { committed: true as const, commit_hash: hash, step_anchor: anchor, plan_path: source.planPath, epic_id: epicId };
  try {
    const r = await store.complete(source, anchor, actor, { commitHash: hash, forceReason: input.forceReason });
    const { step_anchor: _a, commit_hash: _c, ...rest } = r;
    return { ...base, state_update_failed: false, ...rest };
  } catch (err) {
    const known = err instanceof SpringfieldError;
    const state_error = { code: known ? err.code : 'internal_error', message: err instanceof Error ? err.message : String(err) };
    return { ...base, state_update_failed: true, state_error };
  }
}

class PreflightPassed {
  readonly result: CompleteResult;
  constructor(result: CompleteResult) {
    this.result = result;
  }
}

/** Runs `complete` inside a transaction that is always rolled back: the exact checks, nothing written. */
async function preflight(store: SqliteStore, source: PlanSource, anchor: string, actor: Actor, options: { forceReason: string | null }): Promise<CompleteResult> {
  try {
    await store.write((db, now) => {
      throw new PreflightPassed(completeStep(db, now, source, anchor, actor, options));
    });
  } catch (err) {
    if (err instanceof PreflightPassed) return err.result;
    throw err;
  }
  throw new Error('unreachable: preflight transaction committed');
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
