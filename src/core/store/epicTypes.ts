import type { Complexity } from '../epics/complexity.ts';
import type { EpicBudgetOverride } from '../epics/costBudget.ts';
import type { Priority } from '../epics/ids.ts';
import type { EpicEvent, EpicStatus, Role, SignalType } from '../epics/transitions.ts';
import type { Retrospective } from '../epics/retrospective.ts';
export type { ApprovedVersion } from '../epics/handoffVersions.ts';
export type { Retrospective };
import type { PlanSource } from '../plan/types.ts';
import { PLANNING_ROLE } from '../../shared/roles.ts';
import type { RunView, UsageByRole, VerificationView } from './runTypes.ts';
import type { Actor, InitResult, PlanView, StepView } from './types.ts';

/** An epic as the store keeps it. */
export interface EpicRow {
  id: string;
  title: string;
  brief: string;
  priority: Priority;
  complexity: Complexity;
  complexity_source: 'detected' | 'override';
  status: EpicStatus;
  status_reason: string | null;
  iteration: number;
  plan_iteration: number;
  max_iterations: number | null;
  merge_approved_by: string | null;
  merge_approved_at: string | null;
  worktree_path: string | null;
  branch: string | null;
  /** PR mode: the pull request the verified epic waits on. */
  pr_url: string | null;
  pr_checked_at: string | null;
  created_at: string;
  updated_at: string;
  /** Who writes its plan: Lisa (the scheduler starts her), or the person who created it (docs/lifecycle.md, "Who plans"). */
  planner: Planner;
  /** Its own cost budget (docs/budgets.md): dollars, tokens (in + out), agent minutes; null: the config's "budget". */
  budget_usd: number | null;
  budget_tokens: number | null;
  budget_minutes: number | null;
}

/** Who writes an epic's plan. */
export type Planner = typeof PLANNING_ROLE | 'person';
export const PLANNERS: readonly Planner[] = [PLANNING_ROLE, 'person'];

export interface NewEpic {
  readonly title: string;
  readonly brief: string;
  readonly priority: Priority;
  readonly complexity?: Complexity;
  readonly maxIterations?: number;
  /** Default lisa. */
  readonly planner?: Planner;
  /** Its own cost budget where given (`epic create --budget-usd`); the rest follows the config. */
  readonly budget?: Partial<EpicBudgetOverride>;
}

export interface TransitionOutcome {
  readonly epic_id: string;
  readonly event: EpicEvent;
  readonly from: EpicStatus;
  readonly to: EpicStatus;
  readonly next_role: Role | null;
  readonly iteration: number;
  readonly reason: string | null;
}

export type PlanVersionStatus = 'proposed' | 'approved' | 'changes_requested' | 'discarded' | 'superseded';

export interface PlanVersionRow {
  id: number;
  epic_id: string;
  plan_path: string;
  version: number;
  plan_hash: string;
  structure: string;
  body: string;
  status: PlanVersionStatus;
  feedback: string | null;
  proposed_by: string | null;
  proposed_agent: string | null;
  decided_by: string | null;
  created_at: string;
  decided_at: string | null;
}

/** A plan file as proposed: its parsed source plus the raw text kept for the approval view. */
export interface ProposedPlan extends PlanSource {
  readonly body: string;
}

export interface ProposeResult {
  readonly proposed: true;
  readonly epic_id: string;
  readonly plan_path: string;
  readonly version: number;
  readonly plan_hash: string;
  readonly changes_since_previous: readonly string[];
  readonly plan_iteration: number;
  /** Present (true) only when this is an earlier process's proposal whose reply was lost, handed over (docs/postgres-design.md, "Failures, retries, idempotence"). */
  readonly resumed?: true;
}

export interface ApproveResult {
  readonly approved: true;
  readonly epic_id: string;
  readonly plan_path: string;
  readonly version: number;
  readonly plan_hash: string;
  readonly init: InitResult;
  readonly transition: TransitionOutcome;
}

/** The approved version's text, for the epic's branch. */
export interface ApprovedPlan {
  readonly planPath: string;
  readonly body: string;
  readonly version: number;
  /** The handoff text the branch must carry (docs/lifecycle.md), rendered from the store. */
  readonly handoff?: string;
}

