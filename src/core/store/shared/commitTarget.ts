import type { CommitTarget, TargetQuery } from '../types.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import * as refuse from './refusals.ts';
import { requireStep } from './rows.ts';

/** A top-level step a worktree holds, and whether the step a commit names is one of its substeps. */
export interface HeldStep {
  readonly plan_path: string;
  readonly anchor: string;
  readonly has_substep: boolean | number;
}

export interface CommitTargetPort {
  /** The initialised plans that have a step `anchor`, by path. */
  plansWithStep(anchor: string): Io<string[]>;
  /** The top-level steps the query's worktree (on this host) holds for its agent, by plan and step order. */
  heldSteps(q: TargetQuery): Io<HeldStep[]>;
}

/**
 * Finds the step to commit: the named one (in the named plan, or the one plan that has it), else
 * the single top-level step this worktree holds. None or several is a usage error.
 */
export function* resolveTarget(port: StorePort, q: TargetQuery): Op<CommitTarget> {
  if (q.step !== undefined) {
    if (q.planPath !== undefined)
      return { planPath: (yield* requireStep(port, q.planPath, q.step)).plan_path, anchor: q.step };
    const plans = yield* call(port.plansWithStep(q.step));
    if (plans.length === 0) throw refuse.noPlanHasStep(q.step);
    if (plans.length === 1) return { planPath: plans[0] as string, anchor: q.step };
    const held = (yield* call(port.heldSteps(q))).filter(
      (h) => plans.includes(h.plan_path) && (h.anchor === q.step || Boolean(h.has_substep)),
    );
    if (held.length === 1) return { planPath: (held[0] as HeldStep).plan_path, anchor: q.step };
    throw refuse.stepInSeveralPlans(q.step, plans);
  }
  const held = (yield* call(port.heldSteps(q))).filter((h) => q.planPath === undefined || h.plan_path === q.planPath);
  if (held.length === 1) return { planPath: (held[0] as HeldStep).plan_path, anchor: (held[0] as HeldStep).anchor };
  if (held.length === 0) throw refuse.noClaimedStep(q.worktree, q.planPath);
  throw refuse.severalHeldSteps(q.worktree, q.planPath, held);
}
