/**
 * The epic state machine (docs/state-machine.md): one data table is the only way an epic's status changes.
 * Pure: no database. The store applies a transition and records its event.
 */
import type { Role } from '../../shared/roles.ts';
import { RefusedError } from '../errors.ts';
import { BUILDING_ROLE, MERGING_ROLE, PLANNING_ROLE, REVIEWING_ROLE } from '../../shared/roles.ts';

export { ROLE_NAMES, ROLES, type Role } from '../../shared/roles.ts';

export type EpicStatus =
  'planned' | 'ready' | 'in_progress' | 'implemented' | 'verified' | 'done' | 'deferred' | 'blocked';

export const EPIC_STATUSES: readonly EpicStatus[] = [
  'planned',
  'ready',
  'in_progress',
  'implemented',
  'verified',
  'done',
  'deferred',
  'blocked',
];

export type EpicEvent =
  | 'plan_approved'
  | 'start'
  | 'steps_completed'
  | 'signal_pass'
  | 'signal_implementation_failure'
  | 'signal_option_viability_failure'
  | 'signal_adr_invalidated'
  | 'merged'
  | 'new_plan_approved'
  | 'defer'
  | 'resume'
  | 'iteration_budget_exhausted'
  | 'agent_failed'
  | 'agent_unavailable'
  | 'plan_drift'
  | 'retry'
  | 'plan_discarded'
  | 'merge_failed'
  | 'budget_exhausted';

export const EPIC_EVENTS: readonly EpicEvent[] = [
  'plan_approved',
  'start',
  'steps_completed',
  'signal_pass',
  'signal_implementation_failure',
  'signal_option_viability_failure',
  'signal_adr_invalidated',
  'merged',
  'new_plan_approved',
  'defer',
  'resume',
  'iteration_budget_exhausted',
  'agent_failed',
  'agent_unavailable',
  'plan_drift',
  'retry',
  'plan_discarded',
  'merge_failed',
  'budget_exhausted',
];

/** Blocks a person lifts with `retry` (docs/scheduler-faults.md): the epic goes back to where it was blocked from. */
export const RETRYABLE_BLOCKS: readonly EpicEvent[] = [
  'agent_failed',
  'agent_unavailable',
  'plan_drift',
  'merge_failed',
  'budget_exhausted',
];

export type SignalType = 'pass' | 'implementation_failure' | 'option_viability_failure' | 'adr_invalidated';

export const SIGNAL_TYPES: readonly SignalType[] = [
  'pass',
  'implementation_failure',
  'option_viability_failure',
  'adr_invalidated',
];

export interface TransitionRow {
  readonly from: EpicStatus;
  readonly event: EpicEvent;
  /** `previous`: the status the epic was blocked from (retry). */
  readonly to: EpicStatus | 'previous';
  /** The role that acts next, or null when nobody is due (a person or nothing). */
  readonly nextRole: Role | null;
  /** The condition in words, as docs/state-machine.md's table gives it. */
  readonly when: string;
}

/**
 * The transitions of docs/state-machine.md, the iteration budget rule included; `defer` and `agent_failed` are spelled out per
 * status. A blocked epic whose re-planning Lisa keeps failing is blocked again for agent_failed, so
 * the reason a person sees is the current one (docs/scheduler-faults.md).
 */
