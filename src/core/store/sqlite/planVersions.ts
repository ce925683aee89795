import { RefusedError, UsageError } from '../../errors.ts';
import { describeDrift, planHash, planStructure, type PlanStructure } from '../../plan/hash.ts';
import { initPlan } from './initPlan.ts';
import { findPlan, initialisedStructure, writeEvent } from './rows.ts';
import type { Database } from './sqlite.ts';
import type { Actor } from '../types.ts';
import { COMPLEXITY_POLICY } from '../../epics/complexity.ts';
import { applyEpicEvent, getEpic } from './epics.ts';
import { epicVerification } from './schedulerSnapshot.ts';
import { completionHold } from '../../epics/completion.ts';
import type { EpicRow, TransitionOutcome } from '../epicTypes.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { ApproveResult, PlanVersionRow, ProposedPlan, ProposeResult } from '../epicTypes.ts';

/** Records a new plan version for an epic in `planned` or `blocked`; older proposals are superseded. */
export function proposePlan(db: Database, now: string, epicId: string, plan: ProposedPlan, actor: Actor): ProposeResult {
  const epic = getEpic(db, epicId);
  if (epic.status !== 'planned' && epic.status !== 'blocked') {
    throw new RefusedError('invalid_transition', `cannot propose a plan for ${epicId}: it is ${epic.status} (plans are proposed while planned or blocked)`);
  }
  const owner = findPlan(db, plan.planPath)?.epic_id ?? (db.prepare('SELECT epic_id FROM plan_versions WHERE plan_path = ? LIMIT 1').pluck().get(plan.planPath) as string | undefined);
  if (owner && owner !== epicId) throw new RefusedError('plan_owned', `${plan.planPath} belongs to epic ${owner}; a plan belongs to one epic`);
  const budget = COMPLEXITY_POLICY[epic.complexity].planIterations;
  if (epic.plan_iteration >= budget) {
    throw new RefusedError('plan_budget_exhausted', `${epicId} has used its ${budget} planning iterations (${epic.complexity}); defer it or raise its complexity`);
  }
  const previous = latestVersion(db, epicId);
  const version = (previous?.version ?? 0) + 1;
  const structure = planStructure(plan.plan);
  const hash = planHash(plan.plan);
  db.prepare(`UPDATE plan_versions SET status = 'superseded', decided_at = ? WHERE epic_id = ? AND status = 'proposed'`).run(now, epicId);
  db.prepare(`INSERT INTO plan_versions (epic_id, plan_path, version, plan_hash, structure, body, status, proposed_by, proposed_agent, created_at)
    VALUES (?, ?, ?, ?, ?, ?, 'proposed', ?, ?, ?)`)
    .run(epicId, plan.planPath, version, hash, JSON.stringify(structure), plan.body, actor.worktree, actor.agent, now);
  db.prepare('UPDATE epics SET plan_iteration = plan_iteration + 1, updated_at = ? WHERE id = ?').run(now, epicId);
  const changes = previous ? describeDrift(JSON.parse(previous.structure) as PlanStructure, structure) : [];
  writeEvent(db, now, actor, { entity: 'plan_version', action: 'propose', epicId, planPath: plan.planPath, to: 'proposed', data: { version, plan_hash: hash, changes } });
  return { proposed: true, epic_id: epicId, plan_path: plan.planPath, version, plan_hash: hash, changes_since_previous: changes, plan_iteration: epic.plan_iteration + 1 };
}

export function latestVersion(db: Database, epicId: string): PlanVersionRow | undefined {
  return db.prepare('SELECT * FROM plan_versions WHERE epic_id = ? ORDER BY version DESC LIMIT 1').get(epicId) as PlanVersionRow | undefined;
}

export function listVersions(db: Database, epicId: string): PlanVersionRow[] {
  getEpic(db, epicId);
  return db.prepare('SELECT * FROM plan_versions WHERE epic_id = ? ORDER BY version').all(epicId) as PlanVersionRow[];
}

