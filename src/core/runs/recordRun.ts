import { RefusedError, UsageError } from '../errors.ts';
import { writeEvent } from '../store/rows.ts';
import type { RunView } from '../store/runs.ts';
import type { Database } from '../store/sqlite.ts';
import type { Actor } from '../store/types.ts';
import { AGENT_ROLES, type AgentRole } from './roles.ts';

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'killed' | 'lost';

export interface NewRun {
  readonly epicId: string;
  readonly planPath: string | null;
  readonly stepAnchor: string | null;
  readonly role: AgentRole;
  readonly iteration: number;
  readonly worktree: string;
  readonly agentId: string | null;
  /** The agent's argument vector, stored as a JSON array (never shell text). */
  readonly command: readonly string[];
  /** The supervising process (the one that heartbeats and finishes the row): if it dies, the run is lost. */
  readonly pid: number;
}

export interface RunOutcome {
  readonly exitCode: number;
  /** The signal that ended the agent, if one did. */
  readonly signal: string | null;
}

export type SessionCounts = Record<AgentRole | 'total', number>;

/** Inserts a `running` row and its event; the row id is the run id. */
export function startRun(db: Database, now: Date, run: NewRun, actor: Actor | null): RunView {
  const at = now.toISOString();
  const command = JSON.stringify(run.command);
  const id = Number(db.prepare(`INSERT INTO runs (epic_id, plan_path, step_anchor, role, iteration, worktree, agent_id, command, pid, status, started_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)`)
    .run(run.epicId, run.planPath, run.stepAnchor, run.role, run.iteration, run.worktree, run.agentId, command, run.pid, at).lastInsertRowid);
  writeEvent(db, at, actor, {
    entity: 'run', action: 'start', epicId: run.epicId, planPath: run.planPath, stepAnchor: run.stepAnchor, to: 'running',
    data: { run_id: id, role: run.role, iteration: run.iteration, command: run.command, pid: run.pid },
  });
  return getRun(db, id);
}

/** Ends a run: `killed` when a signal ended it, else `succeeded` (exit 0) or `failed`. Finishing twice changes nothing. */
export function finishRun(db: Database, now: Date, runId: number, outcome: RunOutcome, actor: Actor | null): RunView {
  const row = getRun(db, runId);
  if (row.status !== 'running' && row.status !== 'lost') return row;
  const status: RunStatus = outcome.signal ? 'killed' : outcome.exitCode === 0 ? 'succeeded' : 'failed';
  const at = now.toISOString();
  const changed = db.prepare(`UPDATE runs SET status = ?, ended_at = ?, exit_code = ? WHERE id = ? AND status = ?`)
    .run(status, at, outcome.exitCode, runId, row.status).changes;
  if (changed !== 1) throw new RefusedError('run_changed', `run ${runId} changed while being finished; try again`);
  writeEvent(db, at, actor, {
    entity: 'run', action: 'finish', epicId: row.epic_id, planPath: row.plan_path, stepAnchor: row.step_anchor, from: row.status, to: status,
    reason: outcome.signal ? `agent ended by ${outcome.signal}` : null, data: { run_id: runId, exit_code: outcome.exitCode, signal: outcome.signal },
  });
  return getRun(db, runId);
}

/**
 * Marks `running` rows whose supervising pid is gone as `lost` (call after a reload or restart; pids
 * are of this host, where the database lives). The step's lease is left to expire, so it becomes reclaimable.
 */
export function markOrphans(db: Database, isAlive: (pid: number) => boolean = pidAlive, now: Date = new Date(), actor: Actor | null = null): RunView[] {
  const running = db.prepare(`SELECT * FROM runs WHERE status = 'running' AND pid IS NOT NULL ORDER BY id`).all() as RunView[];
  const at = now.toISOString();
  const lost: RunView[] = [];
  for (const run of running) {
    if (run.pid === null || isAlive(run.pid)) continue;
    const changed = db.prepare(`UPDATE runs SET status = 'lost', ended_at = ? WHERE id = ? AND status = 'running'`).run(at, run.id).changes;
    if (changed !== 1) continue;
    writeEvent(db, at, actor, {
      entity: 'run', action: 'lost', epicId: run.epic_id, planPath: run.plan_path, stepAnchor: run.step_anchor, from: 'running', to: 'lost',
      reason: `supervising process ${run.pid} is gone`, data: { run_id: run.id, pid: run.pid },
    });
    lost.push(getRun(db, run.id));
  }
  return lost;
}

/** Whether a process with this pid exists on this host (EPERM means it exists but is not ours). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function getRun(db: Database, runId: number): RunView {
  const row = db.prepare('SELECT * FROM runs WHERE id = ?').get(runId) as RunView | undefined;
  if (!row) throw new UsageError('unknown_run', `no run ${runId} (see 'springfield runs')`);
  return row;
}

/** Sessions spent per epic: every recorded run, counted by role (SPEC §7 session accounting). */
export function countSessions(db: Database, epicId?: string): Record<string, SessionCounts> {
  const rows = db.prepare(`SELECT epic_id, role, COUNT(*) AS n FROM runs WHERE epic_id IS NOT NULL ${epicId ? 'AND epic_id = ?' : ''}
    GROUP BY epic_id, role ORDER BY epic_id`).all(...(epicId ? [epicId] : [])) as { epic_id: string; role: string; n: number }[];
  const out: Record<string, SessionCounts> = {};
  for (const r of rows) {
    const counts = (out[r.epic_id] ??= { lisa: 0, ralph: 0, bart: 0, lovejoy: 0, total: 0 });
    if ((AGENT_ROLES as readonly string[]).includes(r.role)) counts[r.role as AgentRole] += r.n;
    counts.total += r.n;
  }
  return out;
}
