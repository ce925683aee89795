/**
 * Agent runs and verification (docs/scheduler-faults.md): a run is recorded when it starts and ended
 * with its outcome, which releases the step it still holds and counts a non-success against the build
 * budget; a run whose supervisor is gone is lost. Verification results are stored per pass.
 */
import { AGENT_ROLES, type AgentRole, BUILDING_ROLE } from '../../../shared/roles.ts';
import type {
  NewRun,
  ProgressMarks,
  RunEnd,
  RunUsage,
  RunView,
  SessionCounts,
  UsageByRole,
  VerificationEntry,
  VerificationView,
} from '../runTypes.ts';
import type { Actor } from '../types.ts';
import { releaseClaim, reopenCompleted } from './claims.ts';
import { countIteration, requireEpic } from './epics.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import * as refuse from './refusals.ts';
import { processOutcome, progressOutcome, spendsIteration, type Outcome } from './runOutcome.ts';
import type { RunRow } from './schedulerSnapshot.ts';

export interface RunsPort {
  /** A `running` row for the run (PostgreSQL: of this host); its id. */
  insertRun(run: NewRun): Io<number>;
  /** The run's row with its host; with `lock`, PostgreSQL locks it (two finishers queue). */
  runRow(id: number, lock?: boolean): Io<RunRow | undefined>;
  setAgentPid(id: number, pid: number): Io<void>;
  /** The counters a run's progress is judged by: the epic's proposals and signals, the ticked items of the step and its substeps. */
  progressMarks(epicId: string, planPath: string | null, stepAnchor: string | null): Io<ProgressMarks>;
  /** Ends the run with `status`, if it is still `from`: whether it did. */
  finishRunRow(id: number, from: string, status: string, reason: string | null, end: RunEnd): Io<boolean>;
  /** A running run marked lost with the reason (PostgreSQL: only this host's): whether it was. */
  markRunLost(id: number, reason: string): Io<boolean>;
  /** The running runs with a supervising pid that this machine can judge (PostgreSQL: this host's), oldest first. */
  runningWithPid(): Io<RunRow[]>;
  recordRunUsage(id: number, usage: RunUsage): Io<void>;
  /** Agent runs, newest first; `active` keeps only those still running. */
  listRuns(options: { active?: boolean; epicId?: string; limit?: number }): Io<RunView[]>;
  runsByLaunch(launchIds: readonly string[]): Io<RunView[]>;
  latestRun(epicId: string, role?: string): Io<RunView | undefined>;
  /** Tokens and cost per epic and role, from the runs that reported usage. */
  usageByEpic(epicId?: string): Io<UsageByRole[]>;
  /** Runs per epic and role, setup runs left out. */
  sessionRows(epicId?: string): Io<{ epic_id: string; role: string; n: number }[]>;
  /** Stores one verification pass's results, in order (rows of a pass share run_id). */
  insertVerifications(entries: readonly VerificationEntry[]): Io<void>;
  listVerifications(options: { epicId?: string; limit?: number }): Io<VerificationView[]>;
  lastVerdict(epicId: string): Io<'pass' | 'fail' | null>;
}

const SCHEDULER: Actor = { worktree: 'springfield-scheduler', agent: 'scheduler' };

/** The run as the Store returns it (the host stays inside the store: the same shape on every backend). */
export function runView(row: RunRow): RunView {
  const { host: _h, ...view } = row;
  return view;
}

export function* requireRun(port: StorePort, id: number, lock = false): Op<RunRow> {
  const row = yield* call(port.runRow(id, lock));
  if (!row) throw refuse.unknownRun(id);
  return row;
}

/** Inserts a `running` row and its event; the row id is the run id. */
/**
 * A new run's column values in both backends' order after their own leading columns: epic_id,
 * plan_path, step_anchor, role, iteration, worktree, agent_id, command (JSON), pid, started_at,
 * claim_token, head_before, launch_id (the status is 'running' in the SQL).
 */
export function runValues(run: NewRun, now: string): unknown[] {
  return [
    run.epicId,
    run.planPath,
    run.stepAnchor,
    run.role,
    run.iteration,
    run.worktree,
    run.agentId,
    JSON.stringify(run.command),
    run.pid,
    now,
    run.claimToken ?? null,
    run.headBefore ?? null,
    run.launchId ?? null,
  ];
}

/** A run's usage as column values: cost_usd, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, premium_requests. */
export function usageValues(usage: RunUsage): unknown[] {
  return [
    usage.costUsd,
    usage.inputTokens,
    usage.outputTokens,
    usage.cacheReadTokens,
    usage.cacheWriteTokens,
    usage.premiumRequests,
  ];
}

export function* startRun(port: StorePort, run: NewRun, actor: Actor | null): Op<RunView> {
  const id = yield* call(port.insertRun(run));
  yield* call(
    port.writeEvent(actor, {
      entity: 'run',
      action: 'start',
      epicId: run.epicId,
      planPath: run.planPath,
      stepAnchor: run.stepAnchor,
      to: 'running',
      data: { run_id: id, role: run.role, iteration: run.iteration, command: run.command, pid: run.pid },
    }),
  );
  return runView(yield* requireRun(port, id));
}

/**
 * Ends a run with its outcome (succeeded, failed, timed_out or no_progress) and what follows from it
 * in the same transaction: a step the run still holds is released at once, and a non-success counts
 * one build iteration for Ralph and Bart. The run's row is read (locked) first; finishing twice changes nothing.
 */
