import { COMPLEXITY_POLICY, buildBudget } from '../../epics/complexity.ts';
import type { Role } from '../../epics/transitions.ts';
import { FAULT_ROLES, type EpicSnapshot, type FaultRole, type RoleFaults, type SchedulerSnapshot } from '../../scheduler/types.ts';
import type { EpicRow } from '../epicTypes.ts';
import { listEpics } from './epics.ts';
import { partitionSteps } from './readiness.ts';
import { selectRuns } from './runs.ts';
import type { Tx } from './session.ts';

interface Marker {
  id: number;
  at: string;
  action: string;
}

/**
 * Everything decide() reads, as on SQLite, in one REPEATABLE READ snapshot. Runs of every host are
 * listed (they take slots and act on epics), but only this host's carry their pids: a pid names a
 * process only where it was started, so the scheduler never signals another host's (docs/postgres.md, "Per-host facts").
 */
export async function schedulerSnapshot(tx: Tx): Promise<SchedulerSnapshot> {
  const epics: EpicSnapshot[] = [];
  for (const e of await listEpics(tx)) if (e.status !== 'done') epics.push(await epicSnapshot(tx, e));
  const running = await selectRuns(tx, `status = 'running'`, [], 'ORDER BY id DESC LIMIT 1000');
  const runs = running.map((r) => {
    const mine = r.host === tx.host;
    return { id: r.id, epicId: r.epic_id, stepAnchor: r.step_anchor, role: r.role as Role | 'setup', startedAt: r.started_at, pid: mine ? r.pid : null, agentPid: mine ? r.agent_pid : null };
  });
  return { epics, runs };
}

async function lastEvent(tx: Tx, epicId: string, where: string): Promise<Marker | undefined> {
  return (await tx.q<Marker>(`SELECT id, at, action FROM events WHERE repo_id = $1 AND epic_id = $2 AND entity = 'epic' AND ${where} ORDER BY id DESC LIMIT 1`, [tx.repo, epicId]))[0];
}

interface Counts {
  plan_path: string | null;
  last_ralph_end: string | null;
  last_ralph_success: string | null;
  signals_this_iteration: number;
  bart_runs: number;
  awaiting_approval: boolean;
  awaiting_person: number;
  setup_done: boolean;
}

async function epicSnapshot(tx: Tx, e: EpicRow): Promise<EpicSnapshot> {
  const entered = await lastEvent(tx, e.id, `to_status = 'in_progress'`);
  const implementedAt = await lastEvent(tx, e.id, `to_status = 'implemented'`);
  const approvedAt = await lastEvent(tx, e.id, `action IN ('plan_approved', 'new_plan_approved')`);
  const since = entered?.at ?? '';
  // $3: the start of the review iteration (null before the epic was implemented).
  const c = (await tx.q<Counts>(`SELECT
      (SELECT plan_path FROM plans WHERE repo_id = $1 AND epic_id = $2 ORDER BY updated_at DESC LIMIT 1) AS plan_path,
      (SELECT max(ended_at) FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role = 'ralph' AND ended_at IS NOT NULL
        AND (status = 'succeeded' OR (head_after IS NOT NULL AND head_after IS DISTINCT FROM head_before))) AS last_ralph_end,
      (SELECT max(ended_at) FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role = 'ralph' AND status = 'succeeded') AS last_ralph_success,
      CASE WHEN $3::timestamptz IS NULL THEN 0 ELSE (SELECT count(*) FROM signals WHERE repo_id = $1 AND epic_id = $2 AND created_at >= $3)::int END AS signals_this_iteration,
      CASE WHEN $3::timestamptz IS NULL THEN 0 ELSE (SELECT count(*) FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role = 'bart' AND ended_at IS NOT NULL AND started_at >= $3)::int END AS bart_runs,
      EXISTS (SELECT 1 FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 AND status = 'proposed') AS awaiting_approval,
      (SELECT count(*) FROM signals WHERE repo_id = $1 AND epic_id = $2 AND status = 'awaiting_person')::int AS awaiting_person,
      ($4::text IS NOT NULL AND EXISTS (SELECT 1 FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role = 'setup' AND status = 'succeeded' AND worktree = $4)) AS setup_done`,
  [tx.repo, e.id, implementedAt?.at ?? null, e.worktree_path]))[0] as Counts;
  const p = c.plan_path ? await partitionSteps(tx, c.plan_path) : undefined;
  // One batch per verification pass (rows share run_id); a batch fails on its failing command.
  const rows = await tx.q<{ run_id: number | null; command: string; exit_code: number | null; verdict: string; created_at: string }>(`SELECT run_id, command, exit_code, verdict, created_at
    FROM verifications WHERE repo_id = $1 AND epic_id = $2 AND ($3::timestamptz IS NULL OR created_at >= $3) ORDER BY id DESC`, [tx.repo, e.id, approvedAt?.at ?? null]);
  const batches: { key: string; verdict: string; created_at: string }[] = [];
  for (const r of rows) {
    const batch = batches.at(-1);
    const id = `${r.run_id ?? r.created_at}`;
    if (batch && batch.key.startsWith(`${id}|`)) {
      if (r.verdict === 'fail') Object.assign(batch, { verdict: 'fail', key: `${id}|${r.command}|${r.exit_code}` });
      continue;
    }
    batches.push({ key: `${id}|${r.verdict === 'fail' ? `${r.command}|${r.exit_code}` : ''}`, verdict: r.verdict, created_at: r.created_at });
  }
  const last = batches.find((b) => b.created_at >= since);
  const signature = (b: { key: string }) => b.key.slice(b.key.indexOf('|'));
  let streak = 0;
  for (const b of batches) {
    if (b.verdict !== 'fail' || signature(b) !== signature(batches[0] as { key: string })) break;
    streak++;
  }
  const unverifiedBuild = c.last_ralph_end !== null && c.last_ralph_end >= since && (!last || c.last_ralph_end > last.created_at);
  const reworkPending = entered?.action === 'signal_implementation_failure' && !(c.last_ralph_success !== null && c.last_ralph_success > (entered?.at ?? ''));
  return {
    id: e.id, title: e.title, status: e.status, statusReason: e.status_reason, priority: e.priority, complexity: e.complexity,
    iteration: e.iteration, buildBudget: buildBudget(e), planIteration: e.plan_iteration, planBudget: COMPLEXITY_POLICY[e.complexity].planIterations,
    planPath: c.plan_path,
    awaitingApproval: c.awaiting_approval,
    planner: e.planner,
    steps: { total: p?.all.length ?? 0, completed: p?.completed.length ?? 0, ready: p?.ready ?? [], claimedLive: p?.claimed ?? [] },
    worktree: e.worktree_path,
    verification: { lastVerdict: last ? (last.verdict === 'pass' ? 'pass' : 'fail') : null, sameFailureStreak: streak, running: false, unverifiedBuild },
    reworkPending,
    review: { signalsThisIteration: c.signals_this_iteration, bartRunsThisIteration: c.bart_runs },
    signalsAwaitingPerson: c.awaiting_person,
    mergeApprovedByPerson: e.merge_approved_by !== null,
    mergeQueued: false,
    faults: await faultsOf(tx, e.id),
    pullRequest: e.pr_url ? { url: e.pr_url, checkedAt: e.pr_checked_at } : null,
    setupDone: c.setup_done,
  };
}

