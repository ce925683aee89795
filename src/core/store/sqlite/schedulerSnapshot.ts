import { COMPLEXITY_POLICY, buildBudget } from '../../epics/complexity.ts';
import { listEpics } from './epics.ts';
import type { VerificationState } from '../../epics/completion.ts';
import type { Role } from '../../epics/transitions.ts';
import { FAULT_ROLES, type EpicSnapshot, type FaultRole, type RoleFaults, type SchedulerSnapshot } from '../../scheduler/types.ts';
import { partitionSteps } from './readiness.ts';
import { endedRuns, listRuns } from './runs.ts';
import { cached, type Database } from './sqlite.ts';
import type { EpicRow } from '../epicTypes.ts';

interface Marker {
  id: number;
  at: string;
  action: string;
}

/** Reads everything decide() needs in one pass over the store (call it inside a read transaction). */
export function schedulerSnapshot(db: Database, now: Date): SchedulerSnapshot {
  const at = now.toISOString();
  const epics = listEpics(db).filter((e) => e.status !== 'done').map((e) => epicSnapshot(db, at, e));
  const runs = listRuns(db, { active: true, limit: 1000 }).map((r) => ({ id: r.id, epicId: r.epic_id, stepAnchor: r.step_anchor, role: r.role as Role | 'setup', startedAt: r.started_at, pid: r.pid, agentPid: r.agent_pid }));
  return { epics, runs };
}

function lastEvent(db: Database, epicId: string, where: string): Marker | undefined {
  return cached(db, `SELECT id, at, action FROM events WHERE epic_id = ? AND entity = 'epic' AND ${where} ORDER BY id DESC LIMIT 1`).get(epicId) as Marker | undefined;
}

/** The epic's latest events that decide() measures from, in one walk back over its epic-level events. */
interface Markers {
  /** Last entered in_progress. */
  readonly entered?: Marker;
  /** Last became implemented. */
  readonly implemented?: Marker;
  /** Its plan last approved. */
  readonly approved?: Marker;
  /** A person last acted: a retry, a resume, a plan approval (docs/scheduler-faults.md). */
  readonly reset?: Marker;
}

function epicMarkers(db: Database, epicId: string): Markers {
  const m: { -readonly [K in keyof Markers]: Marker } = {};
  const rows = cached(db, `SELECT id, at, action, to_status FROM events WHERE epic_id = ? AND entity = 'epic' ORDER BY id DESC`)
    .iterate(epicId) as IterableIterator<Marker & { to_status: string | null }>;
  for (const { to_status: to, ...e } of rows) {
    if (to === 'in_progress') m.entered ??= e;
    if (to === 'implemented') m.implemented ??= e;
    const approval = e.action === 'plan_approved' || e.action === 'new_plan_approved';
    if (approval) m.approved ??= e;
    if (approval || e.action === 'retry' || e.action === 'resume') m.reset ??= e;
    if (m.entered && m.implemented && m.approved && m.reset) break;
  }
  return m;
}

function epicSnapshot(db: Database, at: string, e: EpicRow): EpicSnapshot {
  const planPath = cached(db, 'SELECT plan_path FROM plans WHERE epic_id = ? ORDER BY updated_at DESC LIMIT 1').pluck().get(e.id) as string | undefined;
  const p = planPath ? partitionSteps(db, planPath, at) : undefined;
  const { entered, implemented: implementedAt, approved: approvedAt, reset } = epicMarkers(db, e.id);
  const v = epicVerification(db, e.id, entered, approvedAt);
  // Latest first on idx_runs_epic, stopping at the first match (MAX() with a condition reads them all).
  const lastRalphSuccess = (cached(db, `SELECT ended_at FROM runs WHERE epic_id = ? AND role = 'ralph' AND ended_at IS NOT NULL AND status = 'succeeded'
    ORDER BY ended_at DESC LIMIT 1`).pluck().get(e.id) as string | undefined) ?? null;
  const reworkPending = entered?.action === 'signal_implementation_failure' && !(lastRalphSuccess !== null && lastRalphSuccess > (entered?.at ?? ''));
  const iterationStart = implementedAt?.at ?? '';
  const signalsThisIteration = implementedAt ? Number(cached(db, 'SELECT COUNT(*) FROM signals WHERE epic_id = ? AND created_at >= ?').pluck().get(e.id, iterationStart)) : 0;
  const bartRuns = implementedAt ? Number(cached(db, `SELECT COUNT(*) FROM runs WHERE epic_id = ? AND role = 'bart' AND ended_at IS NOT NULL AND started_at >= ?`).pluck().get(e.id, iterationStart)) : 0;
  return {
    id: e.id, title: e.title, status: e.status, statusReason: e.status_reason, priority: e.priority, complexity: e.complexity,
    iteration: e.iteration, buildBudget: buildBudget(e), planIteration: e.plan_iteration, planBudget: COMPLEXITY_POLICY[e.complexity].planIterations,
    planPath: planPath ?? null,
    awaitingApproval: cached(db, `SELECT 1 FROM plan_versions WHERE epic_id = ? AND status = 'proposed'`).get(e.id) !== undefined,
    planner: e.planner,
    steps: { total: p?.all.length ?? 0, completed: p?.completed.length ?? 0, ready: p?.ready ?? [], claimedLive: p?.claimed ?? [] },
    worktree: e.worktree_path,
    verification: { lastVerdict: v.lastVerdict, sameFailureStreak: v.sameFailureStreak, running: false, unverifiedBuild: v.unverifiedBuild },
    reworkPending,
    review: { signalsThisIteration, bartRunsThisIteration: bartRuns },
    signalsAwaitingPerson: Number(cached(db, `SELECT COUNT(*) FROM signals WHERE epic_id = ? AND status = 'awaiting_person'`).pluck().get(e.id)),
    mergeApprovedByPerson: e.merge_approved_by !== null,
    mergeQueued: false,
    faults: faultsOf(db, e.id, reset?.at ?? ''),
    pullRequest: e.pr_url ? { url: e.pr_url, checkedAt: e.pr_checked_at } : null,
    setupDone: e.worktree_path !== null && cached(db, `SELECT 1 FROM runs WHERE epic_id = ? AND role = 'setup' AND status = 'succeeded' AND worktree = ? LIMIT 1`).get(e.id, e.worktree_path) !== undefined,
  };
}

