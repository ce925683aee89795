/**
 * Why a pass started nothing for an epic that is not waiting for a person: the role that acts next
 * (nextRoleFor) has no command configured. Pure; the orchestrator reports it beside its waiting list.
 */
import { ROLE_NAMES, type Role } from '../epics/transitions.ts';
import { hasCommand, nextRoleFor } from './rules.ts';
import type { EpicSnapshot, SchedulerConfig } from './types.ts';

/** The roles the scheduler starts agents for. */
export type AgentRoleName = 'lisa' | 'ralph' | 'bart';

/** An epic whose next move belongs to a role with no agent configured. */
export interface Unstaffed {
  readonly epic_id: string;
  readonly role: AgentRoleName;
  readonly message: string;
}

const WORK: Readonly<Record<AgentRoleName, string>> = { lisa: 'write its plan', ralph: 'build its next step', bart: 'review it' };

/** Epics (not in `acted`) whose next role is an agent role without a command, in snapshot order. */
export function unstaffedEpics(epics: readonly EpicSnapshot[], config: SchedulerConfig, acted: ReadonlySet<string>): Unstaffed[] {
  const out: Unstaffed[] = [];
  for (const epic of epics) {
    if (acted.has(epic.id)) continue;
    const role = nextRoleFor(epic);
    if (!isAgentRole(role) || hasCommand(config, role)) continue;
    // Every open step is held by someone else: nothing would start even with an agent.
    if (role === 'ralph' && epic.status === 'in_progress' && epic.steps.ready.length === 0 && epic.steps.completed < epic.steps.total) continue;
    out.push({ epic_id: epic.id, role, message: `${ROLE_NAMES[role]} would ${WORK[role]}, but no agent is configured for ${ROLE_NAMES[role]}` });
  }
  return out;
}

function isAgentRole(role: Role | 'person' | null): role is AgentRoleName {
  return role === 'lisa' || role === 'ralph' || role === 'bart';
}