/** Where an epic's plan stands: the initialised (approved) plan's path and the approved version's text. */
export interface EpicPlans {
  readonly livePlanPath: string | null;
  readonly approved: ApprovedPlan | null;
}

export interface SignalLocation {
  /** Repository-relative path with forward slashes. */
  readonly file: string;
  readonly line: number;
  readonly endLine: number | null;
  readonly note: string | null;
}

export interface SignalView {
  readonly id: number;
  readonly epic_id: string;
  readonly type: SignalType;
  readonly summary: string;
  readonly created_by: string | null;
  readonly created_at: string;
  /** applied: the transition happened when recorded; awaiting_person: a person decides; decided: a person did. */
  readonly status: 'applied' | 'awaiting_person' | 'decided';
  readonly resolved_at: string | null;
  readonly resolved_by: string | null;
  readonly resolution: string | null;
  readonly locations: readonly { file: string; line: number; end_line: number | null; note: string | null }[];
}

export interface SignalResult {
  readonly recorded: true;
  readonly signal_id: number;
  readonly epic_id: string;
  readonly type: SignalType;
  readonly locations: number;
  readonly awaiting_person: boolean;
  readonly transition: TransitionOutcome | null;
  /** Present (true) only when this is an earlier process's signal whose reply was lost, handed over (docs/postgres-design.md, "Failures, retries, idempotence"). */
  readonly resumed?: true;
}

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
  readonly epic:
    | (Pick<
        EpicRow,
        'id' | 'title' | 'status' | 'status_reason' | 'priority' | 'complexity' | 'iteration' | 'plan_iteration'
      > & { build_budget: number; plan_budget: number; next_role: string | null; allowed_events: string[] })
    | null;
  readonly intent: string | null;
  readonly approach: string | null;
  readonly constraints: string | null;
  readonly feedback: readonly { version: number; feedback: string; at: string | null }[];
  readonly plan: { plan_path: string; status: string; steps_completed: number; steps_total: number } | null;
  readonly step: (StepView & { held_by_you: boolean }) | null;
  readonly decisions: readonly { at: string; kind: string; summary: string }[];
  readonly signals: readonly SignalView[];
  readonly verification_failures: readonly {
    command: string;
    exit_code: number | null;
    output_tail: string;
    created_at: string;
    step_anchor: string | null;
  }[];
  readonly previous_run: PreviousRun | null;
  /** For a planner after a person asked for changes: the version sent back, its text and the feedback. */
  readonly previous_proposal: { version: number; plan_path: string; feedback: string | null; body: string } | null;
  /** What planners recorded while researching this epic (springfield plan note). */
  readonly research: readonly PlanningNote[];
  readonly must_read: readonly { path: string; why: string }[];
  readonly next_commands: readonly string[];
}

/** What a finished epic's summary is assembled from: its steps, verification, artifacts, signals and runs. */
export interface EpicReport {
  /** When it was read, by the store's clock. */
  readonly read_at: string;
  readonly epic: EpicRow;
  readonly plan: PlanView | null;
  readonly runs: readonly RunView[];
  readonly verifications: readonly VerificationView[];
  readonly artifacts: readonly { step_anchor: string; kind: string; summary: string }[];
  readonly signals: readonly SignalView[];
  /** Tokens and cost by role, from the runs that reported usage. */
  readonly usage: readonly UsageByRole[];
}

/** A research note a planner recorded on an epic before any step exists (docs/lifecycle.md). */
export interface PlanningNote {
  readonly id: number;
  readonly kind: string;
  readonly summary: string;
  readonly recorded_by: string | null;
  readonly recorded_at: string;
}

/** An entry of the debt register: an epic set aside, why, and whether a resume closed it (docs/lifecycle.md). */
export interface DebtRow {
  id: number;
  epic_id: string;
  title: string;
  reason: string;
  event: string;
  from_status: string;
  recorded_by: string | null;
  recorded_at: string;
  resolved_at: string | null;
  resolution: string | null;
}
