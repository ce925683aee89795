/**
 * Plan versions and approval (docs/lifecycle.md): a planner proposes versions of an epic's plan, a
 * person approves one (which initialises its steps), asks for changes or discards it; the approved
 * version starts the epic, and the epic is finished once its steps are done and verified.
 */
import { COMPLEXITY_POLICY } from '../../epics/complexity.ts';
import { completionHold } from '../../epics/completion.ts';
import { describeDrift, planHash, planStructure, type PlanStructure } from '../../plan/hash.ts';
import type { PlanSource } from '../../plan/types.ts';
import type {
  ApproveResult,
  PlanVersionRow,
  PlanVersionStatus,
  ProposedPlan,
  ProposeResult,
  TransitionOutcome,
} from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { epicVerification } from './epicVerification.ts';
import { applyEpicEvent, requireEpic } from './epics.ts';
import { initPlan } from './initPlan.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import * as refuse from './refusals.ts';

export interface PlanVersionsPort {
  /** The epic whose versions name the plan file, if any. */
  versionedPlanOwner(planPath: string): Io<string | undefined>;
  latestVersion(epicId: string): Io<PlanVersionRow | undefined>;
  listVersions(epicId: string): Io<PlanVersionRow[]>;
  /** The given version, else the latest proposed one. */
  proposedVersion(epicId: string, version?: number): Io<PlanVersionRow | undefined>;
  /** The latest approved version (whose steps are live). */
  approvedVersion(epicId: string): Io<PlanVersionRow | undefined>;
  /** Older proposals of the epic superseded by a new one. */
  supersedeProposals(epicId: string): Io<void>;
  insertVersion(
    epicId: string,
    plan: ProposedPlan,
    version: number,
    hash: string,
    structure: string,
    actor: Actor,
  ): Io<void>;
  bumpPlanIteration(epicId: string): Io<void>;
  /** A proposed version decided: its status, by whom, and the feedback when one is given (else the one it had). */
  decideVersion(id: number, status: PlanVersionStatus, by: string, feedback: string | null): Io<void>;
  /** The path of the epic's initialised (approved) plan. */
  livePlanPath(epicId: string): Io<string | null>;
  /** The plan's steps (and substeps) not completed, in step order. */
  openStepAnchors(planPath: string): Io<string[]>;
}

/** Records a new plan version for an epic in `planned` or `blocked` (its row locked: versions are numbered one at a time); older proposals are superseded. */
export function* proposePlan(port: StorePort, epicId: string, plan: ProposedPlan, actor: Actor): Op<ProposeResult> {
  const epic = yield* requireEpic(port, epicId, true);
  if (epic.status !== 'planned' && epic.status !== 'blocked') throw refuse.cannotPropose(epicId, epic.status);
  const owner =
    (yield* call(port.findPlan(plan.planPath)))?.epic_id ?? (yield* call(port.versionedPlanOwner(plan.planPath)));
  if (owner && owner !== epicId) throw refuse.planOwned(plan.planPath, owner);
  const budget = COMPLEXITY_POLICY[epic.complexity].planIterations;
  if (epic.plan_iteration >= budget) throw refuse.planBudgetExhausted(epicId, budget, epic.complexity);
  const previous = yield* call(port.latestVersion(epicId));
  const version = (previous?.version ?? 0) + 1;
  const structure = planStructure(plan.plan());
  const hash = planHash(plan.plan());
  yield* call(port.supersedeProposals(epicId));
  yield* call(port.insertVersion(epicId, plan, version, hash, JSON.stringify(structure), actor));
  yield* call(port.bumpPlanIteration(epicId));
  const changes = previous ? describeDrift(JSON.parse(previous.structure) as PlanStructure, structure) : [];
  yield* call(
    port.writeEvent(actor, {
      entity: 'plan_version',
      action: 'propose',
      epicId,
      planPath: plan.planPath,
      to: 'proposed',
      data: { version, plan_hash: hash, changes },
    }),
  );
  return {
    proposed: true,
    epic_id: epicId,
    plan_path: plan.planPath,
    version,
    plan_hash: hash,
    changes_since_previous: changes,
    plan_iteration: epic.plan_iteration + 1,
  };
}