/** The proposed version to decide on: the given one, else the latest, which must be `proposed`. */
export function pendingVersion(db: Database, epicId: string, version?: number): PlanVersionRow {
  getEpic(db, epicId);
  const row = version !== undefined
    ? db.prepare('SELECT * FROM plan_versions WHERE epic_id = ? AND version = ?').get(epicId, version) as PlanVersionRow | undefined
    : db.prepare(`SELECT * FROM plan_versions WHERE epic_id = ? AND status = 'proposed' ORDER BY version DESC LIMIT 1`).get(epicId) as PlanVersionRow | undefined;
  if (!row) {
    throw version !== undefined
      ? new UsageError('unknown_version', `${epicId} has no plan version ${version}`)
      : new RefusedError('no_proposed_plan', `${epicId} has no plan waiting for approval (propose one with 'springfield plan propose ${epicId} <plan.md>')`);
  }
  if (row.status !== 'proposed') throw new RefusedError('not_proposed', `version ${row.version} of ${epicId}'s plan is ${row.status}, not proposed`);
  return row;
}

/**
 * Approves a proposed version: the file must still have the proposed structure; initialises the
 * plan's steps for the epic and moves the epic to ready. Never by the agent that proposed it.
 */
export function approvePlan(db: Database, now: string, epicId: string, current: PlanSource, actor: Actor, version?: number): ApproveResult {
  const row = pendingVersion(db, epicId, version);
  if (row.proposed_agent !== null && actor.agent === row.proposed_agent) {
    throw new RefusedError('self_approval', `${actor.agent} proposed version ${row.version}; a planner never approves its own plan`);
  }
  if (current.planPath !== row.plan_path) throw new UsageError('wrong_plan', `version ${row.version} of ${epicId} is ${row.plan_path}, not ${current.planPath}`);
  if (planHash(current.plan) !== row.plan_hash) {
    const changes = describeDrift(JSON.parse(row.structure) as PlanStructure, planStructure(current.plan));
    throw new RefusedError('plan_drift', `${row.plan_path} changed since version ${row.version} was proposed (${changes.slice(0, 3).join('; ')}); propose it again`);
  }
  const epic = getEpic(db, epicId);
  const event = epic.status === 'blocked' ? 'new_plan_approved' : 'plan_approved';
  const init = initPlan(db, now, current, actor, true, epicId);
  db.prepare(`UPDATE plan_versions SET status = 'approved', decided_by = ?, decided_at = ? WHERE id = ?`).run(actor.worktree, now, row.id);
  writeEvent(db, now, actor, { entity: 'plan_version', action: 'approve', epicId, planPath: row.plan_path, from: 'proposed', to: 'approved', data: { version: row.version, plan_hash: row.plan_hash } });
  const outcome = applyEpicEvent(db, now, epicId, event, actor, `plan version ${row.version} approved`);
  return { approved: true, epic_id: epicId, plan_path: row.plan_path, version: row.version, plan_hash: row.plan_hash, init, transition: outcome };
}

/** Sends a proposed version back to the planner with feedback, which `context` shows on her next run. */
export function requestChanges(db: Database, now: string, epicId: string, feedback: string, actor: Actor, version?: number): PlanVersionRow {
  if (feedback.trim() === '') throw new UsageError('missing_value', 'request-changes needs --feedback TEXT');
  const row = pendingVersion(db, epicId, version);
  db.prepare(`UPDATE plan_versions SET status = 'changes_requested', feedback = ?, decided_by = ?, decided_at = ? WHERE id = ?`).run(feedback.trim(), actor.worktree, now, row.id);
  writeEvent(db, now, actor, { entity: 'plan_version', action: 'request_changes', epicId, planPath: row.plan_path, from: 'proposed', to: 'changes_requested', reason: feedback.trim(), data: { version: row.version } });
  return { ...row, status: 'changes_requested', feedback: feedback.trim(), decided_by: actor.worktree, decided_at: now };
}

/**
 * Discards a proposed version and sets the epic aside (deferred, with the reason, in the debt
 * register): no planner starts for it again until a person resumes it.
 */
export function discardPlan(db: Database, now: string, epicId: string, actor: Actor, version?: number, reason: string | null = null): PlanVersionRow & { transition: TransitionOutcome } {
  const row = pendingVersion(db, epicId, version);
  db.prepare(`UPDATE plan_versions SET status = 'discarded', feedback = COALESCE(?, feedback), decided_by = ?, decided_at = ? WHERE id = ?`).run(reason, actor.worktree, now, row.id);
  writeEvent(db, now, actor, { entity: 'plan_version', action: 'discard', epicId, planPath: row.plan_path, from: 'proposed', to: 'discarded', reason, data: { version: row.version } });
  const transition = applyEpicEvent(db, now, epicId, 'plan_discarded', actor, `plan v${row.version} discarded${reason ? `: ${reason}` : ' (no reason given)'}`);
  return { ...row, status: 'discarded', decided_by: actor.worktree, decided_at: now, transition };
}

