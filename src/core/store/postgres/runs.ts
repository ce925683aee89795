import { UsageError } from '../../errors.ts';
import { AGENT_ROLES, type AgentRole } from '../../../shared/roles.ts';
import { SETUP_ROLE, type RunUsage, type RunView, type SessionCounts, type UsageByRole } from '../runTypes.ts';
import type { Tx } from './session.ts';

/** A run as SQLite's `SELECT *` gives it (the host stays inside the store; `command` is jsonb here). */
const RUN_COLUMNS = `id, epic_id, plan_path, step_anchor, role, iteration, worktree, agent_id, command, pid, status, started_at, ended_at, exit_code,
  outcome_reason, claim_token, output_tail, head_before, head_after, agent_pid, launch_id,
  cost_usd, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, premium_requests`;

/** A run row with its host, for the checks that only mean something on the host that started it. */
export type PgRunRow = RunView & { host: string | null };

/** Runs matching `where` (binds from $2; $1 is the repository), as the Store returns them. */
export async function selectRuns(tx: Tx, where: string, args: readonly unknown[] = [], tail = 'ORDER BY id DESC'): Promise<PgRunRow[]> {
  const rows = await tx.q<PgRunRow & { command: unknown }>(`SELECT ${RUN_COLUMNS}, host FROM runs WHERE repo_id = $1 AND ${where} ${tail}`, [tx.repo, ...args]);
  return rows.map((r) => ({ ...r, command: typeof r.command === 'string' ? r.command : JSON.stringify(r.command) }));
}

/** The run as the Store returns it (no host: the same shape on every backend). */
export function runView(row: PgRunRow): RunView {
  const { host: _h, ...view } = row;
  return view;
}

/** The run's row (locked FOR UPDATE with `lock`); an unknown run is refused. */
export async function getRun(tx: Tx, runId: number, lock = false): Promise<PgRunRow> {
  const row = (await selectRuns(tx, 'id = $2', [runId], lock ? 'FOR UPDATE' : ''))[0];
  if (!row) throw new UsageError('unknown_run', `no run ${runId} (see 'springfield runs')`);
  return row;
}

/** Stores the usage read from a run's output on its row; returns the row as it is now. */
export async function recordRunUsage(tx: Tx, run: RunView, usage: RunUsage | null): Promise<RunView> {
  if (!usage) return run;
  await tx.q(`UPDATE runs SET cost_usd = $3, input_tokens = $4, output_tokens = $5, cache_read_tokens = $6, cache_write_tokens = $7, premium_requests = $8
    WHERE repo_id = $1 AND id = $2`, [tx.repo, run.id, usage.costUsd, usage.inputTokens, usage.outputTokens, usage.cacheReadTokens, usage.cacheWriteTokens, usage.premiumRequests]);
  return runView(await getRun(tx, run.id));
}

/** Agent runs, newest first; `active` keeps only those still running. */
export async function listRuns(tx: Tx, options: { active?: boolean; epicId?: string; limit?: number } = {}): Promise<RunView[]> {
  const where = ['true'];
  const args: unknown[] = [];
  if (options.active) where.push(`status = 'running'`);
  if (options.epicId) { args.push(options.epicId); where.push(`epic_id = $${args.length + 1}`); }
  args.push(options.limit ?? 200);
  return (await selectRuns(tx, where.join(' AND '), args, `ORDER BY id DESC LIMIT $${args.length + 1}`)).map(runView);
}

/** Runs started by the given scheduler launches (any status). */
export async function runsByLaunch(tx: Tx, launchIds: readonly string[]): Promise<RunView[]> {
  if (launchIds.length === 0) return [];
  return (await selectRuns(tx, 'launch_id = ANY($2::text[])', [launchIds], 'ORDER BY id')).map(runView);
}

/** The newest run of a role on an epic (any status), or null. */
export async function latestRun(tx: Tx, epicId: string, role?: string): Promise<RunView | null> {
  const rows = role ? await selectRuns(tx, 'epic_id = $2 AND role = $3', [epicId, role], 'ORDER BY id DESC LIMIT 1')
    : await selectRuns(tx, 'epic_id = $2', [epicId], 'ORDER BY id DESC LIMIT 1');
  return rows[0] ? runView(rows[0]) : null;
}

/** Tokens and cost per epic and role, from the runs that reported usage. */
export function usageByEpic(tx: Tx, epicId?: string): Promise<UsageByRole[]> {
  return tx.q<UsageByRole>(`SELECT epic_id, role, count(*)::int AS runs, sum(cost_usd) AS cost_usd, sum(input_tokens)::bigint AS input_tokens, sum(output_tokens)::bigint AS output_tokens
    FROM runs WHERE repo_id = $1 AND epic_id IS NOT NULL ${epicId ? 'AND epic_id = $2' : ''} AND (cost_usd IS NOT NULL OR input_tokens IS NOT NULL OR output_tokens IS NOT NULL)
    GROUP BY epic_id, role ORDER BY epic_id, role COLLATE "C"`, epicId ? [tx.repo, epicId] : [tx.repo]);
}

/** Sessions spent per epic: every recorded agent run, counted by role (setup is no session). */
export async function countSessions(tx: Tx, epicId?: string): Promise<Record<string, SessionCounts>> {
  const rows = await tx.q<{ epic_id: string; role: string; n: number }>(`SELECT epic_id, role, count(*)::int AS n FROM runs
    WHERE repo_id = $1 AND epic_id IS NOT NULL AND role <> '${SETUP_ROLE}' ${epicId ? 'AND epic_id = $2' : ''} GROUP BY epic_id, role ORDER BY epic_id`, epicId ? [tx.repo, epicId] : [tx.repo]);
  const out: Record<string, SessionCounts> = {};
  for (const r of rows) {
    const counts = (out[r.epic_id] ??= { lisa: 0, ralph: 0, bart: 0, lovejoy: 0, total: 0 });
    if ((AGENT_ROLES as readonly string[]).includes(r.role)) counts[r.role as AgentRole] += r.n;
    counts.total += r.n;
  }
  return out;
}
