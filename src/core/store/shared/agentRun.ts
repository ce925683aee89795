/** What `springfield run` records before an agent starts, and a launch that never got that far. */
import type { AgentRunInput, AgentRunStart, NewRun, RunEnd, RunView } from '../runTypes.ts';
import type { Actor } from '../types.ts';
import { heartbeat } from './claims.ts';
import { requireEpic } from './epics.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import * as refuse from './refusals.ts';
import { assertHolder, requireClaim } from './rows.ts';
import { finishRun, startRun } from './runs.ts';
import { PLANNING_ROLE } from '../../../shared/roles.ts';

export interface AgentRunPort {
  /** The plan file of the epic's latest proposed version, if any. */
  latestProposedPath(epicId: string): Io<string | undefined>;
}

/** In one transaction: checks the epic (and that this worktree holds the step, renewing its lease), then records the run. */
export function* beginAgentRun(port: StorePort, input: AgentRunInput): Op<AgentRunStart> {
  const { actor, stepAnchor } = input;
  const epic = yield* requireEpic(port, input.epicId);
  // The plan named, else the epic's live plan, else the plan of its latest proposed version.
  const planPath =
    input.planArg ??
    (yield* call(port.livePlanPath(epic.id))) ??
    (yield* call(port.latestProposedPath(epic.id))) ??
    null;
  const owning = planPath !== null ? (yield* call(port.findPlan(planPath)))?.epic_id : null;
  if (planPath !== null && owning && owning !== epic.id) throw refuse.planOfOtherEpic(planPath, owning, epic.id);
  let holder: Actor = { ...actor, token: null };
  let agent = actor.agent;
  if (stepAnchor !== null) {
    if (planPath === null) throw refuse.noPlanForStep(epic.id);
    const { owner } = yield* requireClaim(port, planPath, stepAnchor);
    assertHolder(port.host, owner, actor, 'run an agent on');
    holder = { ...actor, token: owner.claim_token };
    agent ??= owner.claimed_agent;
    yield* heartbeat(port, planPath, stepAnchor, holder, input.leaseSeconds);
  }
  agent ??= input.role;
  const run = yield* startRun(
    port,
    {
      epicId: epic.id,
      planPath,
      stepAnchor,
      role: input.role,
      iteration: input.role === PLANNING_ROLE ? epic.plan_iteration : epic.iteration,
      worktree: actor.worktree,
      agentId: agent,
      command: input.command,
      pid: input.pid,
      claimToken: holder.token ?? null,
      headBefore: input.headBefore,
      launchId: input.launchId,
    },
    actor,
  );
  return {
    run,
    planPath,
    stepAnchor,
    holder,
    agent,
    marks: yield* call(port.progressMarks(epic.id, planPath, stepAnchor)),
    ownWorktree: epic.worktree_path === actor.worktree,
  };
}

/** A launch that never recorded its run: recorded now, at the epic's current iteration, and finished as it ended. */
export function* recordFailedLaunch(
  port: StorePort,
  run: Omit<NewRun, 'iteration'>,
  end: RunEnd,
  actor: Actor | null,
): Op<RunView> {
  const epic = yield* requireEpic(port, run.epicId);
  const row = yield* startRun(
    port,
    { ...run, iteration: run.role === PLANNING_ROLE ? epic.plan_iteration : epic.iteration },
    actor,
  );
  return yield* finishRun(port, row.id, end, actor);
}
