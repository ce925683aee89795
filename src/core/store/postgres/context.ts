import type { ContextRequest, ContextView, SignalView } from '../epicTypes.ts';
import { assembleContext, contextStep, type DecisionNote } from '../shared/context.ts';
import type { PlanView } from '../types.ts';
import { getEpic } from './interim.ts';
import { planningNotes } from './planningNotes.ts';
import { approvedVersion } from './interim.ts';
import { showPlans } from './queries.ts';
import type { Tx } from './session.ts';

/** The context of a session (see shared/context.ts), read in one snapshot; the held step is this host's worktree's. */
export async function buildContext(tx: Tx, req: ContextRequest): Promise<ContextView> {
  let epic = req.epicId ? await getEpic(tx, req.epicId) : undefined;
  const R = tx.repo;
  const one = async <T>(sql: string, values: readonly unknown[]): Promise<T | undefined> => (await tx.q<T>(sql, values))[0];
  const held = await one<{ plan_path: string; anchor: string }>(`SELECT plan_path, anchor FROM steps WHERE repo_id = $1 AND claimed_by = $2 AND claimed_host = $3
      AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress')
      ${epic ? 'AND plan_path IN (SELECT plan_path FROM plans WHERE repo_id = $1 AND epic_id = $4)' : ''} ORDER BY claimed_at DESC LIMIT 1`,
  [R, req.actor.worktree, tx.host, ...(epic ? [epic.id] : [])]);
  let planPath = epic
    ? (await one<{ plan_path: string }>('SELECT plan_path FROM plans WHERE repo_id = $1 AND epic_id = $2 ORDER BY updated_at DESC, plan_path LIMIT 1', [R, epic.id]))?.plan_path
    : held?.plan_path;
  const proposedPath = epic && !planPath
    ? (await one<{ plan_path: string }>('SELECT plan_path FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 ORDER BY version DESC LIMIT 1', [R, epic.id]))?.plan_path
    : undefined;
  if (req.stepAnchor && !planPath) {
    planPath = held?.plan_path ?? (await one<{ plan_path: string }>('SELECT plan_path FROM steps WHERE repo_id = $1 AND anchor = $2 ORDER BY plan_path LIMIT 1', [R, req.stepAnchor]))?.plan_path;
  }
  const planView: PlanView | undefined = planPath ? (await showPlans(tx, planPath))[0] : undefined;
  if (!epic && planView?.epic_id) epic = await getEpic(tx, planView.epic_id);
  const anchor = req.stepAnchor ?? (held && held.plan_path === planPath ? held.anchor : undefined);
  const step = contextStep(planView, anchor, req, planPath);
  const path = planPath ?? proposedPath;
  return assembleContext({
    epic, planPath, proposedPath, planView, step,
    approved: epic ? await approvedVersion(tx, epic) : undefined,
    feedback: epic ? await tx.q<ContextView['feedback'][number]>(`SELECT version, feedback, decided_at AS at FROM plan_versions
      WHERE repo_id = $1 AND epic_id = $2 AND feedback IS NOT NULL ORDER BY version DESC LIMIT 3`, [R, epic.id]) : [],
    artifacts: planPath && anchor
      ? await tx.q<DecisionNote>('SELECT recorded_at AS at, kind, summary FROM artifacts WHERE repo_id = $1 AND plan_path = $2 AND step_anchor = $3 ORDER BY id DESC LIMIT 5', [R, planPath, anchor])
      : [],
    epicEvents: epic
      ? await tx.q<DecisionNote>(`SELECT at, action AS kind, reason AS summary FROM events WHERE repo_id = $1 AND epic_id = $2 AND reason IS NOT NULL ORDER BY id DESC LIMIT 5`, [R, epic.id])
      : [],
    signals: epic ? await recentSignals(tx, epic.id, 5) : [],
    failures: epic?.id || planPath ? await tx.q<ContextView['verification_failures'][number]>(`SELECT command, exit_code, output_tail, created_at, step_anchor FROM verifications
      WHERE repo_id = $1 AND verdict <> 'pass' AND (epic_id = $2 OR plan_path = $3) ORDER BY id DESC LIMIT 3`, [R, epic?.id ?? null, planPath ?? null]) : [],
    previousRun: epic && req.role ? (await one<NonNullable<ContextView['previous_run']>>(`SELECT id, role, step_anchor, status, exit_code, outcome_reason, output_tail, ended_at FROM runs
      WHERE repo_id = $1 AND epic_id = $2 AND role = $3 AND status <> 'running' AND id < $4 ORDER BY id DESC LIMIT 1`,
    [R, epic.id, req.role, req.beforeRun ?? Number.MAX_SAFE_INTEGER])) ?? null : null,
    sentBack: epic ? await sentBack(tx, epic.id) : null,
    research: epic ? await planningNotes(tx, epic.id) : [],
    proposalPending: epic ? (await tx.q(`SELECT 1 FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 AND status = 'proposed' LIMIT 1`, [R, epic.id])).length > 0 : false,
    planDone: path ? (await one<{ status: string }>('SELECT status FROM plans WHERE repo_id = $1 AND plan_path = $2', [R, path]))?.status === 'done' : false,
  }, req);
}

/** The latest version a person sent back (changes requested), when no newer version was proposed since. */
async function sentBack(tx: Tx, epicId: string): Promise<ContextView['previous_proposal']> {
  const row = (await tx.q<{ version: number; plan_path: string; status: string; feedback: string | null; body: string }>(`SELECT version, plan_path, status, feedback, body
    FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 ORDER BY version DESC LIMIT 1`, [tx.repo, epicId]))[0];
  return row && row.status === 'changes_requested' ? { version: row.version, plan_path: row.plan_path, feedback: row.feedback, body: row.body } : null;
}

/** The epic's newest signals with their locations (what `signals` lists, cut to `limit`). */
async function recentSignals(tx: Tx, epicId: string, limit: number): Promise<SignalView[]> {
  const rows = await tx.q<Omit<SignalView, 'locations'>>(`SELECT id, epic_id, type, summary, created_by, created_at, status, resolved_at, resolved_by, resolution
    FROM signals WHERE repo_id = $1 AND epic_id = $2 ORDER BY id DESC LIMIT $3`, [tx.repo, epicId, limit]);
  if (rows.length === 0) return [];
  const locs = await tx.q<SignalView['locations'][number] & { signal_id: number }>(`SELECT signal_id, file, line, end_line, note FROM signal_locations
    WHERE signal_id = ANY($1::bigint[]) ORDER BY id`, [rows.map((r) => r.id)]);
  return rows.map((r) => ({ ...r, locations: locs.filter((l) => l.signal_id === r.id).map(({ signal_id: _s, ...l }) => l) }));
}
