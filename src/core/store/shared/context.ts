import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildBudget, COMPLEXITY_POLICY } from '../../epics/complexity.ts';
import { handoffFileName } from '../../epics/handoff.ts';
import { allowedEvents, isRetryable, TRANSITIONS } from '../../epics/transitions.ts';
import { unknownStepOfContext } from './refusals.ts';
import { parsePlan } from '../../plan/parse.ts';
import type {
  ContextRequest,
  ContextView,
  EpicRow,
  PlanningNote,
  PlanVersionRow,
  PreviousRun,
  SignalView,
} from '../epicTypes.ts';
import type { PlanView, StepView } from '../types.ts';
import { requireEpic } from './epics.ts';
import { call, type Io, type Op } from './op.ts';
import { planningNotes } from './planningNotes.ts';
import type { StorePort } from './port.ts';
import { showPlans } from './queries.ts';
import { PLANNING_ROLE } from '../../../shared/roles.ts';

/** A note in a context's decisions: an artifact of the step or an event of the epic with a reason. */
export interface DecisionNote {
  readonly at: string;
  readonly kind: string;
  readonly summary: string;
}

export interface ContextPort {
  /** The newest top-level step the worktree (on this host) holds, in a plan of the epic when one is given. */
  heldStep(worktree: string, epicId: string | null): Io<{ plan_path: string; anchor: string } | undefined>;
  /** The epic's latest feedback on its plan versions (three, newest first). */
  recentFeedback(epicId: string): Io<ContextView['feedback'][number][]>;
  /** The step's latest artifacts (five, newest first). */
  recentArtifacts(planPath: string, anchor: string): Io<DecisionNote[]>;
  /** The epic's latest events that carry a reason (five, newest first). */
  epicDecisions(epicId: string): Io<DecisionNote[]>;
  /** The latest failed verifications of the epic or of the plan (three, newest first). */
  verificationFailures(
    epicId: string | null,
    planPath: string | null,
  ): Io<ContextView['verification_failures'][number][]>;
  /** The role's latest ended run on the epic before run `before`. */
  previousRun(epicId: string, role: string, before: number): Io<PreviousRun | undefined>;
}

/** The context of a session, read in one snapshot; the held step is this worktree's (on PostgreSQL, this host's). */
export function* buildContext(port: StorePort, req: ContextRequest): Op<ContextView> {
  let epic = req.epicId ? yield* requireEpic(port, req.epicId) : undefined;
  const held = yield* call(port.heldStep(req.actor.worktree, epic?.id ?? null));
  let planPath = epic ? ((yield* call(port.livePlanPath(epic.id))) ?? undefined) : held?.plan_path;
  const proposedPath = epic && !planPath ? yield* call(port.latestProposedPath(epic.id)) : undefined;
  if (req.stepAnchor && !planPath) planPath = held?.plan_path ?? (yield* call(port.plansWithStep(req.stepAnchor)))[0];
  const planView: PlanView | undefined = planPath ? (yield* showPlans(port, planPath))[0] : undefined;
  if (!epic && planView?.epic_id) epic = yield* requireEpic(port, planView.epic_id);
  const anchor = req.stepAnchor ?? (held && held.plan_path === planPath ? held.anchor : undefined);
  const step = contextStep(planView, anchor, req, planPath);
  const path = planPath ?? proposedPath;
  const latest = epic ? yield* call(port.latestVersion(epic.id)) : undefined;
  return assembleContext(
    {
      epic,
      planPath,
      proposedPath,
      planView,
      step,
      approved: epic ? yield* call(port.approvedVersion(epic.id)) : undefined,
      feedback: epic ? yield* call(port.recentFeedback(epic.id)) : [],
      artifacts: planPath && anchor ? yield* call(port.recentArtifacts(planPath, anchor)) : [],
      epicEvents: epic ? yield* call(port.epicDecisions(epic.id)) : [],
      signals: epic ? yield* call(port.listSignals(epic.id, 5)) : [],
      failures: epic?.id || planPath ? yield* call(port.verificationFailures(epic?.id ?? null, planPath ?? null)) : [],
      previousRun:
        epic && req.role
          ? ((yield* call(port.previousRun(epic.id, req.role, req.beforeRun ?? Number.MAX_SAFE_INTEGER))) ?? null)
          : null,
      // The latest version a person sent back (changes requested), when no newer version was proposed since.
      sentBack:
        latest && latest.status === 'changes_requested'
          ? { version: latest.version, plan_path: latest.plan_path, feedback: latest.feedback, body: latest.body }
          : null,
      research: epic ? yield* planningNotes(port, epic.id) : [],
      proposalPending: epic ? (yield* call(port.proposedVersion(epic.id))) !== undefined : false,
      planDone: path ? (yield* call(port.findPlan(path)))?.status === 'done' : false,
    },
    req,
  );
}

