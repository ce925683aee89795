/** Everything the scheduler's decide() reads, in one consistent read (docs/scheduler.md, docs/scheduler-faults.md). */
import { buildBudget, COMPLEXITY_POLICY } from '../../epics/complexity.ts';
import type { Role } from '../../epics/transitions.ts';
import {
  FAULT_ROLES,
  type EpicSnapshot,
  type FaultRole,
  type RoleFaults,
  type SchedulerSnapshot,
} from '../../scheduler/types.ts';
import type { EpicRow } from '../epicTypes.ts';
import { SETUP_ROLE, type RunView } from '../runTypes.ts';
import { epicMarkers, epicVerification } from './epicVerification.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import { epicSpends, todaySpend, type EpicSpend } from './spend.ts';
import { budgetOverrideOf } from '../../epics/costBudget.ts';

/** What fault counting reads of an ended run: no output (a run's tail is read only for the last failure). */
export type EndedRun = Pick<
  RunView,
  'id' | 'role' | 'status' | 'exit_code' | 'outcome_reason' | 'started_at' | 'ended_at'
>;

/** A run with the host that started it (PostgreSQL; SQLite's runs are all of its one machine). */
export type RunRow = RunView & { readonly host?: string | null };

/** Counts the snapshot reads of one epic. */
export interface EpicCounts {
  /** When Ralph last succeeded on it. */
  readonly last_ralph_success: string | null;
  /** Review signals and finished Bart runs since the review iteration began (0 when it has not). */
  readonly signals_this_iteration: number;
  readonly bart_runs: number;
  readonly awaiting_approval: boolean | number;
  readonly awaiting_person: number;
  /** A setup run succeeded in its current worktree. */
  readonly setup_done: boolean | number;
}

export interface SchedulerPort {
  /** `iterationStart`: when the epic last became implemented (null: never). */
  epicCounts(epic: EpicRow, iterationStart: string | null): Io<EpicCounts>;
  /** Each fault role's ended runs on the epic since `since` (every one when null), newest first, at most 200 each, read as far as needed. */
  faultRuns(epicId: string, since: string | null): Io<ReadonlyMap<FaultRole, Iterable<EndedRun>>>;
  /** The output tails of the given runs. */
  outputTails(runIds: readonly number[]): Io<ReadonlyMap<number, string>>;
  /** The runs still running, newest first, with their hosts. */
  runningRuns(limit: number): Io<RunRow[]>;
}

/**
 * Reads everything decide() needs in one snapshot. Runs of every host are listed (they take slots and
 * act on epics), but only this host's carry their pids: a pid names a process only where it was
 * started, so the scheduler never signals another host's (docs/postgres-design.md, "Per-host facts").
 */
export function* schedulerSnapshot(port: StorePort): Op<SchedulerSnapshot> {
  const epics: EpicSnapshot[] = [];
  // What each epic spent, in one read for all of them (docs/budgets.md).
  const spent = new Map((yield* epicSpends(port)).map((r) => [r.epic_id, r]));
  for (const e of yield* call(port.listEpics()))
    if (e.status !== 'done') epics.push(yield* epicSnapshot(port, e, spent.get(e.id)));
  const runs = (yield* call(port.runningRuns(1000))).map((r) => {
    const mine = port.host === null || r.host === port.host;
    return {
      id: r.id,
      epicId: r.epic_id,
      stepAnchor: r.step_anchor,
      role: r.role as Role | typeof SETUP_ROLE,
      startedAt: r.started_at,
      pid: mine ? r.pid : null,
      agentPid: mine ? r.agent_pid : null,
    };
  });
  return { epics, runs, today: yield* todaySpend(port) };
}

function* epicSnapshot(port: StorePort, e: EpicRow, spent: EpicSpend | undefined): Op<EpicSnapshot> {
  const planPath = yield* call(port.livePlanPath(e.id));
  const p = planPath ? yield* call(port.partitionSteps(planPath)) : undefined;
  const markers = yield* epicMarkers(port, e.id);
  const { entered, implemented, reset } = markers;
  const v = yield* epicVerification(port, e.id, markers);
  const c = yield* call(port.epicCounts(e, implemented?.at ?? null));
  const reworkPending =
    entered?.action === 'signal_implementation_failure' &&
    !(c.last_ralph_success !== null && c.last_ralph_success > (entered?.at ?? ''));
  return {
    id: e.id,
    title: e.title,
    status: e.status,
    statusReason: e.status_reason,
    priority: e.priority,
    complexity: e.complexity,
    iteration: e.iteration,
    buildBudget: buildBudget(e),
    planIteration: e.plan_iteration,
    planBudget: COMPLEXITY_POLICY[e.complexity].planIterations,
    planPath,
    awaitingApproval: Boolean(c.awaiting_approval),
    planner: e.planner,
    steps: {
      total: p?.all.length ?? 0,
      completed: p?.completed.length ?? 0,
      ready: p?.ready ?? [],
      claimedLive: p?.claimed ?? [],
    },
    worktree: e.worktree_path,
    verification: {
      lastVerdict: v.lastVerdict,
      sameFailureStreak: v.sameFailureStreak,
      running: false,
      unverifiedBuild: v.unverifiedBuild,
    },
    reworkPending,
    review: { signalsThisIteration: Number(c.signals_this_iteration), bartRunsThisIteration: Number(c.bart_runs) },
    signalsAwaitingPerson: Number(c.awaiting_person),
    mergeApprovedByPerson: e.merge_approved_by !== null,
    mergeQueued: false,
    faults: yield* faultsOf(port, e.id, reset?.at ?? null),
    pullRequest: e.pr_url ? { url: e.pr_url, checkedAt: e.pr_checked_at } : null,
    setupDone: e.worktree_path !== null && Boolean(c.setup_done),
    spend: { usd: spent?.usd ?? 0, tokens: spent?.tokens ?? 0, minutes: spent?.minutes ?? 0 },
    costBudget: budgetOverrideOf(e),
  };
}

/**
 * Each role's failures in a row, newest first, since a person last acted on the epic (a retry, a
 * resume, a plan approval): what decide() backs off on and blocks at (docs/scheduler-faults.md).
 */
function* faultsOf(port: StorePort, epicId: string, reset: string | null): Op<Partial<Record<FaultRole, RoleFaults>>> {
  const out: Partial<Record<FaultRole, RoleFaults>> = {};
  const runs = yield* call(port.faultRuns(epicId, reset));
  for (const role of FAULT_ROLES) {
    let faults: RoleFaults | undefined;
    for (const r of runs.get(role) ?? []) {
      if (r.status === 'succeeded') break;
      // A person's stop and a usage limit are no faults (docs/scheduler-faults.md; docs/agents.md, "Usage limits").
      if (r.status === 'stopped' || r.status === 'limited') continue;
      faults = faults
        ? { ...faults, consecutive: faults.consecutive + 1 }
        : {
            consecutive: 1,
            lastEndedAt: r.ended_at ?? r.started_at,
            lastRunId: r.id,
            lastOutcome: r.status,
            lastExitCode: r.exit_code,
            lastReason: r.outcome_reason,
            lastOutput: '',
          };
    }
    if (faults) out[role] = faults;
  }
  // Only the newest failure's output is shown, so only its tail is read.
  const faults = Object.entries(out) as [FaultRole, RoleFaults][];
  if (faults.length === 0) return out;
  const tails = yield* call(port.outputTails(faults.map(([, f]) => f.lastRunId)));
  for (const [role, f] of faults)
    out[role] = { ...f, lastOutput: (tails.get(f.lastRunId) ?? '').split('\n').slice(-10).join('\n') };
  return out;
}
