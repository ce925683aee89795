import type { AgentRunPort } from '../shared/agentRun.ts';
import { runValues, usageValues, type RunsPort } from '../shared/runs.ts';
import type { RunRow } from '../shared/schedulerSnapshot.ts';
import { type RunView, type UsageByRole, type VerificationView } from '../runTypes.ts';
import type { SqliteMethods } from './port.ts';
import { SESSION_ROLES_SQL } from '../shared/roleSql.ts';

/** Agent runs and verification results (shared/runs.ts, shared/agentRun.ts); pids are of this machine, where the database lives. */
export const runsSql: SqliteMethods<RunsPort & AgentRunPort> = {
  insertRun(run) {
    return Number(
      this.db
        .prepare(
          `INSERT INTO runs (epic_id, plan_path, step_anchor, role, iteration, worktree, agent_id, command, pid, status, started_at, claim_token, head_before, launch_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)`,
        )
        .run(...runValues(run, this.now)).lastInsertRowid,
    );
  },
  runRow(id) {
    return this.db.prepare('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
  },
  setAgentPid(id, pid) {
    this.db.prepare('UPDATE runs SET agent_pid = ? WHERE id = ?').run(pid, id);
  },
  progressMarks(epicId, planPath, stepAnchor) {
    const count = (sql: string, ...args: (string | null)[]) =>
      Number(
        this.db
          .prepare(sql)
          .pluck()
          .get(...args),
      );
    return {
      proposals: count('SELECT COUNT(*) FROM plan_versions WHERE epic_id = ?', epicId),
      signals: count('SELECT COUNT(*) FROM signals WHERE epic_id = ?', epicId),
      itemsDone:
        planPath && stepAnchor
          ? count(
              `SELECT COUNT(*) FROM checklist_items WHERE plan_path = ? AND status = 'completed'
        AND step_anchor IN (SELECT anchor FROM steps WHERE plan_path = ? AND (anchor = ? OR parent_anchor = ?))`,
              planPath,
              planPath,
              stepAnchor,
              stepAnchor,
            )
          : 0,
    };
  },
  finishRunRow(id, from, status, reason, end) {
    return (
      this.db
        .prepare(
          `UPDATE runs SET status = ?, ended_at = ?, exit_code = ?, outcome_reason = ?, output_tail = ?, head_after = ? WHERE id = ? AND status = ?`,
        )
        .run(status, this.now, end.exitCode, reason, end.outputTail ?? '', end.headAfter ?? null, id, from).changes ===
      1
    );
  },
  markRunLost(id, reason) {
    return (
      this.db
        .prepare(
          `UPDATE runs SET status = 'lost', ended_at = ?, outcome_reason = ? WHERE id = ? AND status = 'running'`,
        )
        .run(this.now, reason, id).changes === 1
    );
  },
  runningWithPid() {
    return this.db
      .prepare(`SELECT * FROM runs WHERE status = 'running' AND pid IS NOT NULL ORDER BY id`)
      .all() as RunRow[];
  },
  recordRunUsage(id, usage) {
    this.db
      .prepare(
        `UPDATE runs SET cost_usd = ?, input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, premium_requests = ? WHERE id = ?`,
      )
      .run(...usageValues(usage), id);
  },
  listRuns(options) {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (options.active) where.push(`status = 'running'`);
    if (options.epicId) {
      where.push('epic_id = ?');
      args.push(options.epicId);
    }
    args.push(options.limit ?? 200);
    return this.db
      .prepare(`SELECT * FROM runs ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY id DESC LIMIT ?`)
      .all(...args) as RunView[];
  },
  runsByLaunch(launchIds) {
    if (launchIds.length === 0) return [];
    return this.db
      .prepare(`SELECT * FROM runs WHERE launch_id IN (${launchIds.map(() => '?').join(', ')}) ORDER BY id`)
      .all(...launchIds) as RunView[];
  },
  latestRun(epicId, role) {
    return (
      role
        ? this.db
            .prepare('SELECT * FROM runs WHERE epic_id = ? AND role = ? ORDER BY id DESC LIMIT 1')
            .get(epicId, role)
        : this.db.prepare('SELECT * FROM runs WHERE epic_id = ? ORDER BY id DESC LIMIT 1').get(epicId)
    ) as RunView | undefined;
  },
  usageByEpic(epicId) {
    return this.db
      .prepare(
        `SELECT epic_id, role, COUNT(*) AS runs, SUM(cost_usd) AS cost_usd, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens
        FROM runs WHERE epic_id IS NOT NULL ${epicId ? 'AND epic_id = @epic' : ''} AND (cost_usd IS NOT NULL OR input_tokens IS NOT NULL OR output_tokens IS NOT NULL)
        GROUP BY epic_id, role ORDER BY epic_id, role`,
      )
      .all(...(epicId ? [{ epic: epicId }] : [])) as UsageByRole[];
  },
  sessionRows(epicId) {
    return this.db
      .prepare(
        `SELECT epic_id, role, COUNT(*) AS n FROM runs WHERE epic_id IS NOT NULL AND role IN (${SESSION_ROLES_SQL}) ${epicId ? 'AND epic_id = ?' : ''}
      GROUP BY epic_id, role ORDER BY epic_id`,
      )
      .all(...(epicId ? [epicId] : [])) as { epic_id: string; role: string; n: number }[];
  },
  insertVerifications(entries) {
    const insert = this.db
      .prepare(`INSERT INTO verifications (run_id, epic_id, plan_path, step_anchor, command, exit_code, verdict, duration_ms, output_tail, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (const v of entries)
      insert.run(
        v.runId,
        v.epicId,
        v.planPath,
        v.stepAnchor,
        v.command,
        v.exitCode,
        v.verdict,
        v.durationMs,
        v.outputTail,
        this.now,
      );
  },
  listVerifications(options) {
    return (
      options.epicId
        ? this.db
            .prepare('SELECT * FROM verifications WHERE epic_id = ? ORDER BY id DESC LIMIT ?')
            .all(options.epicId, options.limit ?? 50)
        : this.db.prepare('SELECT * FROM verifications ORDER BY id DESC LIMIT ?').all(options.limit ?? 50)
    ) as VerificationView[];
  },
  lastVerdict(epicId) {
    return (
      (this.db
        .prepare('SELECT verdict FROM verifications WHERE epic_id = ? ORDER BY id DESC LIMIT 1')
        .pluck()
        .get(epicId) as 'pass' | 'fail' | undefined) ?? null
    );
  },
  latestProposedPath(epicId) {
    return this.db
      .prepare('SELECT plan_path FROM plan_versions WHERE epic_id = ? ORDER BY version DESC LIMIT 1')
      .pluck()
      .get(epicId) as string | undefined;
  },
};
