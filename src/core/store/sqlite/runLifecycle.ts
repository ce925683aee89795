import { countIteration, getEpic } from './interim.ts';
import { recordRunUsage } from './runs.ts';
import { RefusedError, UsageError } from '../../errors.ts';
import { releaseClaim, reopenCompleted } from '../shared/claims.ts';
import { runSqlite } from './port.ts';
import { writeEvent } from './rows.ts';
import type { Database } from './sqlite.ts';
import type { Actor } from '../types.ts';
import { AGENT_ROLES, type AgentRole } from '../../../shared/roles.ts';
import { SETUP_ROLE, type NewRun, type ProgressMarks, type RunEnd, type RunView, type SessionCounts } from '../runTypes.ts';
import { type Outcome, processOutcome, progressOutcome, spendsIteration } from '../shared/runOutcome.ts';

/** Inserts a `running` row and its event; the row id is the run id. */
export function startRun(db: Database, now: Date, run: NewRun, actor: Actor | null): RunView {
  const at = now.toISOString();
  const command = JSON.stringify(run.command);
  const id = Number(db.prepare(`INSERT INTO runs (epic_id, plan_path, step_anchor, role, iteration, worktree, agent_id, command, pid, status, started_at, claim_token, head_before, launch_id)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)`)
    .run(run.epicId, run.planPath, run.stepAnchor, run.role, run.iteration, run.worktree, run.agentId, command, run.pid, at, run.claimToken ?? null, run.headBefore ?? null, run.launchId ?? null).lastInsertRowid);
  writeEvent(db, at, actor, {
    entity: 'run', action: 'start', epicId: run.epicId, planPath: run.planPath, stepAnchor: run.stepAnchor, to: 'running',
    data: { run_id: id, role: run.role, iteration: run.iteration, command: run.command, pid: run.pid },
  });
  return getRun(db, id);
}

/** Records the agent's own process group, so a lost run's agent can be ended too. */
export function setAgentPid(db: Database, runId: number, pid: number): void {
  db.prepare('UPDATE runs SET agent_pid = ? WHERE id = ?').run(pid, runId);
}

/** The counters a run's progress is judged by, taken at its start and again at its end. */
export function progressMarks(db: Database, epicId: string, planPath: string | null, stepAnchor: string | null): ProgressMarks {
  const count = (sql: string, ...args: (string | null)[]) => Number(db.prepare(sql).pluck().get(...args));
  return {
    proposals: count('SELECT COUNT(*) FROM plan_versions WHERE epic_id = ?', epicId),
    signals: count('SELECT COUNT(*) FROM signals WHERE epic_id = ?', epicId),
    itemsDone: planPath && stepAnchor ? count(`SELECT COUNT(*) FROM checklist_items WHERE plan_path = ? AND status = 'completed'
      AND step_anchor IN (SELECT anchor FROM steps WHERE plan_path = ? AND (anchor = ? OR parent_anchor = ?))`, planPath, planPath, stepAnchor, stepAnchor) : 0,
  };
}

/**
 * Ends a run with its outcome (succeeded, failed, timed_out or no_progress) and what follows from
 * it in the same transaction: a step the run still holds is released at once, and a non-success
 * counts one build iteration for Ralph and Bart. Finishing twice changes nothing.
 */
export function finishRun(db: Database, now: Date, runId: number, end: RunEnd, actor: Actor | null): RunView {
  const row = getRun(db, runId);
  if (row.status !== 'running' && row.status !== 'lost') return recordRunUsage(db, row, end.usage ?? null);
  const { status, reason } = outcomeOf(db, row, end);
  const at = now.toISOString();
  const changed = db.prepare(`UPDATE runs SET status = ?, ended_at = ?, exit_code = ?, outcome_reason = ?, output_tail = ?, head_after = ? WHERE id = ? AND status = ?`)
    .run(status, at, end.exitCode, reason, end.outputTail ?? '', end.headAfter ?? null, runId, row.status).changes;
  if (changed !== 1) throw new RefusedError('run_changed', `run ${runId} changed while being finished; try again`);
  writeEvent(db, at, actor, {
    entity: 'run', action: 'finish', epicId: row.epic_id, planPath: row.plan_path, stepAnchor: row.step_anchor, from: row.status, to: status,
    reason, data: { run_id: runId, exit_code: end.exitCode, signal: end.signal, outcome: status },
  });
  const ended = getRun(db, runId);
  if (end.reopenStep && row.plan_path && row.step_anchor && row.claim_token !== null) {
    const [plan, anchor, token] = [row.plan_path, row.step_anchor, row.claim_token];
    runSqlite(db, now, (port) => reopenCompleted(port, plan, anchor, token, actor ?? SCHEDULER, `run ${runId}: ${reason ?? status}`));
  }
  // A row marked lost was settled then (released, counted); a late finish only corrects its outcome.
  if (row.status === 'running') afterEnd(db, now, ended, actor ?? SCHEDULER);
  return recordRunUsage(db, ended, end.usage ?? null);
}

