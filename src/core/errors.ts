/**
 * Domain errors. Each carries a stable snake_case `code` and a category that the CLI maps to an
 * exit code in one place (refused → 1, usage → 2, environment → 3).
 */
export type ErrorCategory = 'refused' | 'usage' | 'environment';

/**
 * Every code Springfield's errors carry, each with its one category: an error can only be made with
 * a code listed here, and its class must match the code's category (docs/cli-contract.md lists them,
 * checked by test/unit/errorCodes.test.ts).
 */
export const ERROR_CODES = {
  // refused by the rules (exit 1)
  already_completed: 'refused',
  app_running: 'refused',
  branch_checked_out: 'refused',
  budget_still_spent: 'refused',
  claim_conflict: 'refused',
  commit_failed: 'refused',
  config_changed: 'refused',
  config_not_a_file: 'refused',
  config_not_allowed: 'refused',
  dangling_reference: 'refused',
  epic_elsewhere: 'refused',
  epic_id_exhausted: 'refused',
  epic_not_in_progress: 'refused',
  file_appeared: 'refused',
  incomplete: 'refused',
  invalid_transition: 'refused',
  main_dirty: 'refused',
  main_untracked: 'refused',
  markers_broken: 'refused',
  no_epic_worktree: 'refused',
  merge_conflict: 'refused',
  no_approved_plan: 'refused',
  no_proposed_plan: 'refused',
  no_worktrees: 'refused',
  not_a_file: 'refused',
  not_claimed: 'refused',
  not_completed: 'refused',
  not_epic_worktree: 'refused',
  not_holder: 'refused',
  not_ours: 'refused',
  not_proposed: 'refused',
  not_ready: 'refused',
  not_retryable: 'refused',
  not_reviewable: 'refused',
  nothing_to_commit: 'refused',
  nothing_to_merge: 'refused',
  nothing_to_migrate: 'refused',
  outside_epic_worktree: 'refused',
  plan_budget_exhausted: 'refused',
  plan_drift: 'refused',
  plan_owned: 'refused',
  preset_limited: 'refused',
  repository_not_empty: 'refused',
  review_busy: 'refused',
  role_not_supported: 'refused',
  run_changed: 'refused',
  schema_mismatch: 'refused',
  self_approval: 'refused',
  signal_closed: 'refused',
  stale_token: 'refused',
  state_dir_link: 'refused',
  state_tracked: 'refused',
  symlink_refused: 'refused',
  target_exists: 'refused',
  unsafe_path: 'refused',
  unsupported_platform: 'refused',
  unverified: 'refused',
  verification_failed: 'refused',
  worktree_branch: 'refused',
  worktree_busy: 'refused',
  worktree_path_taken: 'refused',
  // bad usage or input (exit 2)
  ambiguous_step: 'usage',
  bad_argument: 'usage',
  bad_brief: 'usage',
  bad_budget: 'usage',
  bad_connect_timeout: 'usage',
  bad_host: 'usage',
  bad_location: 'usage',
  bad_message: 'usage',
  bad_option: 'usage',
  bad_repository_id: 'usage',
  bad_target: 'usage',
  bad_token: 'usage',
  bad_tool_input: 'usage',
  bad_trailer: 'usage',
  invalid_complexity: 'usage',
  invalid_config: 'usage',
  invalid_plan: 'usage',
  invalid_priority: 'usage',
  location_outside_repository: 'usage',
  location_outside_worktree: 'usage',
  missing_argument: 'usage',
  missing_command: 'usage',
  missing_option: 'usage',
  missing_value: 'usage',
  no_claimed_step: 'usage',
  no_config: 'usage',
  no_database: 'usage',
  no_epic: 'usage',
  no_plan: 'usage',
  no_postgres: 'usage',
  no_run_command: 'usage',
  no_repo: 'usage',
  no_signal: 'usage',
  no_step: 'usage',
  no_worktree: 'usage',
  not_in_changes: 'usage',
  plan_outside_worktree: 'usage',
  prompt_not_a_file: 'usage',
  prompt_symlink: 'usage',
  prompt_too_large: 'usage',
  prompt_unreadable: 'usage',
  unexpected_argument: 'usage',
  unknown_command: 'usage',
  unknown_commit: 'usage',
  unknown_epic: 'usage',
  unknown_item: 'usage',
  unknown_option: 'usage',
  unknown_plan: 'usage',
  unknown_preset: 'usage',
  unknown_run: 'usage',
  unknown_signal: 'usage',
  unknown_step: 'usage',
  unknown_token: 'usage',
  unknown_version: 'usage',
  wrong_plan: 'usage',
  // the environment (exit 3)
  config_unreadable: 'environment',
  context_unwritable: 'environment',
  database_auth_failed: 'environment',
  database_busy: 'environment',
  database_corrupt: 'environment',
  database_io: 'environment',
  database_locked: 'environment',
  database_missing: 'environment',
  database_permission: 'environment',
  database_unavailable: 'environment',
  database_unreachable: 'environment',
  demo_agents_missing: 'environment',
  directory_unusable: 'environment',
  git_failed: 'environment',
  git_missing: 'environment',
  migrate_failed: 'environment',
  migrate_mismatch: 'environment',
  no_repository_id: 'environment',
  no_such_directory: 'environment',
  not_a_git_repository: 'environment',
  pending_unwritable: 'environment',
  runtime_too_old: 'environment',
  schema_too_new: 'environment',
  unreadable: 'environment',
  unsafe_directory: 'environment',
  unwritable: 'environment',
  wal_unavailable: 'environment',
  worktree_missing: 'environment',
} as const satisfies Record<string, ErrorCategory>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes of one category. */
export type CodeOf<C extends ErrorCategory> = {
  [K in ErrorCode]: (typeof ERROR_CODES)[K] extends C ? K : never;
}[ErrorCode];

