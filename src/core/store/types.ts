import type { DebtRow } from '../epics/debt.ts';
import type { ContextRequest, ContextView } from '../epics/context.ts';
import type { EpicRow, NewEpic, TransitionOutcome } from '../epics/epicStore.ts';
import type { ApproveResult, PlanVersionRow, ProposedPlan, ProposeResult } from '../epics/planApproval.ts';
import type { SignalDecision, SignalLocation, SignalResult, SignalView } from '../epics/signals.ts';
import type { EpicEvent, EpicStatus, SignalType } from '../epics/transitions.ts';
import type { ItemKind, Plan } from '../plan/types.ts';
import type { RunView, VerificationView } from './sqlite/runs.ts';

/** Who is acting: the worktree (holder identity), an optional agent id and claim token. */
export interface Actor {
  readonly worktree: string;
  readonly agent: string | null;
  /** When given, a mutation must carry the step's current claim token (fencing). */
  readonly token?: number | null;
}

export type StepStatus = 'pending' | 'claimed' | 'in_progress' | 'completed';
export type ItemStatus = 'open' | 'in_progress' | 'completed';
export const ITEM_STATUSES: readonly ItemStatus[] = ['open', 'in_progress', 'completed'];

/** A plan as read from disk, with where it is keyed in the store. */
export interface PlanSource {
  /** Repository-relative path with forward slashes: the key every worktree shares. */
  readonly planPath: string;
  readonly plan: Plan;
  /**
   * The file's bytes as read, when known: a store that recorded these exact bytes with the plan's
   * structure skips the parse and the structure comparison (docs/cli-cost.md).
   */
  readonly bytes?: Uint8Array;
}

export interface InitResult {
  readonly plan_path: string;
  readonly plan_hash: string;
  readonly steps_created: number;
  readonly checklist_items_created: number;
  readonly already_initialized: boolean;
  readonly reinitialized: boolean;
  readonly steps_kept_completed: number;
}

export type ClaimResult =
  | {
      readonly claimed: true;
      readonly plan_path: string;
      readonly step_anchor: string;
      readonly step_title: string;
      readonly step_index: number;
      readonly substeps: readonly string[];
      readonly claim_token: number;
      readonly claimed_by: string;
      readonly agent: string | null;
      readonly remaining_ready: number;
      readonly total_remaining: number;
      readonly lease_expires_at: string;
      readonly reclaimed_from_expired: boolean;
      readonly previous_holder: string | null;
      /** On a takeover: the agent id and lease expiry of the holder whose lease expired. */
      readonly previous_agent: string | null;
      readonly previous_lease_expires_at: string | null;
    }
  | {
      readonly claimed: false;
      readonly plan_path: string;
      readonly reason: 'no_ready_steps' | 'all_completed';
      readonly all_completed: boolean;
      readonly blocked_steps: readonly string[];
      readonly claimed_steps: readonly string[];
    };

export interface StartResult {
  readonly started: true;
  readonly step_anchor: string;
  readonly status: StepStatus;
  readonly started_at: string;
}

export interface HeartbeatResult {
  readonly renewed: true;
  readonly step_anchor: string;
  readonly claim_token: number;
  readonly lease_expires_at: string;
}

export interface ItemCounts {
  open: number;
  in_progress: number;
  completed: number;
}

/** One checklist change: by kind+ordinal, by kind, by item id, or every item of the step. */
export type ItemSelector =
  | { readonly kind: ItemKind; readonly ordinal: number }
  | { readonly kind: ItemKind; readonly ordinal: 'all' }
  | { readonly id: number }
  | { readonly all: true };

export interface ItemChange {
  readonly selector: ItemSelector;
  readonly status: ItemStatus;
}

export interface UpdateResult {
  readonly updated: number;
  readonly step_anchor: string;
  readonly step_status: StepStatus;
  readonly tasks: ItemCounts;
  readonly tests: ItemCounts;
  readonly checkpoints: ItemCounts;
}

export interface ArtifactResult {
  readonly recorded: true;
  readonly step_anchor: string;
  readonly kind: string;
  readonly artifact_id: number;
}

export interface CompleteOptions {
  readonly commitHash?: string | null;
  readonly forceReason?: string | null;
}

export interface CompleteResult {
  readonly completed: true;
  readonly step_anchor: string;
  readonly commit_hash: string | null;
  readonly forced: boolean;
  readonly force_reason: string | null;
  readonly incomplete_items_auto_completed: number;
  readonly already_completed: boolean;
  readonly plan_completed: boolean;
  readonly remaining_steps: number;
}

export interface ResetResult {
  readonly reset: true;
  readonly step_anchor: string;
  readonly from_status: StepStatus;
  readonly previous_holder: string | null;
}

export interface ReadyResult {
  readonly plan_path: string;
  /** Steps claim would take now (in plan order). */
  readonly ready_steps: readonly string[];
  /** Steps that would be ready but wait for the plan's epic to be in progress (claim refuses them). */
  readonly waiting_steps: readonly string[];
  /** Why `waiting_steps` wait (what claim would say), or null. */
  readonly waiting_reason: string | null;
  readonly epic_id: string | null;
  readonly epic_status: string | null;
  readonly all_steps: readonly string[];
  readonly completed_steps: readonly string[];
  readonly claimed_steps: readonly string[];
  readonly blocked_steps: readonly string[];
  readonly expired_claims: readonly string[];
}

export interface ItemView {
  readonly id: number;
  readonly kind: ItemKind;
  readonly ordinal: number;
  readonly text: string;
  readonly status: ItemStatus;
  readonly updated_by: string | null;
}

