import { RefusedError, UsageError } from '../../errors.ts';
import { COMPLEXITY_POLICY } from '../../epics/complexity.ts';
import { describeDrift, planHash, planStructure, type PlanStructure } from '../../plan/hash.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { ApproveResult, EpicRow, PlanVersionRow, ProposedPlan, ProposeResult, TransitionOutcome } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { completionHold } from '../../epics/completion.ts';
import { applyEpicEvent, getEpic } from './epics.ts';
import { epicVerification } from './epicVerification.ts';
import { initPlan } from './initPlan.ts';
import { findPlan, opEvent, writeEvent } from './rows.ts';
import type { Tx } from './session.ts';

const VERSION_COLUMNS = `id, epic_id, plan_path, version, plan_hash, structure, body, status, feedback, proposed_by, proposed_agent, decided_by, created_at, decided_at`;

/** Records a new plan version for an epic in `planned` or `blocked` (its row locked: versions are numbered one at a time); older proposals are superseded. */
export async function proposePlan(tx: Tx, epicId: string, plan: ProposedPlan, actor: Actor): Promise<ProposeResult> {
  const epic = await getEpic(tx, epicId, true);
  if (epic.status !== 'planned' && epic.status !== 'blocked') {
    throw new RefusedError('invalid_transition', `cannot propose a plan for ${epicId}: it is ${epic.status} (plans are proposed while planned or blocked)`);
  }
  const owner = (await findPlan(tx, plan.planPath))?.epic_id
    ?? (await tx.q<{ epic_id: string }>('SELECT epic_id FROM plan_versions WHERE repo_id = $1 AND plan_path = $2 LIMIT 1', [tx.repo, plan.planPath]))[0]?.epic_id;
  if (owner && owner !== epicId) throw new RefusedError('plan_owned', `${plan.planPath} belongs to epic ${owner}; a plan belongs to one epic`);
  const budget = COMPLEXITY_POLICY[epic.complexity].planIterations;
  if (epic.plan_iteration >= budget) {
    throw new RefusedError('plan_budget_exhausted', `${epicId} has used its ${budget} planning iterations (${epic.complexity}); defer it or raise its complexity`);
  }
  const previous = await latestVersion(tx, epicId);
  const version = (previous?.version ?? 0) + 1;
  const structure = planStructure(plan.plan);
  const hash = planHash(plan.plan);
  await tx.q(`UPDATE plan_versions SET status = 'superseded', decided_at = $3 WHERE repo_id = $1 AND epic_id = $2 AND status = 'proposed'`, [tx.repo, epicId, tx.now]);
  await tx.q(`INSERT INTO plan_versions (repo_id, epic_id, plan_path, version, plan_hash, structure, body, status, proposed_by, proposed_agent, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, 'proposed', $8, $9, $10)`,
  [tx.repo, epicId, plan.planPath, version, hash, JSON.stringify(structure), plan.body, actor.worktree, actor.agent, tx.now]);
  await tx.q('UPDATE epics SET plan_iteration = plan_iteration + 1, updated_at = $3 WHERE repo_id = $1 AND id = $2', [tx.repo, epicId, tx.now]);
  const changes = previous ? describeDrift(JSON.parse(previous.structure) as PlanStructure, structure) : [];
  await writeEvent(tx, actor, { entity: 'plan_version', action: 'propose', epicId, planPath: plan.planPath, to: 'proposed', data: { version, plan_hash: hash, changes } });
  return { proposed: true, epic_id: epicId, plan_path: plan.planPath, version, plan_hash: hash, changes_since_previous: changes, plan_iteration: epic.plan_iteration + 1 };
}

/**
 * The version operation `op` proposed for `epicId` from this plan file, with these contents, for this
 * holder, rebuilt from its event; null when it committed none (its reply was lost: docs/postgres.md,
 * "Failures, retries, idempotence"). Its planning iteration is the epic's count of versions up to it (each proposal adds one).
 */
export async function findProposal(tx: Tx, op: string, epicId: string, plan: ProposedPlan, actor: Actor): Promise<ProposeResult | null> {
  const hash = planHash(plan.plan);
  const row = await opEvent(tx, op, actor, 'plan_version', 'propose', { epic_id: epicId, plan_path: plan.planPath, "data->>'plan_hash'": hash });
  if (!row) return null;
  const version = Number(row.data.version);
  const iteration = Number((await tx.q<{ n: number }>('SELECT count(*)::int AS n FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 AND version <= $3', [tx.repo, epicId, version]))[0]?.n);
  const changes = Array.isArray(row.data.changes) ? row.data.changes.map(String) : [];
  return { proposed: true, epic_id: epicId, plan_path: plan.planPath, version, plan_hash: hash, changes_since_previous: changes, plan_iteration: iteration };
}

