/**
 * Every refusal the store's operations throw, on either backend: its category, its code (the CLI's
 * contract, docs/cli-contract.md) and its words. Adding or rewording one is a change to this file only.
 * Failures of the backend itself (locked, unreachable, schema too new) are mapped where they happen:
 * `mapSqliteError` (sqlite/sqlite.ts) and `mapPgError` (postgres/connection.ts).
 */
import { RefusedError, UsageError } from '../../errors.ts';

/** A list of changes cut to `max` for a message, saying how many more there are. */
function firstChanges(changes: readonly string[], max: number): string {
  return changes.slice(0, max).join('; ') + (changes.length > max ? `; and ${changes.length - max} more` : '');
}

// Plans and steps.

export function unknownPlan(planPath: string): UsageError {
  return new UsageError('unknown_plan', `${planPath}: plan is not initialised (run 'springfield init ${planPath}')`);
}

export function unknownStep(planPath: string, anchor: string): UsageError {
  return new UsageError('unknown_step', `${planPath}: no step '${anchor}' (see 'springfield show ${planPath}')`);
}

/** A step a context was asked for that its plan (or no plan) has. */
export function unknownStepOfContext(anchor: string, planPath: string | undefined): UsageError {
  return new UsageError('unknown_step', `no step '${anchor}'${planPath ? ` in ${planPath}` : ''}`);
}

/** A plan file whose structure is no longer the one initialised: what changed, and the way out. */
export function planChanged(planPath: string, changes: readonly string[]): RefusedError {
  const what = changes.length > 0 ? firstChanges(changes, 5) : 'structure changed';
  return new RefusedError(
    'plan_drift',
    `${planPath}: plan changed since init (${what}); re-initialise with 'springfield init --force ${planPath}'`,
  );
}

// Holding a claim (rows.ts, assertHolder).

export function notClaimed(action: string, anchor: string, status: string): RefusedError {
  return new RefusedError('not_claimed', `cannot ${action} ${anchor}: it is ${status}, not claimed (claim it first)`);
}

export function notHolder(action: string, anchor: string, holder: string, caller: string): RefusedError {
  return new RefusedError('not_holder', `cannot ${action} ${anchor}: it is held by ${holder}, not by ${caller}`);
}

export function unknownToken(action: string, anchor: string, token: number, current: number): UsageError {
  return new UsageError(
    'unknown_token',
    `cannot ${action} ${anchor}: claim token ${token} is unknown (no claim has been given it; current ${current})`,
  );
}

export function staleToken(action: string, anchor: string, token: number, current: number): RefusedError {
  return new RefusedError(
    'stale_token',
    `cannot ${action} ${anchor}: claim token ${token} is stale (current ${current}); the claim was reset or reclaimed since`,
  );
}

/** A guarded write found the claim changed under it (PostgreSQL raises it from SQL too: sf_expect). */
export function claimChanged(action: string, anchor: string): RefusedError {
  return claimChangedAs(claimChangedMessage(action, anchor));
}

/** The same refusal for a message PostgreSQL raised (sf_expect, with a message built by claimChangedMessage). */
export function claimChangedAs(message: string): RefusedError {
  return new RefusedError('not_holder', message);
}

export function claimChangedMessage(action: string, anchor: string): string {
  return `cannot ${action} ${anchor}: the claim changed`;
}

// Claims (claims.ts).

/** Why a plan's steps wait for its epic (claim refuses with it; ready reports it). */
export function epicWaitMessage(planPath: string, epicId: string, status: string): string {
  const hint = status === 'ready' ? ` (start it: 'springfield epic start ${epicId}')` : '';
  return `${planPath} belongs to epic ${epicId}, which is ${status.replace(/_/g, ' ')}; steps are claimed while it is in progress${hint}`;
}

export function epicNotInProgress(message: string): RefusedError {
  return new RefusedError('epic_not_in_progress', message);
}

/** Where an epic's steps are claimed instead (store/shared/claims.ts). */
export function epicElsewhereMessage(
  planPath: string,
  epicId: string,
  worktree: string,
  branch: string | null,
): string {
  return `${planPath} belongs to epic ${epicId}, built in its worktree ${worktree}${branch ? ` on ${branch}` : ''}: claim there (cd ${worktree})${branch ? `, or check out ${branch} in this worktree` : ''}`;
}

export function epicElsewhere(message: string): RefusedError {
  return new RefusedError('epic_elsewhere', message);
}

export function claimConflict(anchor: string): RefusedError {
  return new RefusedError('claim_conflict', `${anchor} changed while being claimed; try again`);
}

export function cannotStart(anchor: string, status: string): RefusedError {
  return new RefusedError('not_claimed', `cannot start ${anchor}: it is ${status}`);
}

export function resetCompleted(planPath: string, anchor: string, commitHash: string | null): RefusedError {
  const what = commitHash ? `by commit ${commitHash}` : 'with no commit recorded';
  return new RefusedError(
    'already_completed',
    `cannot reset ${anchor}: it is completed (${what}); to undo a completion use 'springfield reopen ${planPath} ${anchor} --reason TEXT'`,
  );
}

