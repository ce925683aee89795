import type { AgentRunPort } from '../shared/agentRun.ts';
import { runValues, usageValues, type RunsPort } from '../shared/runs.ts';
import type { RunRow } from '../shared/schedulerSnapshot.ts';
import { type RunView, type UsageByRole, type VerificationEntry, type VerificationView } from '../runTypes.ts';
import type { PgMethods } from './port.ts';
import type { Tx } from './session.ts';
import { SESSION_ROLES_SQL } from '../shared/roleSql.ts';

/** A run as SQLite's `SELECT *` gives it (`command` is jsonb here, text there). */
const RUN_COLUMNS = `id, epic_id, plan_path, step_anchor, role, iteration, worktree, agent_id, command, pid, status, started_at, ended_at, exit_code,
  outcome_reason, claim_token, output_tail, head_before, head_after, agent_pid, launch_id,
  cost_usd, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, premium_requests`;

/** Runs matching `where` (binds from $2; $1 is the repository), with their hosts. */
export async function selectRuns(
  tx: Tx,
  where: string,
  args: readonly unknown[] = [],
  tail = 'ORDER BY id DESC',
): Promise<RunRow[]> {
  const rows = await tx.q<RunRow & { command: unknown }>(
    `SELECT ${RUN_COLUMNS}, host FROM runs WHERE repo_id = $1 AND ${where} ${tail}`,
    [tx.repo, ...args],
  );
  return rows.map((r) => ({ ...r, command: typeof r.command === 'string' ? r.command : JSON.stringify(r.command) }));
}

/** The run without its host (the same shape on every backend). */
function view(row: RunRow): RunView {
  const { host: _h, ...v } = row;
  return v;
}

const VERIFICATION_COLUMNS =
  'id, run_id, epic_id, plan_path, step_anchor, command, exit_code, verdict, duration_ms, output_tail, created_at';

