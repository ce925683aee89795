/**
 * What a scheduler pass did, or why it did nothing, in a person's words: the orchestrator's own
 * waiting list (a person, a backoff) and the epics whose next role has no agent. No vscode here.
 */
import type { Action, Unstaffed, Waiting } from '../../core/index.ts';
import { ROLE_NAMES } from '../views/viewText.ts';

export interface SchedulerPass {
  /** `start`: the first pass after Start scheduler; `once`: Run scheduler once; `loop`: any other. */
  readonly kind: 'start' | 'once' | 'loop';
  readonly actions: readonly Action[];
  readonly waiting: readonly Waiting[];
  readonly unstaffed: readonly Unstaffed[];
  /** Agents or scheduler work started from this window are still under way. */
  readonly busy: boolean;
  /** Roles with an agent command configured. */
  readonly roles: readonly string[];
  /** How many agents may run at once ("auto: 3 agents at once (at most 20)"). */
  readonly parallel?: string;
}

export interface PassReport {
  /** Something was started or changed; otherwise `message` says why not. */
  readonly acted: boolean;
  readonly message: string;
  /** A role the work needs has no agent: offer Configure agents…. */
  readonly configure: boolean;
}

const SHOWN = 3;

/** The pass in one or two sentences. */
export function reportPass(pass: SchedulerPass): PassReport {
  if (pass.actions.length > 0) return { acted: true, message: list(pass.actions.map(actionText)), configure: false };
  const waiting =
    pass.waiting.length > 0
      ? ` Waiting: ${list(
          pass.waiting.map((w) => `${w.epic_id} — ${w.message}`),
          '; ',
        )}.`
      : '';
  if (pass.roles.length === 0) {
    return {
      acted: false,
      configure: true,
      message: `Nothing was started because no agent is configured: there is no Lisa to plan, Ralph to build or Bart to review.${waiting}`,
    };
  }
  if (pass.unstaffed.length > 0) {
    const needs = list(pass.unstaffed.map((u) => `${u.epic_id} needs ${ROLE_NAMES[u.role] ?? u.role}`));
    const missing = [...new Set(pass.unstaffed.map((u) => ROLE_NAMES[u.role] ?? u.role))].join(' or ');
    return {
      acted: false,
      configure: true,
      message: `Nothing was started because no agent is configured for ${missing}: ${needs}.${waiting}`,
    };
  }
  if (pass.busy)
    return {
      acted: false,
      configure: false,
      message: `Nothing new to start: the agents and work it started are still under way.${waiting}`,
    };
  if (waiting) return { acted: false, configure: false, message: `Nothing to start now.${waiting}` };
  return {
    acted: false,
    configure: false,
    message: 'Nothing to start: no epic has work waiting for an agent (create an epic, or approve a plan).',
  };
}

function actionText(a: Action): string {
  switch (a.kind) {
    case 'run':
      return `started ${ROLE_NAMES[a.role] ?? a.role} on ${a.epicId}${a.stepAnchor ? ` · ${a.stepAnchor}` : ''}`;
    case 'start_epic':
      return `started ${a.epicId} in its own worktree`;
    case 'setup':
      return `setting up ${a.epicId}'s worktree`;
    case 'verify':
      return `verifying ${a.epicId}`;
    case 'complete_mechanically':
      return `${a.epicId}: every step done, implemented`;
    case 'merge':
      return `merging ${a.epicId}`;
    case 'check_pr':
      return `checking ${a.epicId}'s pull request`;
    case 'transition':
      return `${a.epicId}: ${a.reason}`;
    case 'stop_run':
      return `stopping run ${a.runId}`;
    case 'surface':
    case 'wait':
      return `${a.epicId}: ${a.message}`;
  }
}

/** "a, b and c", or the first few and how many more. */
function list(items: readonly string[], last = ' and '): string {
  const shown = items.slice(0, SHOWN);
  const more = items.length - shown.length;
  if (more > 0) return `${shown.join(', ')}${last}${more} more`;
  return shown.length <= 1
    ? shown.join('')
    : `${shown.slice(0, -1).join(last === '; ' ? '; ' : ', ')}${last}${shown.at(-1)}`;
}