export function notCompleted(anchor: string, status: string): RefusedError {
  return new RefusedError(
    'not_completed',
    `cannot reopen ${anchor}: it is ${status}, not completed${status === 'pending' ? '' : ` (to take the claim back use 'springfield reset')`}`,
  );
}

// Items and completion (items.ts, complete.ts).

export function updateCompleted(anchor: string): RefusedError {
  return new RefusedError('already_completed', `cannot update ${anchor}: it is completed`);
}

export function unknownItemId(anchor: string, id: number): UsageError {
  return new UsageError('unknown_item', `${anchor} has no checklist item with id ${id}`);
}

export function unknownItem(anchor: string, kind: string, ordinal: number, ofKind: number): UsageError {
  return new UsageError(
    'unknown_item',
    `${anchor} has no ${kind} ${ordinal} (it has ${ofKind} ${kind}${ofKind === 1 ? '' : 's'}, numbered from 0)`,
  );
}

/** A checklist item still open, as the strict completion names it. */
export interface OpenItem {
  readonly step_anchor: string;
  readonly kind: string;
  readonly ordinal: number;
  readonly text: string;
}

export function incomplete(anchor: string, items: readonly OpenItem[]): RefusedError {
  const shown = items
    .slice(0, 3)
    .map(
      (i) =>
        `${i.step_anchor === anchor ? '' : `${i.step_anchor} `}${i.kind} ${i.ordinal} "${i.text.length > 40 ? i.text.slice(0, 39) + '…' : i.text}"`,
    )
    .join(', ');
  const what = `${items.length} open item${items.length === 1 ? '' : 's'} (${shown}${items.length > 3 ? ', …' : ''})`;
  return new RefusedError('incomplete', `cannot complete ${anchor}: ${what}; finish them or pass --force <reason>`);
}

/** `by`: the completer as messages name it (rows.ts, holderName), or null when unknown. */
export function completedByOther(anchor: string, by: string | null, token: number | null): RefusedError {
  return new RefusedError(
    'already_completed',
    `${anchor} is already completed by ${by ?? 'someone else'}${token !== null ? ` with token ${token}` : ''}`,
  );
}

// Committing (commitTarget.ts).

export function noPlanHasStep(anchor: string): UsageError {
  return new UsageError('unknown_step', `no initialised plan has a step '${anchor}' (see 'springfield show')`);
}

export function stepInSeveralPlans(anchor: string, plans: readonly string[]): UsageError {
  return new UsageError(
    'ambiguous_step',
    `several plans have a step '${anchor}' (${plans.join(', ')}): pass --plan PATH`,
  );
}

export function noClaimedStep(worktree: string, planPath: string | undefined): UsageError {
  return new UsageError(
    'no_claimed_step',
    `${worktree} holds no claimed step${planPath ? ` in ${planPath}` : ''}: claim one first, or pass --step ANCHOR`,
  );
}

export function severalHeldSteps(
  worktree: string,
  planPath: string | undefined,
  held: readonly { plan_path: string; anchor: string }[],
): UsageError {
  const list = held.map((h) => `${h.plan_path} ${h.anchor}`).join(', ');
  return new UsageError(
    'ambiguous_step',
    `${worktree} holds ${held.length} steps${planPath ? ` in ${planPath}` : ''} (${list}): pass --step ANCHOR${planPath ? '' : ' and --plan PATH'}`,
  );
}

// Epics (epics.ts).

export function missingTitle(): UsageError {
  return new UsageError('missing_argument', 'an epic needs a non-empty title');
}

export function unknownEpic(id: string): UsageError {
  return new UsageError('unknown_epic', `no epic '${id}' (see 'springfield epic list')`);
}

export function notRetryable(epicId: string, statusReason: string | null): RefusedError {
  return new RefusedError(
    'not_retryable',
    `${epicId} is blocked by ${statusReason ?? 'a review signal'}, not by a failing agent or a drifted plan; re-plan it (propose and approve a new plan) or defer it`,
  );
}

export function mergeNotReady(epicId: string, status: string): RefusedError {
  return new RefusedError(
    'invalid_transition',
    `cannot approve the merge of ${epicId}: it is ${status.replace(/_/g, ' ')} (approve once it is implemented or verified)`,
  );
}

// Plan versions and approval (planVersions.ts).

export function plannerFixed(epicId: string, status: string): RefusedError {
  return new RefusedError(
    'invalid_transition',
    `cannot change who plans ${epicId}: it is ${status.replace(/_/g, ' ')} (only a planned or blocked epic takes a new plan)`,
  );
}

export function cannotPropose(epicId: string, status: string): RefusedError {
  return new RefusedError(
    'invalid_transition',
    `cannot propose a plan for ${epicId}: it is ${status.replace(/_/g, ' ')} (plans are proposed while planned or blocked)`,
  );
}

export function planOwned(planPath: string, owner: string): RefusedError {
  return new RefusedError('plan_owned', `${planPath} belongs to epic ${owner}; a plan belongs to one epic`);
}