export function* listVersions(port: StorePort, epicId: string): Op<PlanVersionRow[]> {
  yield* requireEpic(port, epicId);
  return yield* call(port.listVersions(epicId));
}

/** The proposed version to decide on: the given one, else the latest proposed; in a write (`lock`), its epic is locked first. */
export function* pendingVersion(port: StorePort, epicId: string, version?: number, lock = false): Op<PlanVersionRow> {
  yield* requireEpic(port, epicId, lock);
  const row = yield* call(port.proposedVersion(epicId, version));
  if (!row) throw version !== undefined ? refuse.unknownVersion(epicId, version) : refuse.noProposedPlan(epicId);
  if (row.status !== 'proposed') throw refuse.notProposed(epicId, row.version, row.status);
  return row;
}

/**
 * Approves a proposed version: the file must still have the proposed structure; initialises the
 * plan's steps for the epic and moves the epic to ready. Never by the agent that proposed it.
 */
export function* approvePlan(
  port: StorePort,
  epicId: string,
  current: PlanSource,
  actor: Actor,
  version?: number,
): Op<ApproveResult> {
  const row = yield* pendingVersion(port, epicId, version, true);
  if (row.proposed_agent !== null && actor.agent === row.proposed_agent)
    throw refuse.selfApproval(actor.agent, row.version);
  if (current.planPath !== row.plan_path)
    throw refuse.wrongVersionPlan(epicId, row.version, row.plan_path, current.planPath);
  if (planHash(current.plan()) !== row.plan_hash) {
    throw refuse.proposalDrift(
      row.plan_path,
      row.version,
      describeDrift(JSON.parse(row.structure) as PlanStructure, planStructure(current.plan())),
    );
  }
  const epic = yield* requireEpic(port, epicId);
  const event = epic.status === 'blocked' ? 'new_plan_approved' : 'plan_approved';
  const init = yield* initPlan(port, current, actor, true, epicId);
  yield* call(port.decideVersion(row.id, 'approved', actor.worktree, null));
  yield* call(
    port.writeEvent(actor, {
      entity: 'plan_version',
      action: 'approve',
      epicId,
      planPath: row.plan_path,
      from: 'proposed',
      to: 'approved',
      data: { version: row.version, plan_hash: row.plan_hash },
    }),
  );
  const outcome = yield* applyEpicEvent(port, epicId, event, actor, `plan version ${row.version} approved`);
  return {
    approved: true,
    epic_id: epicId,
    plan_path: row.plan_path,
    version: row.version,
    plan_hash: row.plan_hash,
    init,
    transition: outcome,
  };
}

/** Sends a proposed version back to the planner with feedback, which `context` shows on her next run. */
export function* requestChanges(
  port: StorePort,
  epicId: string,
  feedback: string,
  actor: Actor,
  version?: number,
): Op<PlanVersionRow> {
  if (feedback.trim() === '') throw refuse.missingFeedback();
  const row = yield* pendingVersion(port, epicId, version, true);
  yield* call(port.decideVersion(row.id, 'changes_requested', actor.worktree, feedback.trim()));
  yield* call(
    port.writeEvent(actor, {
      entity: 'plan_version',
      action: 'request_changes',
      epicId,
      planPath: row.plan_path,
      from: 'proposed',
      to: 'changes_requested',
      reason: feedback.trim(),
      data: { version: row.version },
    }),
  );
  return {
    ...row,
    status: 'changes_requested',
    feedback: feedback.trim(),
    decided_by: actor.worktree,
    decided_at: port.now,
  };
}

/**
 * Discards a proposed version and sets the epic aside (deferred, with the reason, in the debt
 * register): no planner starts for it again until a person resumes it.
 */