/** What a backend reads for a context; `assembleContext` turns it into the view every backend returns. */
export interface ContextFacts {
  readonly epic: EpicRow | undefined;
  /** The plan the context is about (initialised), and the path of a plan only proposed so far. */
  readonly planPath: string | undefined;
  readonly proposedPath: string | undefined;
  readonly planView: PlanView | undefined;
  readonly step: StepView | undefined;
  readonly approved: Pick<PlanVersionRow, 'body' | 'plan_path'> | undefined;
  readonly feedback: ContextView['feedback'];
  readonly artifacts: readonly DecisionNote[];
  readonly epicEvents: readonly DecisionNote[];
  readonly signals: readonly SignalView[];
  readonly failures: ContextView['verification_failures'];
  readonly previousRun: PreviousRun | null;
  /** The epic's latest plan version, when a person sent it back (changes requested). */
  readonly sentBack: ContextView['previous_proposal'];
  /** The epic's latest research notes, oldest first. */
  readonly research: readonly PlanningNote[];
  /** A plan version of the epic waits for approval. */
  readonly proposalPending: boolean;
  /** The plan named by planPath (else proposedPath) is done. */
  readonly planDone: boolean;
}

/** The step a context is about, refusing a requested anchor the plan does not have. */
export function contextStep(
  plan: PlanView | undefined,
  anchor: string | undefined,
  req: ContextRequest,
  planPath: string | undefined,
): StepView | undefined {
  const step = anchor ? findStep(plan, anchor) : undefined;
  if (req.stepAnchor && !step) throw unknownStepOfContext(req.stepAnchor, planPath);
  return step;
}

/** Everything a fresh agent session needs to resume: small, step-specific facts inline, large stable documents by path. */
export function assembleContext(f: ContextFacts, req: ContextRequest): ContextView {
  const { epic, planView } = f;
  const sections = f.approved ? parsePlan(f.approved.body, f.approved.plan_path).sections : {};
  const step = f.step
    ? { ...f.step, held_by_you: f.step.claimed_by === req.actor.worktree && f.step.status !== 'completed' }
    : null;
  const path = f.planPath ?? f.proposedPath;
  return {
    epic: epic ? epicSummary(epic) : null,
    intent: epic ? epic.brief || null : null,
    approach: sections.Approach ?? null,
    constraints: sections.Constraints ?? null,
    feedback: f.feedback,
    plan: planView
      ? {
          plan_path: planView.plan_path,
          status: planView.status,
          steps_completed: planView.progress.steps_completed,
          steps_total: planView.progress.steps_total,
        }
      : null,
    step,
    decisions: [...f.artifacts, ...f.epicEvents].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).slice(0, 8),
    signals: f.signals,
    verification_failures: f.failures,
    previous_run: f.previousRun && f.previousRun.status !== 'succeeded' ? f.previousRun : null,
    previous_proposal: epic && (epic.status === 'planned' || epic.status === 'blocked') ? f.sentBack : null,
    research: epic ? f.research : [],
    must_read: mustRead(req.docsRoot, epic, path),
    next_commands: nextCommands(epic, path, step, f),
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
    id: e.id,
    title: e.title,
    status: e.status,
    status_reason: e.status_reason,
    priority: e.priority,
    complexity: e.complexity,
    iteration: e.iteration,
    plan_iteration: e.plan_iteration,
    build_budget: buildBudget(e),
    plan_budget: COMPLEXITY_POLICY[e.complexity].planIterations,
    next_role: isRetryable(e) ? 'person' : e.status === 'planned' ? PLANNING_ROLE : (row?.nextRole ?? null),
    allowed_events: allowedEvents(e.status),
  };
}