export function planBudgetExhausted(epicId: string, budget: number, complexity: string): RefusedError {
  return new RefusedError(
    'plan_budget_exhausted',
    `${epicId} has used its ${budget} planning iterations (${complexity}); defer it or raise its complexity`,
  );
}

export function unknownVersion(epicId: string, version: number): UsageError {
  return new UsageError('unknown_version', `${epicId} has no plan version ${version}`);
}

export function noProposedPlan(epicId: string): RefusedError {
  return new RefusedError(
    'no_proposed_plan',
    `${epicId} has no plan waiting for approval (propose one with 'springfield plan propose ${epicId} <plan.md>')`,
  );
}

export function notProposed(epicId: string, version: number, status: string): RefusedError {
  return new RefusedError('not_proposed', `version ${version} of ${epicId}'s plan is ${status}, not proposed`);
}

export function selfApproval(agent: string, version: number): RefusedError {
  return new RefusedError(
    'self_approval',
    `${agent} proposed version ${version}; a planner never approves its own plan`,
  );
}

export function wrongVersionPlan(epicId: string, version: number, planPath: string, given: string): UsageError {
  return new UsageError('wrong_plan', `version ${version} of ${epicId} is ${planPath}, not ${given}`);
}

export function proposalDrift(planPath: string, version: number, changes: readonly string[]): RefusedError {
  return new RefusedError(
    'plan_drift',
    `${planPath} changed since version ${version} was proposed (${changes.slice(0, 3).join('; ')}); propose it again`,
  );
}

export function missingFeedback(): UsageError {
  return new UsageError('missing_value', 'request-changes needs --feedback TEXT');
}

export function noApprovedPlan(epicId: string): RefusedError {
  return new RefusedError(
    'no_approved_plan',
    `${epicId} has no approved plan; approve one with 'springfield plan approve ${epicId}'`,
  );
}

export function wrongApprovedPlan(epicId: string, planPath: string, given: string): UsageError {
  return new UsageError('wrong_plan', `${epicId}'s approved plan is ${planPath}, not ${given}`);
}

export function approvedDrift(planPath: string, changes: readonly string[]): RefusedError {
  return new RefusedError(
    'plan_drift',
    `${planPath} differs from the approved plan (${changes.slice(0, 3).join('; ')}); restore it, or defer and resume the epic to propose and approve it again`,
  );
}

export function noPlan(epicId: string): RefusedError {
  return new RefusedError('no_approved_plan', `${epicId} has no plan`);
}

export function stepsNotCompleted(epicId: string, open: readonly string[]): RefusedError {
  return new RefusedError(
    'incomplete',
    `cannot finish ${epicId}: steps not completed: ${open.slice(0, 5).join(', ')}${open.length > 5 ? ', …' : ''}`,
  );
}

export function verificationFailed(
  epicId: string,
  failure: { readonly command: string; readonly exitCode: number | null } | null,
): RefusedError {
  const what = failure ? `: ${failure.command} exited ${failure.exitCode ?? 'without a code'}` : '';
  return new RefusedError(
    'verification_failed',
    `cannot finish ${epicId}: its latest verification failed${what}; a builder fixes it and the scheduler verifies again (springfield orchestrate)`,
  );
}

export function unverified(epicId: string): RefusedError {
  return new RefusedError(
    'unverified',
    `cannot finish ${epicId}: verification is configured and has not passed since its latest build; let the scheduler verify it (springfield orchestrate)`,
  );
}

export function missingNote(): UsageError {
  return new UsageError('missing_value', '--summary needs a non-empty text');
}

// Review signals (signals.ts).

export function missingSummary(): UsageError {
  return new UsageError('missing_value', 'a signal needs --summary TEXT');
}

export function unknownSignal(signalId: number): UsageError {
  return new UsageError('unknown_signal', `no signal #${signalId} (see 'springfield signals')`);
}

export function signalClosed(signalId: number, status: string): RefusedError {
  return new RefusedError(
    'signal_closed',
    `signal #${signalId} is ${status === 'applied' ? 'already applied' : 'already decided'}; nothing to decide`,
  );
}

// Agent runs (runs.ts, agentRun.ts).

export function planOfOtherEpic(planPath: string, owner: string, epicId: string): UsageError {
  return new UsageError('wrong_plan', `${planPath} belongs to epic ${owner}, not ${epicId}`);
}

export function noPlanForStep(epicId: string): UsageError {
  return new UsageError('no_plan', `${epicId} has no plan yet; pass --plan PATH with --step`);
}

export function runChanged(runId: number): RefusedError {
  return new RefusedError('run_changed', `run ${runId} changed while being finished; try again`);
}

export function unknownRun(runId: number): UsageError {
  return new UsageError('unknown_run', `no run ${runId} (see 'springfield runs')`);
}

export function badBudget(kind: string, value: unknown): UsageError {
  return new UsageError('bad_budget', `an epic's ${kind} budget must be a positive number, got ${String(value)}`);
}
