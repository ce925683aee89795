/**
 * Domain errors. Each carries a stable snake_case `code` and a category that the CLI maps to an
 * exit code in one place (refused → 1, usage → 2, environment → 3).
 */
export type ErrorCategory = 'refused' | 'usage' | 'environment';

export class SpringfieldError extends Error {
  readonly code: string;
  readonly category: ErrorCategory;
  constructor(category: ErrorCategory, code: string, message: string) {
    super(message);
    this.name = new.target.name;
    this.category = category;
    this.code = code;
  }
}

/** Refused by the rules: not the holder, plan drift, invalid transition, incomplete items. */
export class RefusedError extends SpringfieldError {
  constructor(code: string, message: string) {
    super('refused', code, message);
  }
}

/** Bad usage or input: unknown command, missing argument, malformed plan, unknown step. */
export class UsageError extends SpringfieldError {
  constructor(code: string, message: string) {
    super('usage', code, message);
  }
}

/** The environment: not a git repository, database locked, schema too new, wrong runtime. */
export class EnvironmentError extends SpringfieldError {
  constructor(code: string, message: string) {
    super('environment', code, message);
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
 * (docs/postgres.md, "Failures, retries, idempotence", "Retrying from a new process").
 */
export class OutcomeUnknownError extends EnvironmentError {
  readonly op: string;
  constructor(op: string, message: string) {
    super('database_unreachable', message);
    this.op = op;
  }
}