export function* finishRun(port: StorePort, runId: number, end: RunEnd, actor: Actor | null): Op<RunView> {
  const row = yield* requireRun(port, runId, true);
  if (row.status !== 'running' && row.status !== 'lost') return yield* recordRunUsage(port, row, end.usage ?? null);
  const { status, reason } = yield* outcomeOf(port, row, end);
  if (!(yield* call(port.finishRunRow(runId, row.status, status, reason, end)))) throw refuse.runChanged(runId);
  yield* call(
    port.writeEvent(actor, {
      entity: 'run',
      action: 'finish',
      epicId: row.epic_id,
      planPath: row.plan_path,
      stepAnchor: row.step_anchor,
      from: row.status,
      to: status,
      reason,
      data: { run_id: runId, exit_code: end.exitCode, signal: end.signal, outcome: status },
    }),
  );
  const ended = yield* requireRun(port, runId);
  if (end.reopenStep && row.plan_path && row.step_anchor && row.claim_token !== null) {
    yield* reopenCompleted(
      port,
      row.plan_path,
      row.step_anchor,
      row.claim_token,
      actor ?? SCHEDULER,
      `run ${runId}: ${reason ?? status}`,
    );
  }
  // A row marked lost was settled then (released, counted); a late finish only corrects its outcome.
  if (row.status === 'running') yield* afterEnd(port, ended, actor ?? SCHEDULER);
  return yield* recordRunUsage(port, ended, end.usage ?? null);
}

/** Stores the usage read from a run's output on its row; returns the row as it is now. */
function* recordRunUsage(port: StorePort, run: RunRow, usage: RunUsage | null): Op<RunView> {
  if (!usage) return runView(run);
  yield* call(port.recordRunUsage(run.id, usage));
  return runView(yield* requireRun(port, run.id));
}

/** Releases what an ended run still holds (fenced by its holder and token), and counts a non-success against the build budget. */
function* afterEnd(port: StorePort, run: RunRow, actor: Actor): Op<void> {
  if (run.plan_path && run.step_anchor && run.worktree && run.claim_token !== null) {
    const why =
      run.status === 'succeeded'
        ? `run ${run.id} ended with ${run.step_anchor} unfinished; released for the next session`
        : `run ${run.id} ${run.status}: ${run.outcome_reason ?? ''}`.trim();
    yield* releaseClaim(
      port,
      run.plan_path,
      run.step_anchor,
      { host: run.host ?? null, worktree: run.worktree, token: run.claim_token },
      actor,
      why,
    );
  }
  if (!run.epic_id || !spendsIteration(run.role, run.status)) return;
  const epic = yield* requireEpic(port, run.epic_id);
  if (epic.status === 'in_progress' || epic.status === 'implemented')
    yield* countIteration(port, epic.id, actor, `${run.role} run ${run.id} ${run.status}`);
}

/** The outcome and its reason, from how the process ended and what it changed. */
function* outcomeOf(port: StorePort, run: RunView, end: RunEnd): Op<Outcome> {
  const ended = processOutcome(end);
  if (ended) return ended;
  if (!end.marks || !run.epic_id) return { status: 'succeeded', reason: null };
  const completed =
    run.role === BUILDING_ROLE &&
    run.plan_path !== null &&
    run.step_anchor !== null &&
    (yield* call(port.findStep(run.plan_path, run.step_anchor)))?.status === 'completed';
  const committed = end.headAfter != null && run.head_before != null && end.headAfter !== run.head_before;
  return progressOutcome(
    run.role,
    run.step_anchor,
    end.marks,
    yield* call(port.progressMarks(run.epic_id, run.plan_path, run.step_anchor)),
    { completed, committed },
  );
}

/**
 * Running rows whose supervising pid is gone (a pid names a process only on the host that started it,
 * so other hosts' runs are never judged here: docs/postgres-design.md, "Per-host facts"): the caller ends
 * their agents' process groups, then marks them lost with markOrphans.
 */
export function* findOrphans(port: StorePort, isAlive: (pid: number) => boolean): Op<RunView[]> {
  return (yield* call(port.runningWithPid())).filter((run) => run.pid !== null && !isAlive(run.pid)).map(runView);
}

/**
 * Marks `running` rows whose supervising pid is gone as `lost` and releases their steps at once
 * (fenced by the token they held); a lost Ralph or Bart run counts against the build budget.
 */
export function* markOrphans(port: StorePort, isAlive: (pid: number) => boolean, actor: Actor | null): Op<RunView[]> {
  const lost: RunView[] = [];
  for (const run of yield* findOrphans(port, isAlive)) {
    const reason = `supervising process ${run.pid} is gone`;
    if (!(yield* call(port.markRunLost(run.id, reason)))) continue;
    yield* call(
      port.writeEvent(actor, {
        entity: 'run',
        action: 'lost',
        epicId: run.epic_id,
        planPath: run.plan_path,
        stepAnchor: run.step_anchor,
        from: 'running',
        to: 'lost',
        reason,
        data: { run_id: run.id, pid: run.pid },
      }),
    );
    const ended = yield* requireRun(port, run.id);
    yield* afterEnd(port, ended, actor ?? SCHEDULER);
    lost.push(runView(ended));
  }
  return lost;
}

/** Sessions spent per epic: every recorded agent run, counted by role (docs/scheduler.md, "Sessions spent"; setup is no session). */
export function* countSessions(port: StorePort, epicId?: string): Op<Record<string, SessionCounts>> {
  const out: Record<string, SessionCounts> = {};
  for (const r of yield* call(port.sessionRows(epicId))) {
    const counts = (out[r.epic_id] ??= { lisa: 0, ralph: 0, bart: 0, lovejoy: 0, total: 0 });
    if ((AGENT_ROLES as readonly string[]).includes(r.role)) counts[r.role as AgentRole] += r.n;
    counts.total += r.n;
  }
  return out;
}
