import type { Actor, FencedClaim, ReopenResult } from '../types.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import * as refuse from './refusals.ts';
import { requireClaim, type StepRow } from './rows.ts';

export interface ReopenPort {
  /** A completed substep back under its parent's live claim: the parent's status, holder, token and lease. */
  reopenUnderClaim(planPath: string, anchor: string, parent: StepRow): Io<void>;
  /** A completed step back to pending: its completion and claim cleared, its token bumped. */
  reopenToPending(planPath: string, anchor: string): Io<void>;
  /** The top-level steps (a substep's parent) whose step or substep depends on `anchor`. */
  dependentTops(planPath: string, anchor: string): Io<string[]>;
  /** A done plan active again: whether it was done. */
  reopenPlan(planPath: string): Io<boolean>;
}

/**
 * Admin: takes a completed step back to pending (a substep back to its parent's claim, or, when the
 * parent is completed too, both back to pending). Checklist items keep their state. Claimed steps
 * that depend on it now wait again, so their claims are reset and fenced (see docs/steps.md).
 */
export function* reopenStep(
  port: StorePort,
  plan: string,
  anchor: string,
  actor: Actor,
  reason: string,
): Op<ReopenResult> {
  const { step, owner } = yield* requireClaim(port, plan, anchor);
  if (step.status !== 'completed') throw refuse.notCompleted(anchor, step.status);
  const parent = step.parent_anchor ? owner : null;
  const reopened: StepRow[] = parent?.status === 'completed' ? [parent, step] : [step];
  let status = 'pending';
  if (parent && parent.status !== 'completed') {
    // A substep of a live claim goes back under that claim.
    status = parent.status;
    yield* call(port.reopenUnderClaim(plan, anchor, parent));
  } else {
    for (const s of reopened) yield* call(port.reopenToPending(plan, s.anchor));
  }
  const family = new Set(reopened.map((s) => s.parent_anchor ?? s.anchor));
  const fenced = yield* fenceDependents(
    port,
    plan,
    reopened.map((s) => s.anchor),
    family,
    actor,
    anchor,
  );
  const planReopened = yield* call(port.reopenPlan(plan));
  for (const s of reopened) {
    yield* call(
      port.writeEvent(actor, {
        entity: 'step',
        action: 'reopen',
        planPath: plan,
        stepAnchor: s.anchor,
        from: 'completed',
        to: s === step ? status : 'pending',
        reason,
        data: {
          previous_commit: s.commit_hash,
          previous_completer: s.completed_by,
          previous_token: s.completed_token,
          previous_reason: s.complete_reason,
          dependents_fenced: s === step ? fenced : undefined,
        },
      }),
    );
  }
  if (planReopened)
    yield* call(
      port.writeEvent(actor, {
        entity: 'plan',
        action: 'reopen',
        planPath: plan,
        from: 'done',
        to: 'active',
        reason: `${anchor} reopened: ${reason}`,
      }),
    );
  return {
    reopened: true,
    plan_path: plan,
    step_anchor: anchor,
    steps_reopened: reopened.map((s) => s.anchor),
    status,
    previous_commit: step.commit_hash,
    previous_completer: step.completed_by,
    dependents_fenced: fenced,
    plan_reopened: planReopened,
  };
}

/** Resets the claims of top-level steps (outside `family`) that depend, themselves or through a substep, on one of `anchors`. */
function* fenceDependents(
  port: StorePort,
  plan: string,
  anchors: readonly string[],
  family: ReadonlySet<string>,
  actor: Actor,
  cause: string,
): Op<FencedClaim[]> {
  const tops = new Set<string>();
  for (const a of anchors)
    for (const top of yield* call(port.dependentTops(plan, a))) if (!family.has(top)) tops.add(top);
  const fenced: FencedClaim[] = [];
  for (const top of tops) {
    const row = yield* call(port.findStep(plan, top, true));
    if (!row || (row.status !== 'claimed' && row.status !== 'in_progress')) continue;
    yield* call(port.releaseClaimRows(plan, top));
    const token = row.claim_token + 1;
    yield* call(
      port.writeEvent(actor, {
        entity: 'step',
        action: 'reset',
        planPath: plan,
        stepAnchor: top,
        from: row.status,
        to: 'pending',
        reason: `its dependency ${cause} was reopened`,
        data: { previous_holder: row.claimed_by, claim_token: row.claim_token, new_claim_token: token },
      }),
    );
    fenced.push({ step_anchor: top, previous_holder: row.claimed_by, claim_token: token });
  }
  return fenced;
}
