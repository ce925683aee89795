import type { RunUsage, RunView, UsageByRole, VerificationView } from '../runTypes.ts';
import { cached, type Database } from './sqlite.ts';

/** Stores the usage read from a run's output on its row; returns the row as it is now. */
export function recordRunUsage(db: Database, run: RunView, usage: RunUsage | null): RunView {
  if (!usage) return run;
  db.prepare(`UPDATE runs SET cost_usd = ?, input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, premium_requests = ? WHERE id = ?`)
    .run(usage.costUsd, usage.inputTokens, usage.outputTokens, usage.cacheReadTokens, usage.cacheWriteTokens, usage.premiumRequests, run.id);
  return db.prepare('SELECT * FROM runs WHERE id = ?').get(run.id) as RunView;
}

/** Tokens and cost per epic and role, from the runs that reported usage. */
export function usageByEpic(db: Database, epicId?: string): UsageByRole[] {
  return db.prepare(`SELECT epic_id, role, COUNT(*) AS runs, SUM(cost_usd) AS cost_usd, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens
      FROM runs WHERE epic_id IS NOT NULL ${epicId ? 'AND epic_id = @epic' : ''} AND (cost_usd IS NOT NULL OR input_tokens IS NOT NULL OR output_tokens IS NOT NULL)
      GROUP BY epic_id, role ORDER BY epic_id, role`).all(...(epicId ? [{ epic: epicId }] : [])) as UsageByRole[];
}

/** Runs started by the given scheduler launches (any status). */
export function runsByLaunch(db: Database, launchIds: readonly string[]): RunView[] {
  if (launchIds.length === 0) return [];
  return db.prepare(`SELECT * FROM runs WHERE launch_id IN (${launchIds.map(() => '?').join(', ')})`).all(...launchIds) as RunView[];
}

/** What fault counting reads of an ended run: no output (a run's tail is read only for the last failure). */
export type EndedRun = Pick<RunView, 'id' | 'role' | 'status' | 'exit_code' | 'outcome_reason' | 'started_at' | 'ended_at'>;

/** A role's ended runs on an epic since `since` (ISO; '' for all), newest first, read one at a time. */
export function endedRuns(db: Database, epicId: string, role: string, since: string, limit = 200): IterableIterator<EndedRun> {
  return cached(db, `SELECT id, role, status, exit_code, outcome_reason, started_at, ended_at FROM runs
    WHERE epic_id = ? AND role = ? AND status != 'running' AND started_at >= ? ORDER BY id DESC LIMIT ?`).iterate(epicId, role, since, limit) as IterableIterator<EndedRun>;
}

/** Agent runs, newest first; `active` keeps only those still running. */
export function listRuns(db: Database, options: { active?: boolean; epicId?: string; limit?: number } = {}): RunView[] {
  const where: string[] = [];
  const args: (string | number)[] = [];
  if (options.active) where.push(`status = 'running'`);
  if (options.epicId) { where.push('epic_id = ?'); args.push(options.epicId); }
  args.push(options.limit ?? 200);
  return db.prepare(`SELECT * FROM runs ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY id DESC LIMIT ?`).all(...args) as RunView[];
}

/** Verification results, newest first. */
export function listVerifications(db: Database, options: { epicId?: string; limit?: number } = {}): VerificationView[] {
  return (options.epicId
    ? db.prepare('SELECT * FROM verifications WHERE epic_id = ? ORDER BY id DESC LIMIT ?').all(options.epicId, options.limit ?? 50)
    : db.prepare('SELECT * FROM verifications ORDER BY id DESC LIMIT ?').all(options.limit ?? 50)) as VerificationView[];
}

/** Stores one verification result (one command of a pass; rows of a pass share run_id). */
export function recordVerification(db: Database, now: string, v: { runId: number | null; epicId: string | null; planPath: string | null; stepAnchor: string | null; command: string; exitCode: number | null; verdict: 'pass' | 'fail'; durationMs: number; outputTail: string }): void {
  db.prepare(`INSERT INTO verifications (run_id, epic_id, plan_path, step_anchor, command, exit_code, verdict, duration_ms, output_tail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(v.runId, v.epicId, v.planPath, v.stepAnchor, v.command, v.exitCode, v.verdict, v.durationMs, v.outputTail, now);
}

/** The newest run of a role on an epic (any status), or null. */
export function latestRun(db: Database, epicId: string, role?: string): RunView | null {
  return (role
    ? db.prepare('SELECT * FROM runs WHERE epic_id = ? AND role = ? ORDER BY id DESC LIMIT 1').get(epicId, role)
    : db.prepare('SELECT * FROM runs WHERE epic_id = ? ORDER BY id DESC LIMIT 1').get(epicId)) as RunView | undefined ?? null;
}

/** The verdict of the epic's newest verification result, or null. */
export function lastVerdict(db: Database, epicId: string): 'pass' | 'fail' | null {
  return (db.prepare('SELECT verdict FROM verifications WHERE epic_id = ? ORDER BY id DESC LIMIT 1').pluck().get(epicId) as 'pass' | 'fail' | undefined) ?? null;
}