const SCHEDULER: Actor = { worktree: 'springfield-scheduler', agent: 'scheduler' };

/** Releases what an ended run still holds, and counts a non-success against the build budget. */
function afterEnd(db: Database, now: Date, run: RunView, actor: Actor): void {
  if (run.plan_path && run.step_anchor && run.worktree && run.claim_token !== null) {
    const why = run.status === 'succeeded' ? `run ${run.id} ended with ${run.step_anchor} unfinished; released for the next session` : `run ${run.id} ${run.status}: ${run.outcome_reason ?? ''}`.trim();
    const [plan, anchor, holder] = [run.plan_path, run.step_anchor, { host: null, worktree: run.worktree, token: run.claim_token }];
    runSqlite(db, now, (port) => releaseClaim(port, plan, anchor, holder, actor, why));
  }
  if (!run.epic_id || !spendsIteration(run.role, run.status)) return;
  const epic = getEpic(db, run.epic_id);
  if (epic.status === 'in_progress' || epic.status === 'implemented') countIteration(db, now.toISOString(), epic.id, actor, `${run.role} run ${run.id} ${run.status}`);
}

/** The outcome and its reason, from how the process ended and what it changed. */
function outcomeOf(db: Database, run: RunView, end: RunEnd): Outcome {
  const ended = processOutcome(end);
  if (ended) return ended;
  if (!end.marks || !run.epic_id) return { status: 'succeeded', reason: null };
  const completed = run.role === 'ralph' && run.plan_path !== null && run.step_anchor !== null
    && db.prepare(`SELECT status FROM steps WHERE plan_path = ? AND anchor = ?`).pluck().get(run.plan_path, run.step_anchor) === 'completed';
  const committed = end.headAfter != null && run.head_before != null && end.headAfter !== run.head_before;
  return progressOutcome(run.role, run.step_anchor, end.marks, progressMarks(db, run.epic_id, run.plan_path, run.step_anchor), { completed, committed });
}

/**
 * Running rows whose supervising pid is gone (pids are of this host, where the database lives):
 * the caller ends their agents' process groups, then marks them lost with markLost.
 */
export function findOrphans(db: Database, isAlive: (pid: number) => boolean): RunView[] {
  const running = db.prepare(`SELECT * FROM runs WHERE status = 'running' AND pid IS NOT NULL ORDER BY id`).all() as RunView[];
  return running.filter((run) => run.pid !== null && !isAlive(run.pid));
}

/**
 * Marks `running` rows whose supervising pid is gone as `lost` and releases their steps at once
 * (fenced by the token they held); a lost Ralph or Bart run counts against the build budget.
 */
export function markOrphans(db: Database, isAlive: (pid: number) => boolean, now: Date = new Date(), actor: Actor | null = null): RunView[] {
  const at = now.toISOString();
  const lost: RunView[] = [];
  for (const run of findOrphans(db, isAlive)) {
    const reason = `supervising process ${run.pid} is gone`;
    const changed = db.prepare(`UPDATE runs SET status = 'lost', ended_at = ?, outcome_reason = ? WHERE id = ? AND status = 'running'`).run(at, reason, run.id).changes;
    if (changed !== 1) continue;
    writeEvent(db, at, actor, {
      entity: 'run', action: 'lost', epicId: run.epic_id, planPath: run.plan_path, stepAnchor: run.step_anchor, from: 'running', to: 'lost',
      reason, data: { run_id: run.id, pid: run.pid },
    });
    const ended = getRun(db, run.id);
    afterEnd(db, now, ended, actor ?? SCHEDULER);
    lost.push(ended);
  }
  return lost;
}

export function getRun(db: Database, runId: number): RunView {
  const row = db.prepare('SELECT * FROM runs WHERE id = ?').get(runId) as RunView | undefined;
  if (!row) throw new UsageError('unknown_run', `no run ${runId} (see 'springfield runs')`);
  return row;
}

/** Sessions spent per epic: every recorded agent run, counted by role (docs/scheduler.md, "Sessions spent"; setup is no session). */
export function countSessions(db: Database, epicId?: string): Record<string, SessionCounts> {
  const rows = db.prepare(`SELECT epic_id, role, COUNT(*) AS n FROM runs WHERE epic_id IS NOT NULL AND role != '${SETUP_ROLE}' ${epicId ? 'AND epic_id = ?' : ''}
    GROUP BY epic_id, role ORDER BY epic_id`).all(...(epicId ? [epicId] : [])) as { epic_id: string; role: string; n: number }[];
  const out: Record<string, SessionCounts> = {};
  for (const r of rows) {
    const counts = (out[r.epic_id] ??= { lisa: 0, ralph: 0, bart: 0, lovejoy: 0, total: 0 });
    if ((AGENT_ROLES as readonly string[]).includes(r.role)) counts[r.role as AgentRole] += r.n;
    counts.total += r.n;
  }
  return out;
}
