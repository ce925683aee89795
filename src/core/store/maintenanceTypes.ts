/** A worktree as doctor and prune see it: where it is, and whether git lists it as bare or missing. */
export interface WorktreeInfo {
  readonly path: string;
  readonly bare: boolean;
  readonly missing: boolean;
}

/** A commit's Springfield trailers: the step (of the plan) it completes. */
export interface CommitTrailer {
  readonly commit_hash: string;
  readonly plan_path: string;
  readonly step_anchor: string;
}

export interface PruneResult {
  /** Plans removed (or, with dry_run, that would be). */
  readonly pruned: string[];
  readonly dry_run: boolean;
  /** Rows of steps, deps, items or artifacts whose parent row is gone. */
  readonly dangling_rows: number;
}

export interface ReconcileOptions {
  /** Overwrite a completed step's commit hash when git names a different commit. */
  readonly force: boolean;
  /** Only this plan (a store key); every plan when absent. */
  readonly planPath?: string;
}

export interface ReconciledStep {
  readonly plan_path: string;
  readonly step_anchor: string;
  readonly commit_hash: string;
  readonly from_status: string;
  readonly previous_hash: string | null;
}

export interface ReconcileConflict {
  readonly plan_path: string;
  readonly step_anchor: string;
  readonly db_hash: string;
  readonly git_hash: string;
  readonly overwritten: boolean;
}

export interface UnknownTrailer {
  readonly plan_path: string;
  readonly step_anchor: string;
  readonly commit_hash: string;
  readonly reason: 'unknown_plan' | 'unknown_step';
}

export interface ReconcileResult {
  readonly reconciled: ReconciledStep[];
  readonly conflicts: ReconcileConflict[];
  readonly unknown: UnknownTrailer[];
  /** Steps whose database record already matches git. */
  readonly unchanged: number;
  readonly plans_completed: string[];
}

export type Severity = 'error' | 'warning';

/** One problem and how to fix it: `fix` for a person, `command` when a shell command does it as it stands. */
export interface Finding {
  readonly severity: Severity;
  readonly code: string;
  readonly message: string;
  readonly fix: string;
  /** Runs in the main worktree (else the current directory) and works in the state doctor found; null when the fix is not a command. */
  readonly command: string | null;
}

export interface CheckResult {
  readonly name: string;
  readonly status: 'ok' | 'warning' | 'error' | 'skipped';
  readonly detail: string;
}

export interface DoctorReport {
  readonly ok: boolean;
  readonly db_path: string;
  readonly errors: number;
  readonly warnings: number;
  readonly checks: CheckResult[];
  readonly findings: Finding[];
}

export interface DoctorInput {
  readonly dbPath: string;
  /** The main worktree (where PLAN.md and plan files live); null for a bare repository. */
  readonly mainRoot: string | null;
  readonly worktrees: readonly WorktreeInfo[];
  readonly now: Date;
  /** SQLite: check every page, the whole event log included (else its ends only: sqlite/integrity.ts). */
  readonly full?: boolean;
}