async function latestVersion(tx: Tx, epicId: string): Promise<PlanVersionRow | undefined> {
  return (await tx.q<PlanVersionRow>(`SELECT ${VERSION_COLUMNS} FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 ORDER BY version DESC LIMIT 1`, [tx.repo, epicId]))[0];
}

export async function listVersions(tx: Tx, epicId: string): Promise<PlanVersionRow[]> {
  await getEpic(tx, epicId);
  return tx.q<PlanVersionRow>(`SELECT ${VERSION_COLUMNS} FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 ORDER BY version`, [tx.repo, epicId]);
}

/** The proposed version to decide on: the given one, else the latest proposed; in a write, its epic is locked first. */
export async function pendingVersion(tx: Tx, epicId: string, version?: number, lock = false): Promise<PlanVersionRow> {
  await getEpic(tx, epicId, lock);
  const row = (version !== undefined
    ? await tx.q<PlanVersionRow>(`SELECT ${VERSION_COLUMNS} FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 AND version = $3`, [tx.repo, epicId, version])
    : await tx.q<PlanVersionRow>(`SELECT ${VERSION_COLUMNS} FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 AND status = 'proposed' ORDER BY version DESC LIMIT 1`, [tx.repo, epicId]))[0];
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
export async function approvePlan(tx: Tx, epicId: string, current: PlanSource, actor: Actor, version?: number): Promise<ApproveResult> {
  const row = await pendingVersion(tx, epicId, version, true);
  if (row.proposed_agent !== null && actor.agent === row.proposed_agent) {
    throw new RefusedError('self_approval', `${actor.agent} proposed version ${row.version}; a planner never approves its own plan`);
  }
  if (current.planPath !== row.plan_path) throw new UsageError('wrong_plan', `version ${row.version} of ${epicId} is ${row.plan_path}, not ${current.planPath}`);
  if (planHash(current.plan) !== row.plan_hash) {
    const changes = describeDrift(JSON.parse(row.structure) as PlanStructure, planStructure(current.plan));
    throw new RefusedError('plan_drift', `${row.plan_path} changed since version ${row.version} was proposed (${changes.slice(0, 3).join('; ')}); propose it again`);
  }
  const epic = await getEpic(tx, epicId);
  const event = epic.status === 'blocked' ? 'new_plan_approved' : 'plan_approved';
  const init = await initPlan(tx, current, actor, true, epicId);
  await tx.q(`UPDATE plan_versions SET status = 'approved', decided_by = $2, decided_at = $3 WHERE id = $1`, [row.id, actor.worktree, tx.now]);
  await writeEvent(tx, actor, { entity: 'plan_version', action: 'approve', epicId, planPath: row.plan_path, from: 'proposed', to: 'approved', data: { version: row.version, plan_hash: row.plan_hash } });
  const outcome = await applyEpicEvent(tx, epicId, event, actor, `plan version ${row.version} approved`);
  return { approved: true, epic_id: epicId, plan_path: row.plan_path, version: row.version, plan_hash: row.plan_hash, init, transition: outcome };
}

/** Sends a proposed version back to the planner with feedback, which `context` shows on her next run. */
export async function requestChanges(tx: Tx, epicId: string, feedback: string, actor: Actor, version?: number): Promise<PlanVersionRow> {
  if (feedback.trim() === '') throw new UsageError('missing_value', 'request-changes needs --feedback TEXT');
  const row = await pendingVersion(tx, epicId, version, true);
  await tx.q(`UPDATE plan_versions SET status = 'changes_requested', feedback = $2, decided_by = $3, decided_at = $4 WHERE id = $1`, [row.id, feedback.trim(), actor.worktree, tx.now]);
  await writeEvent(tx, actor, { entity: 'plan_version', action: 'request_changes', epicId, planPath: row.plan_path, from: 'proposed', to: 'changes_requested', reason: feedback.trim(), data: { version: row.version } });
  return { ...row, status: 'changes_requested', feedback: feedback.trim(), decided_by: actor.worktree, decided_at: tx.now };
}

/** Discards a proposed version and sets the epic aside (deferred, with the reason, in the debt register). */
export async function discardPlan(tx: Tx, epicId: string, actor: Actor, version?: number, reason: string | null = null): Promise<PlanVersionRow & { transition: TransitionOutcome }> {
  const row = await pendingVersion(tx, epicId, version, true);
  await tx.q(`UPDATE plan_versions SET status = 'discarded', feedback = COALESCE($2, feedback), decided_by = $3, decided_at = $4 WHERE id = $1`, [row.id, reason, actor.worktree, tx.now]);
  await writeEvent(tx, actor, { entity: 'plan_version', action: 'discard', epicId, planPath: row.plan_path, from: 'proposed', to: 'discarded', reason, data: { version: row.version } });
  const transition = await applyEpicEvent(tx, epicId, 'plan_discarded', actor, `plan v${row.version} discarded${reason ? `: ${reason}` : ' (no reason given)'}`);
  return { ...row, status: 'discarded', decided_by: actor.worktree, decided_at: tx.now, transition };
}

/** The approved version whose steps are live, if any. */
export async function approvedVersion(tx: Tx, epic: EpicRow): Promise<PlanVersionRow | undefined> {
  return (await tx.q<PlanVersionRow>(`SELECT ${VERSION_COLUMNS} FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 AND status = 'approved' ORDER BY version DESC LIMIT 1`,
    [tx.repo, epic.id]))[0];
}

async function initialisedStructure(tx: Tx, planPath: string): Promise<PlanStructure> {
  const text = (await tx.q<{ structure: string }>('SELECT structure FROM plans WHERE repo_id = $1 AND plan_path = $2', [tx.repo, planPath]))[0]?.structure ?? '{}';
  return JSON.parse(text) as PlanStructure;
}

/** Starts an approved epic (ready → in_progress): refused unless its plan file still has the approved structure. */
export async function startEpic(tx: Tx, epicId: string, current: PlanSource, actor: Actor): Promise<TransitionOutcome> {
  const epic = await getEpic(tx, epicId, true);
  const version = await approvedVersion(tx, epic);
  if (!version) throw new RefusedError('no_approved_plan', `${epicId} has no approved plan; approve one with 'springfield plan approve ${epicId}'`);
  if (current.planPath !== version.plan_path) throw new UsageError('wrong_plan', `${epicId}'s approved plan is ${version.plan_path}, not ${current.planPath}`);
  const live = await findPlan(tx, version.plan_path);
  if (!live || planHash(current.plan) !== live.plan_hash) {
    const changes = describeDrift(live ? await initialisedStructure(tx, live.plan_path) : JSON.parse(version.structure) as PlanStructure, planStructure(current.plan));
    throw new RefusedError('plan_drift', `${version.plan_path} differs from the approved plan (${changes.slice(0, 3).join('; ')}); restore it, or defer and resume the epic to propose and approve it again`);
  }
  return applyEpicEvent(tx, epicId, 'start', actor, `started on approved plan ${version.plan_path} v${version.version}`);
}

/**
 * in_progress → implemented once every step of the epic's plan is completed and, when verification is
 * configured (by the caller's config, or in use: verifications recorded), it passed after the latest
 * build: the rule the scheduler completes by (completionHold, docs/state-machine.md).
 */
export async function finishEpic(tx: Tx, epicId: string, actor: Actor, reason: string, verificationConfigured: boolean): Promise<TransitionOutcome> {
  const epic = await getEpic(tx, epicId, true);
  const planPath = await livePlanPath(tx, epic.id);
  if (!planPath) throw new RefusedError('no_approved_plan', `${epicId} has no plan`);
  const open = (await tx.q<{ anchor: string }>(`SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND status <> 'completed' ORDER BY step_index`, [tx.repo, planPath]))
    .map((r) => r.anchor);
  if (open.length > 0) throw new RefusedError('incomplete', `cannot finish ${epicId}: steps not completed: ${open.slice(0, 5).join(', ')}${open.length > 5 ? ', …' : ''}`);
  if (epic.status === 'in_progress') {
    const v = await epicVerification(tx, epicId);
    const hold = completionHold(verificationConfigured || v.recorded, v);
    if (hold === 'verification_failed') {
      const what = v.lastFailure ? `: ${v.lastFailure.command} exited ${v.lastFailure.exitCode ?? 'without a code'}` : '';
      throw new RefusedError(hold, `cannot finish ${epicId}: its latest verification failed${what}; a builder fixes it and the scheduler verifies again (springfield orchestrate)`);
    }
    if (hold === 'unverified') {
      throw new RefusedError(hold, `cannot finish ${epicId}: verification is configured and has not passed since its latest build; let the scheduler verify it (springfield orchestrate)`);
    }
  }
  return applyEpicEvent(tx, epicId, 'steps_completed', actor, reason);
}

/** How the plan file differs from the initialised plan at `planPath`: its structural changes, or none. */
export async function planDrift(tx: Tx, planPath: string, current: PlanSource): Promise<string[]> {
  const live = await findPlan(tx, planPath);
  if (!live) return [`${planPath} is not initialised`];
  if (planHash(current.plan) === live.plan_hash) return [];
  const changes = describeDrift(await initialisedStructure(tx, planPath), planStructure(current.plan));
  return changes.length > 0 ? changes : ['structure changed'];
}

/** The path of the epic's initialised (approved) plan, or null before approval. */
export async function livePlanPath(tx: Tx, epicId: string): Promise<string | null> {
  return (await tx.q<{ plan_path: string }>('SELECT plan_path FROM plans WHERE repo_id = $1 AND epic_id = $2 ORDER BY updated_at DESC, plan_path LIMIT 1', [tx.repo, epicId]))[0]?.plan_path ?? null;
}
