import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.ts';
import { parsePlan } from '../plan/parse.ts';
import { showPlans } from '../store/sqlite/queries.ts';
import type { Database } from '../store/sqlite/sqlite.ts';
import type { Actor, PlanView, StepView } from '../store/types.ts';
import { COMPLEXITY_POLICY } from './complexity.ts';
import { buildBudget, getEpic, isRetryable, type EpicRow } from './epicStore.ts';
import { handoffFileName } from './handoff.ts';
import { approvedVersion } from './planApproval.ts';
import { planningNotes, type PlanningNote } from './planningNotes.ts';
import { listSignals, type SignalView } from './signals.ts';
import { allowedEvents, TRANSITIONS } from './transitions.ts';

export interface ContextRequest {
  readonly epicId?: string;
  readonly stepAnchor?: string;
  readonly actor: Actor;
  /** Where narrative documents live (the main worktree root), to list what must be read. */
  readonly docsRoot: string | null;
  /** The role of the session the context is for: its previous run on the epic is shown when it did not succeed. */
  readonly role?: string;
  /** Only runs before this one count as previous (the run the context is written for). */
  readonly beforeRun?: number;
}

/** The previous run of the same role on the epic, when it did not succeed: what it did and why it failed. */
export interface PreviousRun {
  readonly id: number;
  readonly role: string;
  readonly step_anchor: string | null;
  readonly status: string;
  readonly exit_code: number | null;
  readonly outcome_reason: string | null;
  readonly output_tail: string;
  readonly ended_at: string | null;
}

export interface ContextView {
  readonly epic: (Pick<EpicRow, 'id' | 'title' | 'status' | 'status_reason' | 'priority' | 'complexity' | 'iteration' | 'plan_iteration'> & { build_budget: number; plan_budget: number; next_role: string | null; allowed_events: string[] }) | null;
  readonly intent: string | null;
  readonly approach: string | null;
  readonly constraints: string | null;
  readonly feedback: readonly { version: number; feedback: string; at: string | null }[];
  readonly plan: { plan_path: string; status: string; steps_completed: number; steps_total: number } | null;
  readonly step: (StepView & { held_by_you: boolean }) | null;
  readonly decisions: readonly { at: string; kind: string; summary: string }[];
  readonly signals: readonly SignalView[];
  readonly verification_failures: readonly { command: string; exit_code: number | null; output_tail: string; created_at: string; step_anchor: string | null }[];
  readonly previous_run: PreviousRun | null;
  /** For a planner after a person asked for changes: the version sent back, its text and the feedback. */
  readonly previous_proposal: { version: number; plan_path: string; feedback: string | null; body: string } | null;
  /** What planners recorded while researching this epic (springfield plan note). */
  readonly research: readonly PlanningNote[];
  readonly must_read: readonly { path: string; why: string }[];
  readonly next_commands: readonly string[];
}

/** Everything a fresh agent session needs to resume: small, step-specific facts inline, large stable documents by path. */
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
  const step = anchor ? findStep(planView, anchor) : undefined;
  if (req.stepAnchor && !step) throw new UsageError('unknown_step', `no step '${req.stepAnchor}'${planPath ? ` in ${planPath}` : ''}`);
  const version = epic ? approvedVersion(db, epic) : undefined;
  const sections = version ? parsePlan(version.body, version.plan_path).sections : {};
  const stepView = step ? { ...step, held_by_you: step.claimed_by === req.actor.worktree && step.status !== 'completed' } : null;
  return {
    epic: epic ? epicSummary(epic) : null,
    intent: epic ? epic.brief || null : null,
    approach: sections.Approach ?? null,
    constraints: sections.Constraints ?? null,
    feedback: epic ? feedbackOf(db, epic.id) : [],
    plan: planView ? { plan_path: planView.plan_path, status: planView.status, steps_completed: planView.progress.steps_completed, steps_total: planView.progress.steps_total } : null,
    step: stepView,
    decisions: decisionsOf(db, planPath, anchor, epic?.id),
    signals: epic ? listSignals(db, epic.id, 5) : [],
    verification_failures: failuresOf(db, epic?.id, planPath),
    previous_run: epic && req.role ? previousRun(db, epic.id, req.role, req.beforeRun) : null,
    previous_proposal: epic && (epic.status === 'planned' || epic.status === 'blocked') ? sentBack(db, epic.id) : null,
    research: epic ? planningNotes(db, epic.id) : [],
    must_read: mustRead(req.docsRoot, epic, planPath ?? proposedPath),
    next_commands: nextCommands(epic, planPath ?? proposedPath, stepView, db),
  };
}

