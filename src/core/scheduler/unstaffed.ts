/**
 * Why a pass started nothing for an epic that is not waiting for a person: the role that acts next
 * (nextRoleFor) has no command configured. Pure; the orchestrator reports it beside its waiting list.
 */
import { BUILDING_ROLE, isRoleIn, ROLE_REGISTRY, STARTED_ROLES, type StartedRole } from '../../shared/roles.ts';
import { hasCommand, nextRoleFor } from './rules.ts';
import type { EpicSnapshot, SchedulerConfig } from './types.ts';

/** An epic whose next move belongs to a role with no agent configured. */
export interface Unstaffed {
  readonly epic_id: string;
  readonly role: StartedRole;
  readonly message: string;
}

/** Epics (not in `acted`) whose next role is an agent role without a command, in snapshot order. */
export function unstaffedEpics(
  epics: readonly EpicSnapshot[],
  config: SchedulerConfig,
  acted: ReadonlySet<string>,
): Unstaffed[] {
  const out: Unstaffed[] = [];
  for (const epic of epics) {
    if (acted.has(epic.id)) continue;
    const role = nextRoleFor(epic, config);
    if (!isRoleIn(STARTED_ROLES, role) || hasCommand(config, role)) continue;
    // Every open step is held by someone else: nothing would start even with an agent.
    if (
      role === BUILDING_ROLE &&
      epic.status === 'in_progress' &&
      epic.steps.ready.length === 0 &&
      epic.steps.completed < epic.steps.total
    )
      continue;
    const { name, work } = ROLE_REGISTRY[role];
    out.push({ epic_id: epic.id, role, message: `${name} would ${work}, but no agent is configured for ${name}` });
  }
  return out;
}
