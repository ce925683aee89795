import { UsageError } from '../../errors.ts';
import type { AgentRunInput, AgentRunStart, NewRun, RunEnd, RunView } from '../runTypes.ts';
import type { Actor } from '../types.ts';
import { heartbeat } from '../shared/claims.ts';
import { runPg } from './port.ts';
import { getEpic } from './interim.ts';
import { assertHolder, findPlan, lockOwner } from './rows.ts';
import { finishRun, progressMarks, startRun } from './runLifecycle.ts';
import type { Tx } from './session.ts';

/** In one transaction: checks the epic (and that this worktree on this host holds the step, renewing its lease), then records the run. */
export async function beginAgentRun(tx: Tx, input: AgentRunInput): Promise<AgentRunStart> {
  const { actor, stepAnchor } = input;
  const epic = await getEpic(tx, input.epicId);
  const planPath = input.planArg ?? await epicPlan(tx, epic.id);
  const owning = planPath !== null ? (await findPlan(tx, planPath))?.epic_id : null;
  if (owning && owning !== epic.id) throw new UsageError('wrong_plan', `${planPath} belongs to epic ${owning}, not ${epic.id}`);
  let holder: Actor = { ...actor, token: null };
  let agent = actor.agent;
  if (stepAnchor !== null) {
    if (planPath === null) throw new UsageError('no_plan', `${epic.id} has no plan yet; pass --plan PATH with --step`);
    const { owner } = await lockOwner(tx, planPath, stepAnchor);
    assertHolder(tx, owner, actor, 'run an agent on');
    holder = { ...actor, token: owner.claim_token };
    agent ??= owner.claimed_agent;
    await runPg(tx, (port) => heartbeat(port, planPath, stepAnchor, holder, input.leaseSeconds));
  }
  agent ??= input.role;
  const run = await startRun(tx, {
    epicId: epic.id, planPath, stepAnchor, role: input.role, iteration: input.role === 'lisa' ? epic.plan_iteration : epic.iteration,
    worktree: actor.worktree, agentId: agent, command: input.command, pid: input.pid,
    claimToken: holder.token ?? null, headBefore: input.headBefore, launchId: input.launchId,
  }, actor);
  return { run, planPath, stepAnchor, holder, agent, marks: await progressMarks(tx, epic.id, planPath, stepAnchor), ownWorktree: epic.worktree_path === actor.worktree };
}

/** The epic's live plan, else the plan of its latest proposed version, else none. */
async function epicPlan(tx: Tx, epicId: string): Promise<string | null> {
  const row = (await tx.q<{ live: string | null; proposed: string | null }>(`SELECT
      (SELECT plan_path FROM plans WHERE repo_id = $1 AND epic_id = $2 ORDER BY updated_at DESC LIMIT 1) AS live,
      (SELECT plan_path FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 ORDER BY version DESC LIMIT 1) AS proposed`, [tx.repo, epicId]))[0];
  return row?.live ?? row?.proposed ?? null;
}

/** A launch that never recorded its run: recorded now, at the epic's current iteration, and finished as it ended. */
export async function recordFailedLaunch(tx: Tx, run: Omit<NewRun, 'iteration'>, end: RunEnd, actor: Actor | null): Promise<RunView> {
  const epic = await getEpic(tx, run.epicId);
  const row = await startRun(tx, { ...run, iteration: run.role === 'lisa' ? epic.plan_iteration : epic.iteration }, actor);
  return finishRun(tx, row.id, end, actor);
}
