import type { ItemKind } from '../plan/types.ts';
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
      /** Present (true) only when this is an earlier process's claim whose reply was lost, handed over (docs/postgres-design.md, "Failures, retries, idempotence"). */
      readonly resumed?: true;
    }
  | {
      readonly claimed: false;
      readonly plan_path: string;
      /** files_busy: every ready step shares files with a step another holder has claimed (`files_waiting` says which). */
      readonly reason: 'no_ready_steps' | 'all_completed' | 'files_busy';
      readonly all_completed: boolean;
      readonly blocked_steps: readonly string[];
      readonly claimed_steps: readonly string[];
      /** With files_busy: each ready step held back, and what it shares with whom (docs/files.md, "Claims by agents themselves"). */
      readonly files_waiting?: readonly FilesWait[];
    };

/** A ready step held back because its declared files overlap those of a step another holder has claimed. */
export interface FilesWait {
  readonly anchor: string;
  /** The step's globs that meet the other step's. */
  readonly shares: readonly string[];
  readonly with_plan: string;
  readonly with_step: string;
  readonly with_epic: string | null;
  /** The other step's holder (its worktree). */
  readonly with_holder: string;
  /** `step-3 shares src/db/user.ts with sf-a3f8 step-2 (held by /repo/wt-a)`. */
  readonly message: string;
}

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
  /** Present (true) only when this is an earlier process's artifact whose reply was lost, handed over (docs/postgres-design.md, "Failures, retries, idempotence"). */
  readonly resumed?: true;
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
  /**
   * Steps otherwise ready that claim would pass over because their declared files overlap a step another
   * holder has claimed (docs/files.md, "Claims by agents themselves"); not in `ready_steps`.
   */
  readonly files_waiting: readonly FilesWait[];
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
  readonly progress: {
    readonly steps_completed: number;
    readonly steps_total: number;
    readonly items_completed: number;
    readonly items_total: number;
  };
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

export interface UpdateOptions {
  /** A person acting over an agent's claim (confirmed in the UI); recorded as an override. */
  readonly override?: boolean;
}

export interface FencedClaim {
  readonly step_anchor: string;
  readonly previous_holder: string | null;
  readonly claim_token: number;
}

export interface ReopenResult {
  readonly reopened: true;
  readonly plan_path: string;
  readonly step_anchor: string;
  /** Every step that left `completed`: the step (or the completed parent of a substep) and the substep asked for. */
  readonly steps_reopened: string[];
  readonly status: string;
  readonly previous_commit: string | null;
  readonly previous_completer: string | null;
  /** Claimed steps that depended on it: reset to pending, their tokens bumped, so the holders are fenced. */
  readonly dependents_fenced: FencedClaim[];
  readonly plan_reopened: boolean;
}

/** A plan as the store keeps it (without its structure). */
export interface PlanRecord {
  plan_path: string;
  epic_id: string | null;
  plan_hash: string;
  title: string;
  status: string;
  open_steps: number;
  created_at: string;
  updated_at: string;
}

/** A step as the store keeps it: its claim (holder, token, lease) and its completion. */
export interface StepRecord {
  plan_path: string;
  anchor: string;
  parent_anchor: string | null;
  step_index: number;
  number: string;
  title: string;
  status: StepStatus;
  claimed_by: string | null;
  claimed_agent: string | null;
  claim_token: number;
  claimed_at: string | null;
  lease_expires_at: string | null;
  heartbeat_at: string | null;
  started_at: string | null;
  completed_at: string | null;
  completed_by: string | null;
  completed_token: number | null;
  commit_hash: string | null;
  complete_reason: string | null;
  blockers: number;
}

/** Which step a commit is for: the named one (in the named plan), else the one the worktree holds. */
export interface TargetQuery {
  readonly step?: string;
  readonly planPath?: string;
  readonly worktree: string;
  readonly agent: string | null;
}

export interface CommitTarget {
  readonly planPath: string;
  readonly anchor: string;
}
