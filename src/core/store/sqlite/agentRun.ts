import { UsageError } from '../../errors.ts';
import type { AgentRunInput, AgentRunStart, NewRun, RunEnd, RunView } from '../runTypes.ts';
import type { Actor } from '../types.ts';
import { heartbeat } from '../shared/claims.ts';
import { runSqlite } from './port.ts';
import { getEpic } from './interim.ts';
import { finishRun, progressMarks, startRun } from './runLifecycle.ts';
import { assertHolder, findPlan, ownerOf, requireStep } from './rows.ts';
import type { Database } from './sqlite.ts';

/** In one transaction: checks the epic (and that this worktree holds the step, renewing its lease), then records the run. */
export function beginAgentRun(db: Database, now: Date, input: AgentRunInput): AgentRunStart {
  const { actor, stepAnchor } = input;
  const epic = getEpic(db, input.epicId);
  const planPath = input.planArg ?? epicPlan(db, epic.id);
  const owning = planPath !== null ? findPlan(db, planPath)?.epic_id : null;
  if (owning && owning !== epic.id) throw new UsageError('wrong_plan', `${planPath} belongs to epic ${owning}, not ${epic.id}`);
  let holder: Actor = { ...actor, token: null };
  let agent = actor.agent;
  if (stepAnchor !== null) {
    if (planPath === null) throw new UsageError('no_plan', `${epic.id} has no plan yet; pass --plan PATH with --step`);
    const owner = ownerOf(db, requireStep(db, planPath, stepAnchor));
    assertHolder(owner, actor, 'run an agent on');
    holder = { ...actor, token: owner.claim_token };
    agent ??= owner.claimed_agent;
    runSqlite(db, now, (port) => heartbeat(port, planPath, stepAnchor, holder, input.leaseSeconds));
  }
  agent ??= input.role;
  const run = startRun(db, now, {
    epicId: epic.id, planPath, stepAnchor, role: input.role, iteration: input.role === 'lisa' ? epic.plan_iteration : epic.iteration,
    worktree: actor.worktree, agentId: agent, command: input.command, pid: input.pid,
    claimToken: holder.token ?? null, headBefore: input.headBefore, launchId: input.launchId,
  }, actor);
  return { run, planPath, stepAnchor, holder, agent, marks: progressMarks(db, epic.id, planPath, stepAnchor), ownWorktree: epic.worktree_path === actor.worktree };
}

/** The epic's live plan, else the plan of its latest proposed version, else none. */
function epicPlan(db: Database, epicId: string): string | null {
  const live = db.prepare('SELECT plan_path FROM plans WHERE epic_id = ? ORDER BY updated_at DESC LIMIT 1').pluck().get(epicId) as string | undefined;
  const proposed = db.prepare('SELECT plan_path FROM plan_versions WHERE epic_id = ? ORDER BY version DESC LIMIT 1').pluck().get(epicId) as string | undefined;
  return live ?? proposed ?? null;
}

/** A launch that never recorded its run: recorded now, at the epic's current iteration, and finished as it ended. */
export function recordFailedLaunch(db: Database, now: Date, run: Omit<NewRun, 'iteration'>, end: RunEnd, actor: Actor | null): RunView {
  const epic = getEpic(db, run.epicId);
  const row = startRun(db, now, { ...run, iteration: run.role === 'lisa' ? epic.plan_iteration : epic.iteration }, actor);
  return finishRun(db, now, row.id, end, actor);
}
