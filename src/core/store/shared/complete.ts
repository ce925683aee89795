/**
 * Completing a step (docs/steps.md): strict (every item of the step and its substeps done) unless
 * forced with a reason, by its holder; substeps go with their parent. Re-completing as the same holder
 * is a no-op, so a retry after a crash or a lost reply is safe. PostgreSQL also completes a plain,
 * holder's completion in one statement (postgres/completeOne.ts), falling back to this operation.
 */
import type { PlanSource } from '../../plan/types.ts';
import type { Actor, CompleteOptions, CompleteResult } from '../types.ts';
import { call, type Io, type Op } from './op.ts';
import type { StepPort } from './port.ts';
import * as refuse from './refusals.ts';
import {
  assertHolder,
  holderName,
  requireClaim,
  requireCurrentPlan,
  requirePlan,
  type EventInput,
  type StepRow,
} from './rows.ts';

/** What a completion writes at its end. */
export interface Completion {
  readonly planPath: string;
  readonly anchor: string;
  readonly actor: Actor;
  /** The holder's token: the step is completed only while it still holds the claim with it. */
  readonly token: number;
  readonly commitHash: string | null;
  readonly forceReason: string | null;
  /** Its open substeps, completed with it. */
  readonly substeps: readonly string[];
  readonly event: EventInput;
  /** The plan's completion, written only when this completion leaves nothing in it open. */
  readonly planDone: EventInput;
}

export interface CompletePort {
  /** Open items of the step and of its unfinished substeps (in item order), and those substeps (in step order). */
  openWork(planPath: string, anchor: string): Io<{ items: refuse.OpenItem[]; substeps: string[] }>;
  /** A forced completion: every open item of the step and its substeps completed by the worktree; how many. */
  completeItems(planPath: string, anchor: string, worktree: string): Io<number>;
  /**
   * The completion's last call: its open substeps and the step itself, fenced by holder and token
   * (refused with claimChanged when the claim changed), its event; then the plan marked done, with its
   * event, when nothing in it is left open. PostgreSQL sends the writes with the COMMIT and marks the
   * plan in a transaction of its own after it (docs/postgres-design.md, "Concurrency").
   */
  finishCompletion(c: Completion): Io<{ remaining: number; planCompleted: boolean }>;
  /** The agent of the step's latest completion event (undefined when it has none). */
  completingAgent(planPath: string, anchor: string): Io<string | null | undefined>;
  /** Marks the plan done with `event` if nothing in it is open and it is not done yet; whether this call marked it (PostgreSQL: the call ends the transaction). */
  markPlanDone(actor: Actor, planPath: string, event: EventInput): Io<boolean>;
}

/** The plan's completion event, written with the completion of its last open step. */
export function planDoneEvent(planPath: string, anchor: string): EventInput {
  return {
    entity: 'plan',
    action: 'complete',
    planPath,
    from: 'active',
    to: 'done',
    reason: `last step ${anchor} completed`,
  };
}

/** Completes a step the actor holds, with its substeps: strict unless forced with a reason. */
export function* completeStep(
  port: StepPort,
  source: PlanSource,
  anchor: string,
  actor: Actor,
  options: CompleteOptions,
): Op<CompleteResult> {
  const plan = source.planPath;
  yield* requireCurrentPlan(port, source);
  const { step, owner } = yield* requireClaim(port, plan, anchor, true);
  if (step.status === 'completed') return yield* repeatCompletion(port, step, owner, actor);
  assertHolder(port.host, owner, actor, 'complete');
  const force = options.forceReason ?? null;
  const open = yield* call(port.openWork(plan, anchor));
  if (force === null && open.items.length > 0) throw refuse.incomplete(anchor, open.items);
  const commit = options.commitHash ?? null;
  const autoCompleted = force !== null ? yield* call(port.completeItems(plan, anchor, actor.worktree)) : 0;
  const done = yield* call(
    port.finishCompletion({
      planPath: plan,
      anchor,
      actor,
      token: owner.claim_token,
      commitHash: commit,
      forceReason: force,
      substeps: open.substeps,
      event: {
        entity: 'step',
        action: 'complete',
        planPath: plan,
        stepAnchor: anchor,
        from: step.status,
        to: 'completed',
        reason: force,
        data: {
          claim_token: owner.claim_token,
          commit_hash: commit,
          forced: force !== null,
          items_auto_completed: autoCompleted,
          substeps_completed: open.substeps,
        },
      },
      planDone: planDoneEvent(plan, anchor),
    }),
  );
  return completeResult(anchor, {
    commitHash: commit,
    forceReason: force,
    autoCompleted,
    already: false,
    planCompleted: done.planCompleted,
    remaining: done.remaining,
  });
}

/** A completion's result: one shape on every path that completes (this operation; on PostgreSQL also its one statement, or its lost reply looked up). */
export function completeResult(
  anchor: string,
  c: {
    readonly commitHash: string | null;
    readonly forceReason: string | null;
    readonly autoCompleted: number;
    readonly already: boolean;
    readonly planCompleted: boolean;
    readonly remaining: number;
  },
): CompleteResult {
  return {
    completed: true,
    step_anchor: anchor,
    commit_hash: c.commitHash,
    forced: c.forceReason !== null,
    force_reason: c.forceReason,
    incomplete_items_auto_completed: c.autoCompleted,
    already_completed: c.already,
    plan_completed: c.planCompleted,
    remaining_steps: c.remaining,
  };
}

/**
 * A repeat of a completion: a no-op success only for the holder that completed it (same host and
 * worktree, no other agent, the same token when one is given), exactly whom the first complete would
 * have let through.
 */
function* repeatCompletion(port: StepPort, step: StepRow, owner: StepRow, actor: Actor): Op<CompleteResult> {
  // The agent that completed it (recorded on its complete event), else the one that held the claim.
  const completer = (yield* call(port.completingAgent(step.plan_path, step.anchor))) ?? owner.claimed_agent;
  const agentMismatch = completer !== null && actor.agent !== null && completer !== actor.agent;
  const tokenMismatch = actor.token != null && actor.token !== step.completed_token;
  if (
    step.completed_by !== actor.worktree ||
    (step.completed_host ?? null) !== port.host ||
    agentMismatch ||
    tokenMismatch
  ) {
    const by =
      step.completed_by === null
        ? null
        : holderName(step.completed_host ?? null, step.completed_by, completer, port.host);
    throw refuse.completedByOther(step.anchor, by, step.completed_token);
  }
  const plan = yield* requirePlan(port, step.plan_path);
  const remaining = yield* call(port.countRemaining(step.plan_path));
  let done = plan.status === 'done';
  // The completion committed but the plan was not marked after it (on PostgreSQL, a server crash between
  // the two transactions, docs/postgres-design.md, "Concurrency"): the holder's retry marks it.
  if (!done && remaining === 0)
    done = yield* call(port.markPlanDone(actor, step.plan_path, planDoneEvent(step.plan_path, step.anchor)));
  return completeResult(step.anchor, {
    commitHash: step.commit_hash,
    forceReason: step.complete_reason,
    autoCompleted: 0,
    already: true,
    planCompleted: done,
    remaining,
  });
}

/** The plan marked done if nothing in it is open (after a completion that did not see it: docs/postgres-design.md, "Concurrency"); whether this marked it. */
export function* markPlanDone(port: StepPort, actor: Actor, planPath: string, anchor: string): Op<boolean> {
  return yield* call(port.markPlanDone(actor, planPath, planDoneEvent(planPath, anchor)));
}
