/**
 * What one idle epic wants next: the state machine's transitions and budgets, the review policy by
 * complexity, plan approval (docs/state-machine.md, docs/scheduler.md).
 * Pure; decide() adds slots, run timeouts and the one-agent-per-epic rule.
 */
import { budgetBlockReason, sameFailureCause } from '../epics/budget.ts';
import { completionHold } from '../epics/completion.ts';
import { isCostBlockReason, pausedMessage } from '../epics/costBudget.ts';
import { COMPLEXITY_POLICY } from '../epics/complexity.ts';
import { RETRYABLE_BLOCKS, type Role } from '../epics/transitions.ts';
import type { Action, EpicSnapshot, SchedulerConfig } from './types.ts';
import { BUILDING_ROLE, MERGING_ROLE, PLANNING_ROLE, REVIEWING_ROLE } from '../../shared/roles.ts';

/** An epic-scoped action (every kind but stop_run). */
export type EpicAction = Exclude<Action, { kind: 'stop_run' }>;

export const MESSAGES = {
  planAwaitingApproval: "a plan version is waiting for a person's approval",
  personPlans: 'waiting for its plan: a person said they would write it (springfield plan propose)',
  blockedForPerson: (e: EpicSnapshot) =>
    isCostBlockReason(e.statusReason)
      ? pausedMessage(e.id, e.statusReason ?? '')
      : `blocked — ${e.statusReason ?? 'by a fault'}; a person retries it: springfield epic retry ${e.id}`,
  signalsAwaitingPerson: (n: number) => `${n} review signal${n === 1 ? '' : 's'} waiting for a person's decision`,
  mergeApproval: "waiting for a person's approval before merge",
  personReview: "built: waiting for a person's review (Review changes)",
  pullRequestOpen: (url: string) => `pull request ${url} is open; the epic is done once it is merged there`,
  mainDirty: (files: readonly string[]) =>
    `verified; its merge waits: the main worktree has uncommitted changes (${files.slice(0, 3).join(', ')}${files.length > 3 ? ', …' : ''}); commit or stash them and it merges`,
  noApprovedPlan: 'ready without an approved plan',
  planBudget: (e: EpicSnapshot) =>
    `planning budget spent (${e.planIteration} of ${e.planBudget} plan iterations): re-scope, defer or raise its complexity`,
} as const;

export const REASONS = {
  sameFailure: (e: EpicSnapshot, n: number) => budgetBlockReason(e.iteration, e.buildBudget, sameFailureCause(n)),
  budget: (e: EpicSnapshot) =>
    budgetBlockReason(e.iteration, e.buildBudget, 'verification failed with no build iteration left'),
  skipReview: (e: EpicSnapshot) => `review skipped: ${e.complexity} epic passed verification`,
} as const;

/** True when the role has a non-empty command configured. */
export function hasCommand(config: SchedulerConfig, role: Role): boolean {
  return (config.roles[role]?.length ?? 0) > 0;
}

function run(
  epic: EpicSnapshot,
  role: Role,
  reason: string,
  stepAnchor: string | null = null,
  newIteration = false,
): EpicAction {
  return { kind: 'run', role, epicId: epic.id, stepAnchor, worktree: epic.worktree, newIteration, reason };
}

function surface(epic: EpicSnapshot, message: string): EpicAction {
  return { kind: 'surface', epicId: epic.id, message };
}

/** True when the epic is blocked by a fault only a person lifts (RETRYABLE_BLOCKS): nothing runs until a retry. */
export function blockedForPerson(epic: EpicSnapshot): boolean {
  return epic.status === 'blocked' && RETRYABLE_BLOCKS.some((e) => epic.statusReason?.startsWith(`${e}:`) === true);
}

/** PR mode: check the pull request when the last check is old enough, else say what the epic waits for. */
function pullRequestWait(epic: EpicSnapshot, config: SchedulerConfig, now: Date): EpicAction {
  const pr = epic.pullRequest as NonNullable<EpicSnapshot['pullRequest']>;
  const last = pr.checkedAt ? Date.parse(pr.checkedAt) : Number.NaN;
  if (!Number.isFinite(last) || now.getTime() - last >= (config.prCheckMs ?? 60_000))
    return { kind: 'check_pr', epicId: epic.id, url: pr.url };
  return surface(epic, MESSAGES.pullRequestOpen(pr.url));
}

/** The action an epic with no live run wants, or null; roles without a command are not started. */
export function intentFor(epic: EpicSnapshot, config: SchedulerConfig, now: Date = new Date(0)): EpicAction | null {
  switch (epic.status) {
    case 'planned':
      return planning(epic, config);
    case 'blocked':
      return blockedForPerson(epic) ? surface(epic, MESSAGES.blockedForPerson(epic)) : planning(epic, config);
    case 'ready':
      return epic.planPath === null ? surface(epic, MESSAGES.noApprovedPlan) : { kind: 'start_epic', epicId: epic.id };
    case 'in_progress':
      return building(epic, config);
    case 'implemented':
      return reviewing(epic, config);
    case 'verified':
      if (epic.mergeQueued) return null;
      if (epic.pullRequest) return pullRequestWait(epic, config, now);
      if (COMPLEXITY_POLICY[epic.complexity].personApprovalBeforeMerge && !epic.mergeApprovedByPerson) {
        return surface(epic, MESSAGES.mergeApproval);
      }
      return { kind: 'merge', epicId: epic.id };
    case 'done':
    case 'deferred':
      return null;
  }
}

