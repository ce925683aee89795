import type { ContextRequest, ContextView } from '../epicTypes.ts';
import { assembleContext, contextStep, type DecisionNote } from '../shared/context.ts';
import type { PlanView } from '../types.ts';
import { getEpic } from './interim.ts';
import { approvedVersion } from './interim.ts';
import { showPlans } from './queries.ts';
import { planningNotes } from './planningNotes.ts';
import { listSignals } from './signals.ts';
import type { Database } from './sqlite.ts';

/** The context of a session (see shared/context.ts), read in the caller's transaction. */
export function buildContext(db: Database, now: Date, req: ContextRequest): ContextView {
  let epic = req.epicId ? getEpic(db, req.epicId) : undefined;
  const held = db.prepare(`SELECT plan_path, anchor FROM steps WHERE claimed_by = ? AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress')
      ${epic ? 'AND plan_path IN (SELECT plan_path FROM plans WHERE epic_id = @epic)' : ''} ORDER BY claimed_at DESC LIMIT 1`)
    .get(req.actor.worktree, ...(epic ? [{ epic: epic.id }] : [])) as { plan_path: string; anchor: string } | undefined;
  let planPath = epic ? (db.prepare('SELECT plan_path FROM plans WHERE epic_id = ? ORDER BY updated_at DESC LIMIT 1').pluck().get(epic.id) as string | undefined) : held?.plan_path;
  const proposedPath = epic && !planPath ? db.prepare('SELECT plan_path FROM plan_versions WHERE epic_id = ? ORDER BY version DESC LIMIT 1').pluck().get(epic.id) as string | undefined : undefined;
  if (req.stepAnchor && !planPath) planPath = held?.plan_path ?? (db.prepare('SELECT plan_path FROM steps WHERE anchor = ? LIMIT 1').pluck().get(req.stepAnchor) as string | undefined);
  const planView: PlanView | undefined = planPath ? showPlans(db, now, planPath)[0] : undefined;
  if (!epic && planView?.epic_id) epic = getEpic(db, planView.epic_id);
  const anchor = req.stepAnchor ?? (held && held.plan_path === planPath ? held.anchor : undefined);
  const step = contextStep(planView, anchor, req, planPath);
  const path = planPath ?? proposedPath;
  return assembleContext({
    epic, planPath, proposedPath, planView, step,
    approved: epic ? approvedVersion(db, epic) : undefined,
    feedback: epic ? db.prepare(`SELECT version, feedback, decided_at AS at FROM plan_versions WHERE epic_id = ? AND feedback IS NOT NULL ORDER BY version DESC LIMIT 3`)
      .all(epic.id) as ContextView['feedback'][number][] : [],
    artifacts: planPath && anchor
      ? db.prepare(`SELECT recorded_at AS at, kind, summary FROM artifacts WHERE plan_path = ? AND step_anchor = ? ORDER BY id DESC LIMIT 5`).all(planPath, anchor) as DecisionNote[]
      : [],
    epicEvents: epic ? db.prepare(`SELECT at, action AS kind, reason AS summary FROM events WHERE epic_id = ? AND reason IS NOT NULL ORDER BY id DESC LIMIT 5`).all(epic.id) as DecisionNote[] : [],
    signals: epic ? listSignals(db, epic.id, 5) : [],
    failures: epic?.id || planPath ? db.prepare(`SELECT command, exit_code, output_tail, created_at, step_anchor FROM verifications
      WHERE verdict != 'pass' AND (epic_id = ? OR plan_path = ?) ORDER BY id DESC LIMIT 3`).all(epic?.id ?? null, planPath ?? null) as ContextView['verification_failures'][number][] : [],
    previousRun: epic && req.role ? (db.prepare(`SELECT id, role, step_anchor, status, exit_code, outcome_reason, output_tail, ended_at FROM runs
      WHERE epic_id = ? AND role = ? AND status != 'running' AND id < ? ORDER BY id DESC LIMIT 1`)
      .get(epic.id, req.role, req.beforeRun ?? Number.MAX_SAFE_INTEGER) as ContextView['previous_run'] | undefined) ?? null : null,
    sentBack: epic ? sentBack(db, epic.id) : null,
    research: epic ? planningNotes(db, epic.id) : [],
    proposalPending: epic ? db.prepare(`SELECT version FROM plan_versions WHERE epic_id = ? AND status = 'proposed'`).pluck().get(epic.id) !== undefined : false,
    planDone: path ? db.prepare(`SELECT status FROM plans WHERE plan_path = ?`).pluck().get(path) === 'done' : false,
  }, req);
}

/** The latest version a person sent back (changes requested), when no newer version was proposed since. */
function sentBack(db: Database, epicId: string): ContextView['previous_proposal'] {
  const row = db.prepare('SELECT version, plan_path, status, feedback, body FROM plan_versions WHERE epic_id = ? ORDER BY version DESC LIMIT 1')
    .get(epicId) as { version: number; plan_path: string; status: string; feedback: string | null; body: string } | undefined;
  return row && row.status === 'changes_requested' ? { version: row.version, plan_path: row.plan_path, feedback: row.feedback, body: row.body } : null;
}