/** An epic's verification since it last entered in_progress (within its current plan), and the failure that ended the latest. */
export interface EpicVerification extends VerificationState {
  readonly sameFailureStreak: number;
  readonly lastFailure: { readonly command: string; readonly exitCode: number | null } | null;
  /** Any verification recorded within the current plan: verification is in use for this epic. */
  readonly recorded: boolean;
}

/** Reads an epic's verification the way decide() and `epic finish` see it (docs/state-machine.md). */
export function epicVerification(db: Database, epicId: string,
  entered = lastEvent(db, epicId, `to_status = 'in_progress'`),
  approvedAt = lastEvent(db, epicId, `action IN ('plan_approved', 'new_plan_approved')`)): EpicVerification {
  const since = entered?.at ?? '';
  // One batch per verification pass (rows share run_id); a batch fails on its failing command. Newest
  // first, and read only until the run of identical failures ends: that is all decide() needs.
  type Batch = { key: string; verdict: string; created_at: string; failure: EpicVerification['lastFailure'] };
  const batches: Batch[] = [];
  const signature = (b: { key: string }) => b.key.slice(b.key.indexOf('|'));
  let streak = 0;
  let streaking = true;
  const settle = (b: Batch): void => {
    if (b.verdict !== 'fail' || signature(b) !== signature(batches[0] as Batch)) streaking = false;
    else streak++;
  };
  let recorded = false;
  const rows = cached(db, `SELECT run_id, command, exit_code, verdict, created_at FROM verifications WHERE epic_id = ? AND created_at >= ? ORDER BY id DESC`)
    .iterate(epicId, approvedAt?.at ?? '') as IterableIterator<{ run_id: number | null; command: string; exit_code: number | null; verdict: string; created_at: string }>;
  for (const r of rows) {
    recorded = true;
    const batch = batches.at(-1);
    const id = `${r.run_id ?? r.created_at}`;
    const failure = r.verdict === 'fail' ? { command: r.command, exitCode: r.exit_code } : null;
    if (batch && batch.key.startsWith(`${id}|`)) {
      if (failure) Object.assign(batch, { verdict: 'fail', key: `${id}|${r.command}|${r.exit_code}`, failure });
      continue;
    }
    if (batch) {
      settle(batch);
      if (!streaking) break;
    }
    batches.push({ key: `${id}|${failure ? `${r.command}|${r.exit_code}` : ''}`, verdict: r.verdict, created_at: r.created_at, failure });
  }
  const newest = batches.at(-1);
  if (streaking && newest) settle(newest);
  // Batches come newest first, so only the newest can have been recorded since the epic entered in_progress.
  const last = batches[0] !== undefined && batches[0].created_at >= since ? batches[0] : undefined;
  // A build to verify: a Ralph run that succeeded or moved the branch (a run that failed without a commit changed nothing).
  const lastRalphEnd = (cached(db, `SELECT ended_at FROM runs WHERE epic_id = ? AND role = 'ralph' AND ended_at IS NOT NULL
      AND (status = 'succeeded' OR (head_after IS NOT NULL AND head_after IS NOT head_before)) ORDER BY ended_at DESC LIMIT 1`).pluck().get(epicId) as string | undefined) ?? null;
  const unverifiedBuild = lastRalphEnd !== null && lastRalphEnd >= since && (!last || lastRalphEnd > last.created_at);
  return {
    lastVerdict: last ? (last.verdict === 'pass' ? 'pass' : 'fail') : null, sameFailureStreak: streak, unverifiedBuild,
    lastFailure: last?.failure ?? null, recorded,
  };
}

/**
 * Each role's failures in a row, newest first, since a person last acted on the epic (a retry, a
 * resume, a plan approval): what decide() backs off on and blocks at (docs/scheduler-faults.md).
 */
function faultsOf(db: Database, epicId: string, reset: string): Partial<Record<FaultRole, RoleFaults>> {
  const out: Partial<Record<FaultRole, RoleFaults>> = {};
  for (const role of FAULT_ROLES) {
    let faults: RoleFaults | undefined;
    for (const r of endedRuns(db, epicId, role, reset)) {
      if (r.status === 'succeeded') break;
      if (r.status === 'stopped') continue; // a person's stop is no fault (docs/scheduler-faults.md)
      faults = faults ? { ...faults, consecutive: faults.consecutive + 1 } : {
        consecutive: 1, lastEndedAt: r.ended_at ?? r.started_at, lastRunId: r.id, lastOutcome: r.status, lastExitCode: r.exit_code,
        lastReason: r.outcome_reason, lastOutput: '',
      };
    }
    if (faults) out[role] = faults;
  }
  // Only the newest failure's output is shown, so only its tail is read.
  const tail = cached(db, 'SELECT output_tail FROM runs WHERE id = ?').pluck();
  for (const [role, f] of Object.entries(out) as [FaultRole, RoleFaults][]) out[role] = { ...f, lastOutput: (tail.get(f.lastRunId) as string).split('\n').slice(-10).join('\n') };
  return out;
}