function mustRead(
  root: string | null,
  epic: EpicRow | undefined,
  planPath: string | undefined,
): { path: string; why: string }[] {
  if (!root) return planPath ? [{ path: planPath, why: 'the whole plan' }] : [];
  const out: { path: string; why: string }[] = [];
  if (epic) {
    // On the epic's branch once it started; before that, approval's copy beside the database (docs/lifecycle.md).
    const name = handoffFileName(epic.id);
    const why = 'handoff: intent, approach, constraints (immutable; a re-plan adds a version)';
    if (existsSync(join(root, name)) || (epic.worktree_path && existsSync(join(epic.worktree_path, name))))
      out.push({ path: name, why });
    else if (existsSync(join(root, '.springfield', 'handoffs', name)))
      out.push({ path: join(root, '.springfield', 'handoffs', name), why });
  }
  if (existsSync(join(root, 'PLAN.md'))) out.push({ path: 'PLAN.md', why: 'why the epics exist and their scope' });
  if (planPath) out.push({ path: planPath, why: 'the whole plan: every step, dependency and checklist' });
  for (const dir of ['docs/adr', 'adr', 'docs/decisions']) {
    if (!existsSync(join(root, dir))) continue;
    for (const f of readdirSync(join(root, dir))
      .filter((n) => n.endsWith('.md'))
      .sort())
      out.push({ path: `${dir}/${f}`, why: 'architectural decision record' });
  }
  return out;
}

function nextCommands(
  epic: EpicRow | undefined,
  planPath: string | undefined,
  step: ContextView['step'],
  f: ContextFacts,
): string[] {
  if (epic?.status === 'planned' || epic?.status === 'blocked') {
    return f.proposalPending
      ? [
          `springfield plan approve ${epic.id} ${planPath ?? '<plan.md>'}`,
          `springfield plan request-changes ${epic.id} --feedback "<what to change>"`,
        ]
      : [`springfield plan propose ${epic.id} ${planPath ?? '<plan.md>'}`];
  }
  if (epic?.status === 'implemented')
    return [
      `springfield signal ${epic.id} --type pass|implementation_failure|option_viability_failure|adr_invalidated --summary "<finding>" [--location FILE:LINE --note "<note>"]`,
    ];
  if (!planPath) return ['springfield epic list', 'springfield show'];
  if (epic?.status === 'in_progress' && f.planDone) {
    return [
      `springfield signals ${epic.id} --open`,
      `git commit -am "<the fix>"`,
      `springfield epic finish ${epic.id} --reason "<what was fixed and verified>"`,
    ];
  }
  if (!step || !step.held_by_you) return [`springfield claim ${planPath}`, `springfield show ${planPath}`];
  const cmds: string[] = [];
  if (step.status === 'claimed') cmds.push(`springfield start ${planPath} ${step.anchor}`);
  cmds.push(`springfield heartbeat ${planPath} ${step.anchor}`);
  for (const s of [step, ...step.substeps]) {
    for (const i of s.items)
      if (i.status !== 'completed')
        cmds.push(`springfield update ${planPath} ${s.anchor} --${i.kind} ${i.ordinal} completed`);
  }
  cmds.push(`springfield commit -m "<what you did>" --step ${step.anchor}`);
  return cmds;
}