function findStep(plan: PlanView | undefined, anchor: string): StepView | undefined {
  for (const s of plan?.steps ?? []) {
    if (s.anchor === anchor) return s;
    const sub = s.substeps.find((x) => x.anchor === anchor);
    if (sub) return sub;
  }
  return undefined;
}

function epicSummary(e: EpicRow): NonNullable<ContextView['epic']> {
  const row = TRANSITIONS.find((t) => t.to === e.status && t.nextRole !== null);
  return {
    id: e.id, title: e.title, status: e.status, status_reason: e.status_reason, priority: e.priority, complexity: e.complexity,
    iteration: e.iteration, plan_iteration: e.plan_iteration, build_budget: buildBudget(e), plan_budget: COMPLEXITY_POLICY[e.complexity].planIterations,
    next_role: isRetryable(e) ? 'person' : e.status === 'planned' ? 'lisa' : row?.nextRole ?? null, allowed_events: allowedEvents(e.status),
  };
}

function feedbackOf(db: Database, epicId: string) {
  return db.prepare(`SELECT version, feedback, decided_at AS at FROM plan_versions WHERE epic_id = ? AND feedback IS NOT NULL ORDER BY version DESC LIMIT 3`)
    .all(epicId) as { version: number; feedback: string; at: string | null }[];
}

function decisionsOf(db: Database, planPath: string | undefined, anchor: string | undefined, epicId: string | undefined) {
  const artifacts = planPath && anchor
    ? db.prepare(`SELECT recorded_at AS at, kind, summary FROM artifacts WHERE plan_path = ? AND step_anchor = ? ORDER BY id DESC LIMIT 5`).all(planPath, anchor) as { at: string; kind: string; summary: string }[]
    : [];
  const events = epicId
    ? db.prepare(`SELECT at, action AS kind, reason AS summary FROM events WHERE epic_id = ? AND reason IS NOT NULL ORDER BY id DESC LIMIT 5`).all(epicId) as { at: string; kind: string; summary: string }[]
    : [];
  return [...artifacts, ...events].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).slice(0, 8);
}

function failuresOf(db: Database, epicId: string | undefined, planPath: string | undefined) {
  if (!epicId && !planPath) return [];
  return db.prepare(`SELECT command, exit_code, output_tail, created_at, step_anchor FROM verifications
      WHERE verdict != 'pass' AND (epic_id = ? OR plan_path = ?) ORDER BY id DESC LIMIT 3`)
    .all(epicId ?? null, planPath ?? null) as ContextView['verification_failures'][number][];
}

/** The latest version a person sent back (changes requested), when no newer version was proposed since. */
function sentBack(db: Database, epicId: string): ContextView['previous_proposal'] {
  const row = db.prepare('SELECT version, plan_path, status, feedback, body FROM plan_versions WHERE epic_id = ? ORDER BY version DESC LIMIT 1')
    .get(epicId) as { version: number; plan_path: string; status: string; feedback: string | null; body: string } | undefined;
  return row && row.status === 'changes_requested' ? { version: row.version, plan_path: row.plan_path, feedback: row.feedback, body: row.body } : null;
}