export interface StepView {
  readonly anchor: string;
  readonly parent_anchor: string | null;
  readonly number: string;
  readonly title: string;
  readonly step_index: number;
  readonly status: StepStatus;
  readonly claimed_by: string | null;
  readonly agent: string | null;
  readonly claim_token: number;
  readonly claimed_at: string | null;
  readonly lease_expires_at: string | null;
  readonly lease_expired: boolean;
  readonly heartbeat_at: string | null;
  readonly started_at: string | null;
  readonly completed_at: string | null;
  readonly commit_hash: string | null;
  readonly complete_reason: string | null;
  readonly depends_on: readonly string[];
  readonly blocked_by: readonly string[];
  readonly items: readonly ItemView[];
  readonly progress: { readonly done: number; readonly total: number };
  readonly substeps: readonly StepView[];
}

export interface PlanView {
  readonly plan_path: string;
  readonly title: string;
  readonly status: string;
  readonly epic_id: string | null;
  readonly plan_hash: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly steps: readonly StepView[];
  readonly progress: { readonly steps_completed: number; readonly steps_total: number; readonly items_completed: number; readonly items_total: number };
}

export interface EventView {
  readonly id: number;
  readonly at: string;
  readonly worktree: string | null;
  readonly agent: string | null;
  readonly entity: string;
  readonly action: string;
  readonly plan_path: string | null;
  readonly step_anchor: string | null;
  readonly epic_id: string | null;
  readonly from_status: string | null;
  readonly to_status: string | null;
  readonly reason: string | null;
  readonly data: unknown;
}

export interface EventQuery {
  readonly planPath?: string;
  readonly epicId?: string;
  readonly stepAnchor?: string;
  readonly afterId?: number;
  readonly limit?: number;
}

/**
 * The narrow, Promise-returning store interface that the CLI and the extension use. Only a SQLite
 * backend exists; the shape leaves room for a networked one without changing callers.
 */
export interface StateStore extends StepStore, PlanningStore {}

/** Plans, steps, claims and leases: what the CLI's step commands need. */
export interface StepStore {
  readonly location: string;
  initPlan(source: PlanSource, actor: Actor, options?: { force?: boolean; epicId?: string | null }): Promise<InitResult>;
  claimNext(source: PlanSource, actor: Actor, options?: { leaseSeconds?: number }): Promise<ClaimResult>;
  start(planPath: string, anchor: string, actor: Actor): Promise<StartResult>;
  heartbeat(planPath: string, anchor: string, actor: Actor, options?: { leaseSeconds?: number }): Promise<HeartbeatResult>;
  updateItems(source: PlanSource, anchor: string, changes: readonly ItemChange[], actor: Actor, options?: { override?: boolean }): Promise<UpdateResult>;
  recordArtifact(planPath: string, anchor: string, kind: string, summary: string, actor: Actor): Promise<ArtifactResult>;
  complete(source: PlanSource, anchor: string, actor: Actor, options?: CompleteOptions): Promise<CompleteResult>;
  reset(planPath: string, anchor: string, actor: Actor, reason?: string | null): Promise<ResetResult>;
  ready(planPath: string): Promise<ReadyResult>;
  showPlans(planPath?: string): Promise<PlanView[]>;
  /** One step with its substeps, reading only their rows. */
  showStep(planPath: string, anchor: string): Promise<StepView>;
  events(query?: EventQuery): Promise<EventView[]>;
  /** A cheap counter that changes whenever any process commits a write. */
  dataVersion(): Promise<number>;
  close(): void;
}

/** Epics, plan versions and approval, review signals and context recovery. */
export interface PlanningStore {
  createEpic(input: NewEpic, actor: Actor): Promise<EpicRow>;
  listEpics(status?: EpicStatus): Promise<EpicRow[]>;
  getEpic(id: string): Promise<EpicRow>;
  applyEpicEvent(id: string, event: EpicEvent, actor: Actor, reason?: string | null): Promise<TransitionOutcome>;
  startEpic(epicId: string, current: PlanSource, actor: Actor): Promise<TransitionOutcome>;
  approveMerge(epicId: string, actor: Actor): Promise<EpicRow>;
  finishEpic(epicId: string, actor: Actor, reason: string): Promise<TransitionOutcome>;
  proposePlan(epicId: string, plan: ProposedPlan, actor: Actor): Promise<ProposeResult>;
  approvePlan(epicId: string, current: PlanSource, actor: Actor, version?: number): Promise<ApproveResult>;
  requestChanges(epicId: string, feedback: string, actor: Actor, version?: number): Promise<PlanVersionRow>;
  discardPlan(epicId: string, actor: Actor, version?: number, reason?: string | null): Promise<PlanVersionRow & { transition: TransitionOutcome }>;
  planVersions(epicId: string): Promise<PlanVersionRow[]>;
  recordSignal(epicId: string, type: SignalType, summary: string, locations: readonly SignalLocation[], actor: Actor, awaitPerson?: boolean): Promise<SignalResult>;
  signals(epicId?: string): Promise<SignalView[]>;
  decideSignal(signalId: number, decision: SignalDecision, actor: Actor, note?: string | null): Promise<TransitionOutcome>;
  context(request: ContextRequest): Promise<ContextView>;
  runs(options?: { active?: boolean; epicId?: string; limit?: number }): Promise<RunView[]>;
  verifications(options?: { epicId?: string; limit?: number }): Promise<VerificationView[]>;
  /** The debt register (docs/lifecycle.md): open entries unless `all`. */
  debt(options?: { all?: boolean }): Promise<DebtRow[]>;
}