/** True when `code` is one of Springfield's error codes. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

export class SpringfieldError extends Error {
  readonly code: ErrorCode;
  readonly category: ErrorCategory;
  protected constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = new.target.name;
    this.category = ERROR_CODES[code];
    this.code = code;
  }
}

/** Refused by the rules: not the holder, plan drift, invalid transition, incomplete items. */
export class RefusedError extends SpringfieldError {
  constructor(code: CodeOf<'refused'>, message: string) {
    super(code, message);
  }
}

/** Bad usage or input: unknown command, missing argument, malformed plan, unknown step. */
export class UsageError extends SpringfieldError {
  constructor(code: CodeOf<'usage'>, message: string) {
    super(code, message);
  }
}

/** The environment: not a git repository, database locked, schema too new, wrong runtime. */
export class EnvironmentError extends SpringfieldError {
  constructor(code: CodeOf<'environment'>, message: string) {
    super(code, message);
  }
}

/** The error of `code`'s category with that code (for an error rebuilt from another bundle's). */
export function errorFor(code: ErrorCode, message: string): SpringfieldError {
  const category = ERROR_CODES[code];
  switch (category) {
    case 'refused':
      return new RefusedError(code as CodeOf<'refused'>, message);
    case 'usage':
      return new UsageError(code as CodeOf<'usage'>, message);
    case 'environment':
      return new EnvironmentError(code as CodeOf<'environment'>, message);
    default:
      return category satisfies never;
  }
}

/** A malformed plan: `file:line: reason`. */
export class PlanError extends UsageError {
  readonly file: string;
  readonly line: number;
  readonly reason: string;
  constructor(file: string, line: number, reason: string) {
    super('invalid_plan', line > 0 ? `${file}:${line}: ${reason}` : `${file}: ${reason}`);
    this.file = file;
    this.line = line;
    this.reason = reason;
  }
}

/**
 * A write whose reply was lost and whose outcome could not be looked up (the server stayed away):
 * `op` is its operation id, which the CLI hands to the next run of the same command
 * (docs/postgres-design.md, "Failures, retries, idempotence", "Retrying from a new process").
 */
export class OutcomeUnknownError extends EnvironmentError {
  readonly op: string;
  constructor(op: string, message: string) {
    super('database_unreachable', message);
    this.op = op;
  }
}

/**
 * An error thrown by code of another bundle (the PostgreSQL backend is dist/postgres.cjs, with its own
 * copy of these classes) rebuilt as this bundle's, so the CLI's mapping to exit codes (instanceof) holds.
 */
export function ownError(err: unknown): unknown {
  if (err instanceof SpringfieldError || !(err instanceof Error)) return err;
  const e = err as Error & { category?: unknown; code?: unknown; op?: unknown };
  if (!isErrorCode(e.code)) return err;
  if (e.category === 'environment' && typeof e.op === 'string') return new OutcomeUnknownError(e.op, e.message);
  return errorFor(e.code, e.message);
}