function previousRun(db: Database, epicId: string, role: string, before: number | undefined): PreviousRun | null {
  const row = db.prepare(`SELECT id, role, step_anchor, status, exit_code, outcome_reason, output_tail, ended_at FROM runs
      WHERE epic_id = ? AND role = ? AND status != 'running' AND id < ? ORDER BY id DESC LIMIT 1`)
    .get(epicId, role, before ?? Number.MAX_SAFE_INTEGER) as PreviousRun | undefined;
  return row && row.status !== 'succeeded' ? row : null;
}

function mustRead(root: string | null, epic: EpicRow | undefined, planPath: string | undefined): { path: string; why: string }[] {
  if (!root) return planPath ? [{ path: planPath, why: 'the whole plan' }] : [];
  const out: { path: string; why: string }[] = [];
  if (epic) {
    // On the epic's branch once it started; before that, approval's copy beside the database (docs/lifecycle.md).
    const name = handoffFileName(epic.id);
    const why = 'handoff: intent, approach, constraints (immutable; a re-plan adds a version)';
    if (existsSync(join(root, name)) || (epic.worktree_path && existsSync(join(epic.worktree_path, name)))) out.push({ path: name, why });
    else if (existsSync(join(root, '.springfield', 'handoffs', name))) out.push({ path: join(root, '.springfield', 'handoffs', name), why });
  }
  if (existsSync(join(root, 'PLAN.md'))) out.push({ path: 'PLAN.md', why: 'why the epics exist and their scope' });
  if (planPath) out.push({ path: planPath, why: 'the whole plan: every step, dependency and checklist' });
  for (const dir of ['docs/adr', 'adr', 'docs/decisions']) {
    if (!existsSync(join(root, dir))) continue;
    for (const f of readdirSync(join(root, dir)).filter((n) => n.endsWith('.md')).sort()) out.push({ path: `${dir}/${f}`, why: 'architectural decision record' });
  }
  return out;
}

function nextCommands(epic: EpicRow | undefined, planPath: string | undefined, step: ContextView['step'], db: Database): string[] {
  if (epic?.status === 'planned' || epic?.status === 'blocked') {
    const proposed = db.prepare(`SELECT version FROM plan_versions WHERE epic_id = ? AND status = 'proposed'`).pluck().get(epic.id);
    return proposed !== undefined
      ? [`springfield plan approve ${epic.id} ${planPath ?? '<plan.md>'}`, `springfield plan request-changes ${epic.id} --feedback "<what to change>"`]
      : [`springfield plan propose ${epic.id} ${planPath ?? '<plan.md>'}`];
  }
  if (epic?.status === 'implemented') return [`springfield signal ${epic.id} --type pass|implementation_failure|option_viability_failure|adr_invalidated --summary "<finding>" [--location FILE:LINE --note "<note>"]`];
  if (!planPath) return ['springfield epic list', 'springfield show'];
  const planDone = db.prepare(`SELECT status FROM plans WHERE plan_path = ?`).pluck().get(planPath) === 'done';
  if (epic?.status === 'in_progress' && planDone) {
    return [`springfield signals ${epic.id} --open`, `git commit -am "<the fix>"`, `springfield epic finish ${epic.id} --reason "<what was fixed and verified>"`];
  }
  if (!step || !step.held_by_you) return [`springfield claim ${planPath}`, `springfield show ${planPath}`];
  const cmds: string[] = [];
  if (step.status === 'claimed') cmds.push(`springfield start ${planPath} ${step.anchor}`);
  cmds.push(`springfield heartbeat ${planPath} ${step.anchor}`);
  for (const s of [step, ...step.substeps]) {
    for (const i of s.items) if (i.status !== 'completed') cmds.push(`springfield update ${planPath} ${s.anchor} --${i.kind} ${i.ordinal} completed`);
  }
  cmds.push(`springfield commit -m "<what you did>" --step ${step.anchor}`);
  return cmds;
}
