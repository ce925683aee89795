import type {
  CommitTrailer,
  ReconcileConflict,
  ReconciledStep,
  ReconcileOptions,
  ReconcileResult,
  UnknownTrailer,
} from '../maintenanceTypes.ts';
import type { Actor } from '../types.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import type { StepRow } from './rows.ts';

/** Who a completion is recorded for: the worktree (and, on PostgreSQL, host) and the claim token, each null when none. */
export interface Completer {
  readonly worktree: string | null;
  readonly host: string | null;
  readonly token: number | null;
}

export interface ReconcilePort {
  /**
   * Completes the unfinished substeps of `anchor` (with `reason`) and every open item of the step and
   * of those substeps, for `by`: how many items, and which substeps in step order.
   */
  completeOpenWork(
    planPath: string,
    anchor: string,
    by: Completer,
    reason: string,
  ): Io<{ items: number; substeps: string[] }>;
  /** Completes the step itself for `by` with the commit and the reason; its lease ends. */
  completeStepRow(planPath: string, anchor: string, by: Completer, hash: string, reason: string | null): Io<void>;
  setCommitHash(planPath: string, anchor: string, hash: string): Io<void>;
  /** Whether any step (or substep) of the plan is not completed. */
  hasOpenSteps(planPath: string): Io<boolean>;
}

/**
 * Applies commit trailers (newest first) to the store in one write: the newest commit per (plan, step)
 * completes the step; a different recorded hash wins unless forced. Each step is changed under its
 * claim's lock, as a completion is.
 */
export function* reconcileTrailers(
  port: StorePort,
  trailers: readonly CommitTrailer[],
  actor: Actor | null,
  options: ReconcileOptions,
): Op<ReconcileResult> {
  const result = {
    reconciled: [] as ReconciledStep[],
    conflicts: [] as ReconcileConflict[],
    unknown: [] as UnknownTrailer[],
    unchanged: 0,
    plans_completed: [] as string[],
  };
  const seen = new Set<string>();
  const touched = new Set<string>();
  for (const t of trailers) {
    const key = `${t.plan_path}\0${t.step_anchor}`;
    if (seen.has(key) || (options.planPath !== undefined && t.plan_path !== options.planPath)) continue;
    seen.add(key);
    if (!(yield* call(port.findPlan(t.plan_path)))) {
      result.unknown.push({
        plan_path: t.plan_path,
        step_anchor: t.step_anchor,
        commit_hash: t.commit_hash,
        reason: 'unknown_plan',
      });
      continue;
    }
    const claim = yield* call(port.findClaim(t.plan_path, t.step_anchor));
    if (!claim) {
      result.unknown.push({
        plan_path: t.plan_path,
        step_anchor: t.step_anchor,
        commit_hash: t.commit_hash,
        reason: 'unknown_step',
      });
      continue;
    }
    const { step, owner } = claim;
    if (step.status !== 'completed') {
      yield* completeFromGit(port, step, owner, t.commit_hash, actor);
      touched.add(step.plan_path);
      result.reconciled.push({
        plan_path: step.plan_path,
        step_anchor: step.anchor,
        commit_hash: t.commit_hash,
        from_status: step.status,
        previous_hash: step.commit_hash,
      });
      continue;
    }
    if (step.commit_hash !== null && sameCommit(step.commit_hash, t.commit_hash)) {
      result.unchanged++;
      continue;
    }
    const conflict = step.commit_hash !== null;
    if (conflict)
      result.conflicts.push({
        plan_path: step.plan_path,
        step_anchor: step.anchor,
        db_hash: step.commit_hash as string,
        git_hash: t.commit_hash,
        overwritten: options.force,
      });
    if (conflict && !options.force) continue;
    yield* call(port.setCommitHash(step.plan_path, step.anchor, t.commit_hash));
    yield* call(
      port.writeEvent(actor, {
        entity: 'step',
        action: 'reconcile',
        planPath: step.plan_path,
        stepAnchor: step.anchor,
        from: 'completed',
        to: 'completed',
        reason: conflict
          ? `--force: commit hash taken from git (was ${step.commit_hash})`
          : `commit hash recorded from git`,
        data: { commit_hash: t.commit_hash, previous_hash: step.commit_hash, forced: conflict },
      }),
    );
    result.reconciled.push({
      plan_path: step.plan_path,
      step_anchor: step.anchor,
      commit_hash: t.commit_hash,
      from_status: 'completed',
      previous_hash: step.commit_hash,
    });
  }
  for (const plan of touched) if (yield* finishPlan(port, plan, actor)) result.plans_completed.push(plan);
  return result satisfies ReconcileResult;
}

/** Completes a step git says landed, with its unfinished substeps and items; the holder (if any) keeps authorship. */
function* completeFromGit(port: StorePort, step: StepRow, claim: StepRow, hash: string, actor: Actor | null): Op<void> {
  const owner = step.parent_anchor ? claim : step;
  const holder = owner.claimed_by;
  const by: Completer = {
    worktree: holder ?? actor?.worktree ?? null,
    host: holder ? (owner.claimed_host ?? null) : actor ? port.host : null,
    token: holder ? owner.claim_token : null,
  };
  const short = `reconciled from commit ${hash.slice(0, 12)}`;
  const { items, substeps } = yield* call(port.completeOpenWork(step.plan_path, step.anchor, by, short));
  const reason = items > 0 || substeps.length > 0 ? `${short}: open items and substeps completed` : null;
  yield* call(port.completeStepRow(step.plan_path, step.anchor, by, hash, reason));
  yield* call(
    port.writeEvent(actor, {
      entity: 'step',
      action: 'reconcile',
      planPath: step.plan_path,
      stepAnchor: step.anchor,
      from: step.status,
      to: 'completed',
      reason: `commit ${hash} carries its trailers`,
      data: {
        commit_hash: hash,
        previous_hash: step.commit_hash,
        previous_holder: holder,
        items_auto_completed: items,
        substeps_auto_completed: substeps,
      },
    }),
  );
}

/** Marks a plan done when reconciliation completed its last step. */
function* finishPlan(port: StorePort, plan: string, actor: Actor | null): Op<boolean> {
  if (yield* call(port.hasOpenSteps(plan))) return false;
  const row = yield* call(port.findPlan(plan));
  if (!row || row.status === 'done') return false;
  yield* call(port.setPlanStatus(plan, 'done'));
  yield* call(
    port.writeEvent(actor, {
      entity: 'plan',
      action: 'complete',
      planPath: plan,
      from: row.status,
      to: 'done',
      reason: 'last steps completed by reconcile',
    }),
  );
  return true;
}

/** Hashes name the same commit when one is a prefix of the other (a recorded hash may be abbreviated). */
export function sameCommit(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x.startsWith(y) || y.startsWith(x);
}