/** The approved version whose steps are live, if any. */
export function approvedVersion(db: Database, epic: EpicRow): PlanVersionRow | undefined {
  return db.prepare(`SELECT * FROM plan_versions WHERE epic_id = ? AND status = 'approved' ORDER BY version DESC LIMIT 1`).get(epic.id) as PlanVersionRow | undefined;
}

/**
 * Starts an approved epic (ready → in_progress): refused unless its plan file still has the
 * approved structure, so no builder works from a drifted plan.
 */
export function startEpic(db: Database, now: string, epicId: string, current: PlanSource, actor: Actor): TransitionOutcome {
  const epic = getEpic(db, epicId);
  const version = approvedVersion(db, epic);
  if (!version) throw new RefusedError('no_approved_plan', `${epicId} has no approved plan; approve one with 'springfield plan approve ${epicId}'`);
  if (current.planPath !== version.plan_path) throw new UsageError('wrong_plan', `${epicId}'s approved plan is ${version.plan_path}, not ${current.planPath}`);
  const live = findPlan(db, version.plan_path);
  if (!live || planHash(current.plan) !== live.plan_hash) {
    const changes = describeDrift(live ? initialisedStructure(db, live.plan_path) : JSON.parse(version.structure) as PlanStructure, planStructure(current.plan));
    throw new RefusedError('plan_drift', `${version.plan_path} differs from the approved plan (${changes.slice(0, 3).join('; ')}); restore it, or defer and resume the epic to propose and approve it again`);
  }
  return applyEpicEvent(db, now, epicId, 'start', actor, `started on approved plan ${version.plan_path} v${version.version}`);
}

/**
 * in_progress → implemented once every step of the epic's plan is completed and, when verification
 * is configured (by the caller's config, or in use: verifications recorded), it passed after the
 * latest build: the rule the scheduler completes by (completionHold, docs/state-machine.md).
 */
export function finishEpic(db: Database, now: string, epicId: string, actor: Actor, reason: string, verificationConfigured: boolean): TransitionOutcome {
  const epic = getEpic(db, epicId);
  const planPath = db.prepare('SELECT plan_path FROM plans WHERE epic_id = ? ORDER BY updated_at DESC LIMIT 1').pluck().get(epic.id) as string | undefined;
  if (!planPath) throw new RefusedError('no_approved_plan', `${epicId} has no plan`);
  const open = db.prepare(`SELECT anchor FROM steps WHERE plan_path = ? AND status != 'completed' ORDER BY step_index`).pluck().all(planPath) as string[];
  if (open.length > 0) throw new RefusedError('incomplete', `cannot finish ${epicId}: steps not completed: ${open.slice(0, 5).join(', ')}${open.length > 5 ? ', …' : ''}`);
  if (epic.status === 'in_progress') {
    const v = epicVerification(db, epicId);
    const hold = completionHold(verificationConfigured || v.recorded, v);
    if (hold === 'verification_failed') {
      const what = v.lastFailure ? `: ${v.lastFailure.command} exited ${v.lastFailure.exitCode ?? 'without a code'}` : '';
      throw new RefusedError(hold, `cannot finish ${epicId}: its latest verification failed${what}; a builder fixes it and the scheduler verifies again (springfield orchestrate)`);
    }
    if (hold === 'unverified') {
      throw new RefusedError(hold, `cannot finish ${epicId}: verification is configured and has not passed since its latest build; let the scheduler verify it (springfield orchestrate)`);
    }
  }
  return applyEpicEvent(db, now, epicId, 'steps_completed', actor, reason);
}

/**
 * How the plan file a builder would work from differs from the epic's approved, initialised plan:
 * the structural changes, or an empty list when it matches (ticked boxes and re-wrapped text are not drift).
 */
export function planDrift(db: Database, planPath: string, current: PlanSource): string[] {
  const live = findPlan(db, planPath);
  if (!live) return [`${planPath} is not initialised`];
  if (planHash(current.plan) === live.plan_hash) return [];
  const changes = describeDrift(initialisedStructure(db, planPath), planStructure(current.plan));
  return changes.length > 0 ? changes : ['structure changed'];
}

/** The path of the epic's initialised (approved) plan, or null before approval. */
export function livePlanPath(db: Database, epicId: string): string | null {
  return (db.prepare('SELECT plan_path FROM plans WHERE epic_id = ? ORDER BY updated_at DESC LIMIT 1').pluck().get(epicId) as string | undefined) ?? null;
}