/** Agent runs and verification results (shared/runs.ts, shared/agentRun.ts); a run is of the host that started it, whose pids it names. */
export const runsPg: PgMethods<RunsPort & AgentRunPort> = {
  async insertRun(run) {
    return Number(
      (
        await this.tx.q<{ id: number }>(
          `INSERT INTO runs (repo_id, host, epic_id, plan_path, step_anchor, role, iteration, worktree, agent_id, command, pid, started_at, claim_token, head_before, launch_id, status)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, 'running') RETURNING id`,
          [this.tx.repo, this.host, ...runValues(run, this.now)],
        )
      )[0]?.id,
    );
  },
  async runRow(id, lock = false) {
    return (await selectRuns(this.tx, 'id = $2', [id], lock ? 'FOR UPDATE' : ''))[0];
  },
  async setAgentPid(id, pid) {
    await this.tx.q('UPDATE runs SET agent_pid = $3 WHERE repo_id = $1 AND id = $2', [this.tx.repo, id, pid]);
  },
  async progressMarks(epicId, planPath, stepAnchor) {
    const row = (
      await this.tx.q<{ proposals: number; signals: number; items: number }>(
        `SELECT
        (SELECT count(*) FROM plan_versions WHERE repo_id = $1 AND epic_id = $2)::int AS proposals,
        (SELECT count(*) FROM signals WHERE repo_id = $1 AND epic_id = $2)::int AS signals,
        (SELECT count(*) FROM checklist_items i WHERE i.repo_id = $1 AND i.plan_path = $3 AND i.status = 'completed'
          AND i.step_anchor IN (SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $3 AND (anchor = $4 OR parent_anchor = $4)))::int AS items`,
        [this.tx.repo, epicId, planPath, stepAnchor],
      )
    )[0];
    return {
      proposals: row?.proposals ?? 0,
      signals: row?.signals ?? 0,
      itemsDone: planPath && stepAnchor ? (row?.items ?? 0) : 0,
    };
  },
  async finishRunRow(id, from, status, reason, end) {
    return (
      (
        await this.tx.q(
          `UPDATE runs SET status = $3, ended_at = $4, exit_code = $5, outcome_reason = $6, output_tail = $7, head_after = $8
      WHERE repo_id = $1 AND id = $2 AND status = $9 RETURNING id`,
          [this.tx.repo, id, status, this.now, end.exitCode, reason, end.outputTail ?? '', end.headAfter ?? null, from],
        )
      ).length === 1
    );
  },
  async markRunLost(id, reason) {
    return (
      (
        await this.tx.q(
          `UPDATE runs SET status = 'lost', ended_at = $3, outcome_reason = $4 WHERE repo_id = $1 AND id = $2 AND status = 'running' AND host = $5 RETURNING id`,
          [this.tx.repo, id, this.now, reason, this.host],
        )
      ).length === 1
    );
  },
  runningWithPid() {
    return selectRuns(this.tx, `status = 'running' AND host = $2 AND pid IS NOT NULL`, [this.host], 'ORDER BY id');
  },
  async recordRunUsage(id, usage) {
    await this.tx.q(
      `UPDATE runs SET cost_usd = $3, input_tokens = $4, output_tokens = $5, cache_read_tokens = $6, cache_write_tokens = $7, premium_requests = $8
      WHERE repo_id = $1 AND id = $2`,
      [this.tx.repo, id, ...usageValues(usage)],
    );
  },
  async listRuns(options) {
    const where = ['true'];
    const args: unknown[] = [];
    if (options.active) where.push(`status = 'running'`);
    if (options.epicId) {
      args.push(options.epicId);
      where.push(`epic_id = $${args.length + 1}`);
    }
    args.push(options.limit ?? 200);
    return (await selectRuns(this.tx, where.join(' AND '), args, `ORDER BY id DESC LIMIT $${args.length + 1}`)).map(
      view,
    );
  },
  async runsByLaunch(launchIds) {
    if (launchIds.length === 0) return [];
    return (await selectRuns(this.tx, 'launch_id = ANY($2::text[])', [launchIds], 'ORDER BY id')).map(view);
  },
  async latestRun(epicId, role) {
    const rows = role
      ? await selectRuns(this.tx, 'epic_id = $2 AND role = $3', [epicId, role], 'ORDER BY id DESC LIMIT 1')
      : await selectRuns(this.tx, 'epic_id = $2', [epicId], 'ORDER BY id DESC LIMIT 1');
    return rows[0] ? view(rows[0]) : undefined;
  },
  usageByEpic(epicId) {
    return this.tx.q<UsageByRole>(
      `SELECT epic_id, role, count(*)::int AS runs, sum(cost_usd) AS cost_usd, sum(input_tokens)::bigint AS input_tokens, sum(output_tokens)::bigint AS output_tokens
      FROM runs WHERE repo_id = $1 AND epic_id IS NOT NULL ${epicId ? 'AND epic_id = $2' : ''} AND (cost_usd IS NOT NULL OR input_tokens IS NOT NULL OR output_tokens IS NOT NULL)
      GROUP BY epic_id, role ORDER BY epic_id, role COLLATE "C"`,
      epicId ? [this.tx.repo, epicId] : [this.tx.repo],
    );
  },
  sessionRows(epicId) {
    return this.tx.q<{ epic_id: string; role: string; n: number }>(
      `SELECT epic_id, role, count(*)::int AS n FROM runs
      WHERE repo_id = $1 AND epic_id IS NOT NULL AND role IN (${SESSION_ROLES_SQL}) ${epicId ? 'AND epic_id = $2' : ''} GROUP BY epic_id, role ORDER BY epic_id`,
      epicId ? [this.tx.repo, epicId] : [this.tx.repo],
    );
  },
  async insertVerifications(entries) {
    if (entries.length === 0) return;
    // The pass in order, in one statement.
    const col = <T>(f: (v: VerificationEntry) => T) => entries.map(f);
    await this.tx.q(
      `INSERT INTO verifications (repo_id, run_id, epic_id, plan_path, step_anchor, command, exit_code, verdict, duration_ms, output_tail, created_at)
      SELECT $1, v.run_id, v.epic_id, v.plan_path, v.step_anchor, v.command, v.exit_code, v.verdict, v.duration_ms, v.output_tail, $2
      FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::int[], $11::text[])
        WITH ORDINALITY AS v(run_id, epic_id, plan_path, step_anchor, command, exit_code, verdict, duration_ms, output_tail, n)
      ORDER BY v.n`,
      [
        this.tx.repo,
        this.now,
        col((v) => v.runId),
        col((v) => v.epicId),
        col((v) => v.planPath),
        col((v) => v.stepAnchor),
        col((v) => v.command),
        col((v) => v.exitCode),
        col((v) => v.verdict),
        col((v) => v.durationMs),
        col((v) => v.outputTail),
      ],
    );
  },
  listVerifications(options) {
    return options.epicId
      ? this.tx.q<VerificationView>(
          `SELECT ${VERIFICATION_COLUMNS} FROM verifications WHERE repo_id = $1 AND epic_id = $2 ORDER BY id DESC LIMIT $3`,
          [this.tx.repo, options.epicId, options.limit ?? 50],
        )
      : this.tx.q<VerificationView>(
          `SELECT ${VERIFICATION_COLUMNS} FROM verifications WHERE repo_id = $1 ORDER BY id DESC LIMIT $2`,
          [this.tx.repo, options.limit ?? 50],
        );
  },
  async lastVerdict(epicId) {
    return (
      (
        await this.tx.q<{ verdict: 'pass' | 'fail' }>(
          'SELECT verdict FROM verifications WHERE repo_id = $1 AND epic_id = $2 ORDER BY id DESC LIMIT 1',
          [this.tx.repo, epicId],
        )
      )[0]?.verdict ?? null
    );
  },
  async latestProposedPath(epicId) {
    return (
      await this.tx.q<{ plan_path: string }>(
        'SELECT plan_path FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 ORDER BY version DESC LIMIT 1',
        [this.tx.repo, epicId],
      )
    )[0]?.plan_path;
  },
};