function planning(epic: EpicSnapshot, config: SchedulerConfig): EpicAction | null {
  if (epic.awaitingApproval) return surface(epic, MESSAGES.planAwaitingApproval);
  if (epic.planIteration >= epic.planBudget) return surface(epic, MESSAGES.planBudget(epic));
  // An epic a person said they would plan is theirs, re-plans included: Lisa never starts for it.
  if (epic.planner === 'person') return surface(epic, MESSAGES.personPlans);
  if (!hasCommand(config, PLANNING_ROLE)) return null;
  return run(epic, PLANNING_ROLE, epic.status === 'blocked' ? 're-plan the blocked epic' : 'write the plan');
}

function building(epic: EpicSnapshot, config: SchedulerConfig): EpicAction | null {
  // A new worktree is made ready (included files, setup commands) before anything runs in it.
  if (config.setupConfigured && epic.worktree !== null && !epic.setupDone) return { kind: 'setup', epicId: epic.id };
  const v = epic.verification;
  const configured = config.verificationConfigured;
  if (configured && v.unverifiedBuild) return { kind: 'verify', epicId: epic.id };
  const failed = configured && v.lastVerdict === 'fail';
  if (failed && v.sameFailureStreak >= config.sameFailureLimit) {
    return {
      kind: 'transition',
      epicId: epic.id,
      event: 'iteration_budget_exhausted',
      reason: REASONS.sameFailure(epic, v.sameFailureStreak),
    };
  }
  if (failed && epic.iteration >= epic.buildBudget) {
    return { kind: 'transition', epicId: epic.id, event: 'iteration_budget_exhausted', reason: REASONS.budget(epic) };
  }
  const ralph = hasCommand(config, BUILDING_ROLE);
  const next = epic.steps.ready[0] ?? null;
  const allDone = epic.steps.completed >= epic.steps.total;
  if (failed) {
    // Back to Ralph: on the next ready step, or on the whole epic once every step is done.
    if (!ralph || (!allDone && next === null)) return null;
    return run(epic, BUILDING_ROLE, 'verification failed: back to Ralph', next, true);
  }
  if (allDone) {
    if (epic.reworkPending) return ralph ? run(epic, BUILDING_ROLE, "fix the review's findings") : null;
    if (completionHold(configured, v) === null) return { kind: 'complete_mechanically', epicId: epic.id };
    return { kind: 'verify', epicId: epic.id };
  }
  return next !== null && ralph ? run(epic, BUILDING_ROLE, `build ${next}`, next) : null;
}

/** Whether a person reviews this epic instead of Bart (`"reviewedByPerson"` lists its complexity). */
export function reviewedByPerson(
  epic: Pick<EpicSnapshot, 'complexity'>,
  config: Pick<SchedulerConfig, 'reviewedByPerson'>,
): boolean {
  return config.reviewedByPerson?.includes(epic.complexity) ?? false;
}

function reviewing(epic: EpicSnapshot, config: SchedulerConfig): EpicAction | null {
  if (epic.signalsAwaitingPerson > 0) return surface(epic, MESSAGES.signalsAwaitingPerson(epic.signalsAwaitingPerson));
  if (reviewedByPerson(epic, config))
    return epic.review.signalsThisIteration > 0 ? null : surface(epic, MESSAGES.personReview);
  const policy = COMPLEXITY_POLICY[epic.complexity];
  if (
    policy.review === 'skip_when_verified' &&
    config.verificationConfigured &&
    epic.verification.lastVerdict === 'pass'
  ) {
    return { kind: 'transition', epicId: epic.id, event: 'signal_pass', reason: REASONS.skipReview(epic) };
  }
  if (epic.review.signalsThisIteration > 0) return null;
  // A review that ended without a signal is a Bart fault (no_progress): retried after a backoff, then blocked.
  return hasCommand(config, REVIEWING_ROLE) ? run(epic, REVIEWING_ROLE, 'review the implementation') : null;
}

/**
 * Who acts next on the epic, for display: a role, 'person' when a person must decide, or null when
 * nothing is due. Ignores slots and configured commands; `config` says whose review it is.
 */
export function nextRoleFor(
  epic: EpicSnapshot,
  config: Pick<SchedulerConfig, 'reviewedByPerson'> = {},
): Role | 'person' | null {
  switch (epic.status) {
    case 'planned':
    case 'blocked':
      return blockedForPerson(epic) ||
        epic.awaitingApproval ||
        epic.planIteration >= epic.planBudget ||
        epic.planner === 'person'
        ? 'person'
        : PLANNING_ROLE;
    case 'ready':
      return epic.planPath === null ? 'person' : BUILDING_ROLE;
    case 'in_progress':
      return BUILDING_ROLE;
    case 'implemented': {
      if (epic.signalsAwaitingPerson > 0 || reviewedByPerson(epic, config)) return 'person';
      const policy = COMPLEXITY_POLICY[epic.complexity];
      if (policy.review === 'skip_when_verified' && epic.verification.lastVerdict === 'pass') return MERGING_ROLE;
      return REVIEWING_ROLE;
    }
    case 'verified':
      if (epic.pullRequest) return 'person';
      return COMPLEXITY_POLICY[epic.complexity].personApprovalBeforeMerge && !epic.mergeApprovedByPerson
        ? 'person'
        : MERGING_ROLE;
    case 'done':
    case 'deferred':
      return null;
  }
}