/**
 * Each role's failures in a row, newest first, since a person last acted on the epic (docs/scheduler-faults.md):
 * as on SQLite, up to 200 ended runs per role are read without their output, then the tail of each role's newest failure.
 */
async function faultsOf(tx: Tx, epicId: string): Promise<Partial<Record<FaultRole, RoleFaults>>> {
  const reset = (await lastEvent(tx, epicId, `action IN ('retry', 'resume', 'plan_approved', 'new_plan_approved')`))?.at ?? null;
  const ended = await tx.q<{ id: number; role: FaultRole; status: string; exit_code: number | null; outcome_reason: string | null; started_at: string; ended_at: string | null }>(`SELECT
      id, role, status, exit_code, outcome_reason, started_at, ended_at FROM (SELECT id, role, status, exit_code, outcome_reason, started_at, ended_at,
        row_number() OVER (PARTITION BY role ORDER BY id DESC) AS n
      FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role = ANY($3::text[]) AND status <> 'running' AND ($4::timestamptz IS NULL OR started_at >= $4)) r
    WHERE n <= 200 ORDER BY id DESC`, [tx.repo, epicId, FAULT_ROLES, reset]);
  const out: Partial<Record<FaultRole, RoleFaults>> = {};
  const settled = new Set<FaultRole>();
  for (const r of ended) {
    if (settled.has(r.role)) continue;
    if (r.status === 'succeeded') {
      settled.add(r.role);
      continue;
    }
    if (r.status === 'stopped') continue; // a person's stop is no fault (docs/scheduler-faults.md)
    const known = out[r.role];
    out[r.role] = known ? { ...known, consecutive: known.consecutive + 1 } : {
      consecutive: 1, lastEndedAt: r.ended_at ?? r.started_at, lastRunId: r.id, lastOutcome: r.status, lastExitCode: r.exit_code, lastReason: r.outcome_reason, lastOutput: '',
    };
  }
  // Only the newest failure's output is shown, so only its tail is read.
  const faults = Object.entries(out) as [FaultRole, RoleFaults][];
  if (faults.length === 0) return out;
  const tails = await tx.q<{ id: number; output_tail: string }>('SELECT id, output_tail FROM runs WHERE repo_id = $1 AND id = ANY($2::bigint[])', [tx.repo, faults.map(([, f]) => f.lastRunId)]);
  for (const [role, f] of faults) out[role] = { ...f, lastOutput: (tails.find((t) => t.id === f.lastRunId)?.output_tail ?? '').split('\n').slice(-10).join('\n') };
  return out;
}
