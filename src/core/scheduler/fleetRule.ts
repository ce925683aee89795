/**
 * The fleet's holds in decide() (docs/scheduler.md, "The fleet"): admission (the machine has no room
 * for new heavy work), slots (verification and setup commands of different epics at once) and the
 * person's queue (no new epic's planning while enough epics wait for a person). Pure; each held
 * action becomes a level-triggered `wait` that says why.
 */
import type { EpicAction } from './rules.ts';
import { hasCommand, nextRoleFor } from './rules.ts';
import type { EpicSnapshot, SchedulerConfig, SchedulerSnapshot } from './types.ts';
import { BUILDING_ROLE, MERGING_ROLE, PERSON_ROLE, PLANNING_ROLE, SETUP_ROLE } from '../../shared/roles.ts';

type Wait = Extract<EpicAction, { kind: 'wait' }>;
type Hold = NonNullable<Wait['hold']>;

/** What one pass of decide() knows and has taken so far. */
export interface FleetPass {
  /** Why admission holds new heavy work (null: room). */
  readonly admission: string | null;
  readonly heavy: { verification: number; setup: number };
  /** Agents or heavy commands under way when the pass began, plus those it let through. */
  underWay: number;
  readonly waitingOnPerson: number;
}

export function fleetPass(
  snapshot: SchedulerSnapshot,
  liveAgents: number,
  config: Pick<SchedulerConfig, 'reviewedByPerson'> = {},
): FleetPass {
  const heavy = { verification: snapshot.fleet?.heavy.verification ?? 0, setup: snapshot.fleet?.heavy.setup ?? 0 };
  return {
    admission: snapshot.fleet?.admission ?? null,
    heavy,
    underWay: liveAgents + heavy.verification + heavy.setup,
    waitingOnPerson: snapshot.epics.filter((e) => nextRoleFor(e, config) === 'person').length,
  };
}

/** True for the actions admission judges: an agent, a new epic's first builder, a setup, a verification. */
function heavyAction(action: EpicAction, config: SchedulerConfig): boolean {
  return (
    action.kind === 'run' ||
    action.kind === 'setup' ||
    action.kind === 'verify' ||
    (action.kind === 'start_epic' && hasCommand(config, BUILDING_ROLE))
  );
}

/** The wait that holds `action` back, or null when the fleet lets it through. */
export function fleetHold(
  pass: FleetPass,
  epic: EpicSnapshot,
  action: EpicAction,
  config: SchedulerConfig,
): Wait | null {
  const max = config.maxWaitingOnPerson;
  if (
    max !== undefined &&
    action.kind === 'run' &&
    action.role === PLANNING_ROLE &&
    epic.status === 'planned' &&
    pass.waitingOnPerson >= max
  )
    return wait(
      epic,
      action,
      'queue',
      `no new planning: ${pass.waitingOnPerson} epics wait for a person (at most ${max}, maxWaitingOnPerson)`,
    );
  const slots = config.slots;
  if (slots && action.kind === 'verify' && pass.heavy.verification >= slots.verification)
    return wait(
      epic,
      action,
      'slot',
      `waiting for a verification slot (${slots.verification} of ${slots.verification} in use)`,
    );
  if (slots && action.kind === 'setup' && pass.heavy.setup >= slots.setup)
    return wait(epic, action, 'slot', `waiting for a setup slot (${slots.setup} of ${slots.setup} in use)`);
  // A busy machine slows the fleet and never stops it: with nothing under way, one thing starts.
  if (pass.admission !== null && heavyAction(action, config) && pass.underWay > 0)
    return wait(epic, action, 'machine', `waiting: ${pass.admission}`);
  return null;
}

/** Counts an action decide() lets through against the pass's slots. */
export function fleetTake(pass: FleetPass, action: EpicAction, config: SchedulerConfig): void {
  if (!heavyAction(action, config)) return;
  pass.underWay += 1;
  if (action.kind === 'verify') pass.heavy.verification += 1;
  if (action.kind === 'setup') pass.heavy.setup += 1;
}

function wait(epic: EpicSnapshot, action: EpicAction, hold: Hold, message: string): Wait {
  const role =
    action.kind === 'run' && action.role !== PERSON_ROLE
      ? action.role
      : action.kind === 'setup'
        ? SETUP_ROLE
        : action.kind === 'verify'
          ? MERGING_ROLE
          : BUILDING_ROLE;
  return { kind: 'wait', epicId: epic.id, role, until: null, message, hold };
}