export const TRANSITIONS: readonly TransitionRow[] = [
  { from: 'planned', event: 'plan_approved', to: 'ready', nextRole: null, when: 'plan approved' },
  { from: 'ready', event: 'start', to: 'in_progress', nextRole: BUILDING_ROLE, when: 'scheduler starts it' },
  {
    from: 'in_progress',
    event: 'steps_completed',
    to: 'implemented',
    nextRole: REVIEWING_ROLE,
    when: 'all steps completed and verification passes',
  },
  { from: 'implemented', event: 'signal_pass', to: 'verified', nextRole: MERGING_ROLE, when: 'signal pass' },
  {
    from: 'implemented',
    event: 'signal_implementation_failure',
    to: 'in_progress',
    nextRole: BUILDING_ROLE,
    when: 'signal implementation_failure (next iteration)',
  },
  {
    from: 'implemented',
    event: 'signal_option_viability_failure',
    to: 'blocked',
    nextRole: PLANNING_ROLE,
    when: 'signal option_viability_failure',
  },
  {
    from: 'implemented',
    event: 'signal_adr_invalidated',
    to: 'blocked',
    nextRole: PLANNING_ROLE,
    when: 'signal adr_invalidated',
  },
  // A person's review may still send a verified epic back before it merges (docs/lifecycle.md, "A person reviews the changes").
  {
    from: 'verified',
    event: 'signal_implementation_failure',
    to: 'in_progress',
    nextRole: BUILDING_ROLE,
    when: 'a person requests changes before the merge (next iteration)',
  },
  { from: 'verified', event: 'merged', to: 'done', nextRole: null, when: 'merged' },
  { from: 'blocked', event: 'new_plan_approved', to: 'ready', nextRole: BUILDING_ROLE, when: 'new plan approved' },
  { from: 'planned', event: 'defer', to: 'deferred', nextRole: null, when: 'defer' },
  { from: 'ready', event: 'defer', to: 'deferred', nextRole: null, when: 'defer' },
  { from: 'in_progress', event: 'defer', to: 'deferred', nextRole: null, when: 'defer' },
  { from: 'implemented', event: 'defer', to: 'deferred', nextRole: null, when: 'defer' },
  { from: 'verified', event: 'defer', to: 'deferred', nextRole: null, when: 'defer' },
  { from: 'blocked', event: 'defer', to: 'deferred', nextRole: null, when: 'defer' },
  { from: 'deferred', event: 'resume', to: 'planned', nextRole: null, when: 'resume' },
  // A discarded plan sets the epic aside until a person resumes it (so no planner starts again at once).
  {
    from: 'planned',
    event: 'plan_discarded',
    to: 'deferred',
    nextRole: null,
    when: 'plan discarded (a person resumes)',
  },
  {
    from: 'blocked',
    event: 'plan_discarded',
    to: 'deferred',
    nextRole: null,
    when: 'new plan discarded (a person resumes)',
  },
  {
    from: 'in_progress',
    event: 'iteration_budget_exhausted',
    to: 'blocked',
    nextRole: PLANNING_ROLE,
    when: 'iteration budget exhausted',
  },
  {
    from: 'implemented',
    event: 'iteration_budget_exhausted',
    to: 'blocked',
    nextRole: PLANNING_ROLE,
    when: 'iteration budget exhausted',
  },
  ...(['planned', 'ready', 'in_progress', 'implemented', 'blocked'] as const).map((from): TransitionRow => ({
    from,
    event: 'agent_failed',
    to: 'blocked',
    nextRole: null,
    when: "a role's runs fail N times in a row (a person retries)",
  })),
  ...(['planned', 'ready', 'in_progress', 'implemented', 'blocked'] as const).map((from): TransitionRow => ({
    from,
    event: 'agent_unavailable',
    to: 'blocked',
    nextRole: null,
    when: "the role's agent cannot run: not installed or not logged in (a person fixes it and retries)",
  })),
  {
    from: 'in_progress',
    event: 'plan_drift',
    to: 'blocked',
    nextRole: null,
    when: "the worktree's plan file drifted from the approved version (a person restores it and retries)",
  },
  {
    from: 'verified',
    event: 'merge_failed',
    to: 'blocked',
    nextRole: null,
    when: 'the branch conflicts with the default branch at the merge, or a pull request cannot be opened (no gh, no remote, push refused) or was closed unmerged (a person fixes it and retries)',
  },
  // A role's next run would start with the epic's spend at or past its budget: paused until a person raises it and retries (docs/budgets.md).
  ...(['planned', 'ready', 'in_progress', 'implemented', 'blocked'] as const).map((from): TransitionRow => ({
    from,
    event: 'budget_exhausted',
    to: 'blocked',
    nextRole: null,
    when: "the epic's spend reached its budget before a role's next run (a person raises the budget and retries)",
  })),
  {
    from: 'blocked',
    event: 'retry',
    to: 'previous',
    nextRole: null,
    when: 'a person retries an epic blocked by agent_failed, agent_unavailable, plan_drift, merge_failed or budget_exhausted',
  },
];

/** The events accepted from `from`, in EPIC_EVENTS order (empty for `done`). */
export function allowedEvents(from: EpicStatus): EpicEvent[] {
  return EPIC_EVENTS.filter((event) => TRANSITIONS.some((row) => row.from === from && row.event === event));
}

/**
 * Applies `event` to an epic in status `from`; refuses with `invalid_transition` and the allowed
 * events. `previous` is where a retry returns to (the status the epic was blocked from).
 */
export function transition(
  from: EpicStatus,
  event: EpicEvent,
  previous?: EpicStatus,
): { to: EpicStatus; nextRole: Role | null } {
  const row = TRANSITIONS.find((r) => r.from === from && r.event === event);
  if (!row) {
    const allowed = allowedEvents(from);
    throw new RefusedError(
      'invalid_transition',
      `cannot ${event} an epic that is ${from.replace(/_/g, ' ')}; allowed: ${allowed.length > 0 ? allowed.join(', ') : 'none'}`,
    );
  }
  if (row.to !== 'previous') return { to: row.to, nextRole: row.nextRole };
  if (previous === undefined)
    throw new RefusedError(
      'invalid_transition',
      `cannot ${event}: the epic was not blocked by ${RETRYABLE_BLOCKS.join(' or ')}`,
    );
  return { to: previous, nextRole: row.nextRole };
}

/** The epic event a review signal of this type raises. */
export function signalEvent(type: SignalType): EpicEvent {
  switch (type) {
    case 'pass':
      return 'signal_pass';
    case 'implementation_failure':
      return 'signal_implementation_failure';
    case 'option_viability_failure':
      return 'signal_option_viability_failure';
    case 'adr_invalidated':
      return 'signal_adr_invalidated';
  }
}

/** True when `s` names an epic status. */
export function isEpicStatus(s: string): s is EpicStatus {
  return (EPIC_STATUSES as readonly string[]).includes(s);
}

/** True when `s` names an epic event. */
export function isEpicEvent(s: string): s is EpicEvent {
  return (EPIC_EVENTS as readonly string[]).includes(s);
}

/** True when `s` names a review signal type. */
export function isSignalType(s: string): s is SignalType {
  return (SIGNAL_TYPES as readonly string[]).includes(s);
}

/** True when the epic is blocked by a fault a person lifts with retry (RETRYABLE_BLOCKS). */
export function isRetryable(epic: { readonly status: EpicStatus; readonly status_reason: string | null }): boolean {
  return epic.status === 'blocked' && RETRYABLE_BLOCKS.some((e) => epic.status_reason?.startsWith(`${e}:`) === true);
}