export function* discardPlan(
  port: StorePort,
  epicId: string,
  actor: Actor,
  version?: number,
  reason: string | null = null,
): Op<PlanVersionRow & { transition: TransitionOutcome }> {
  const row = yield* pendingVersion(port, epicId, version, true);
  yield* call(port.decideVersion(row.id, 'discarded', actor.worktree, reason));
  yield* call(
    port.writeEvent(actor, {
      entity: 'plan_version',
      action: 'discard',
      epicId,
      planPath: row.plan_path,
      from: 'proposed',
      to: 'discarded',
      reason,
      data: { version: row.version },
    }),
  );
  const transition = yield* applyEpicEvent(
    port,
    epicId,
    'plan_discarded',
    actor,
    `plan v${row.version} discarded${reason ? `: ${reason}` : ' (no reason given)'}`,
  );
  return { ...row, status: 'discarded', decided_by: actor.worktree, decided_at: port.now, transition };
}

/**
 * Starts an approved epic (ready → in_progress): refused unless its plan file still has the
 * approved structure, so no builder works from a drifted plan.
 */
export function* startEpic(port: StorePort, epicId: string, current: PlanSource, actor: Actor): Op<TransitionOutcome> {
  const epic = yield* requireEpic(port, epicId, true);
  const version = yield* call(port.approvedVersion(epic.id));
  if (!version) throw refuse.noApprovedPlan(epicId);
  if (current.planPath !== version.plan_path)
    throw refuse.wrongApprovedPlan(epicId, version.plan_path, current.planPath);
  const live = yield* call(port.findPlan(version.plan_path));
  if (!live || planHash(current.plan()) !== live.plan_hash) {
    const approved = live
      ? yield* call(port.initialisedStructure(live.plan_path))
      : (JSON.parse(version.structure) as PlanStructure);
    throw refuse.approvedDrift(version.plan_path, describeDrift(approved, planStructure(current.plan())));
  }
  return yield* applyEpicEvent(
    port,
    epicId,
    'start',
    actor,
    `started on approved plan ${version.plan_path} v${version.version}`,
  );
}

/**
 * in_progress → implemented once every step of the epic's plan is completed and, when verification
 * is configured (by the caller's config, or in use: verifications recorded), it passed after the
 * latest build: the rule the scheduler completes by (completionHold, docs/state-machine.md).
 */
export function* finishEpic(
  port: StorePort,
  epicId: string,
  actor: Actor,
  reason: string,
  verificationConfigured: boolean,
): Op<TransitionOutcome> {
  const epic = yield* requireEpic(port, epicId, true);
  const planPath = yield* call(port.livePlanPath(epic.id));
  if (!planPath) throw refuse.noPlan(epicId);
  const open = yield* call(port.openStepAnchors(planPath));
  if (open.length > 0) throw refuse.stepsNotCompleted(epicId, open);
  if (epic.status === 'in_progress') {
    const v = yield* epicVerification(port, epicId);
    const hold = completionHold(verificationConfigured || v.recorded, v);
    if (hold === 'verification_failed') throw refuse.verificationFailed(epicId, v.lastFailure);
    if (hold === 'unverified') throw refuse.unverified(epicId);
  }
  return yield* applyEpicEvent(port, epicId, 'steps_completed', actor, reason);
}

/**
 * How the plan file a builder would work from differs from the epic's approved, initialised plan:
 * the structural changes, or an empty list when it matches (ticked boxes and re-wrapped text are not drift).
 */
export function* changesSinceInit(port: StorePort, planPath: string, current: PlanSource): Op<string[]> {
  const live = yield* call(port.findPlan(planPath));
  if (!live) return [`${planPath} is not initialised`];
  if (planHash(current.plan()) === live.plan_hash) return [];
  const changes = describeDrift(yield* call(port.initialisedStructure(planPath)), planStructure(current.plan()));
  return changes.length > 0 ? changes : ['structure changed'];
}
