/**
 * When an epic whose steps are all completed may become `implemented`: the one rule the
 * scheduler's mechanical completion and `epic finish` both apply (docs/state-machine.md).
 */

/** What the rule reads of an epic's verification since it last entered in_progress. */
export interface VerificationState {
  /** The latest verdict since the epic last entered in_progress; null if none. */
  readonly lastVerdict: 'pass' | 'fail' | null;
  /** A builder run ended after that verdict (or, with none, since the epic entered in_progress). */
  readonly unverifiedBuild: boolean;
}

/**
 * Why the epic may not be marked implemented yet, or null: with verification configured, its
 * latest verification must have passed, after the latest builder run.
 */
export function completionHold(
  verificationConfigured: boolean,
  v: VerificationState,
): 'verification_failed' | 'unverified' | null {
  if (!verificationConfigured) return null;
  if (v.lastVerdict === 'fail') return 'verification_failed';
  if (v.unverifiedBuild || v.lastVerdict === null) return 'unverified';
  return null;
}
