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

/** The pass in one or two sentences; `name` says an epic as the person knows it (its title), its id unless told. */
export function reportPass(pass: SchedulerPass, name: (epicId: string) => string = (id) => id): PassReport {
  if (pass.actions.length > 0)
    return { acted: true, message: list(pass.actions.map((a) => actionText(a, name))), configure: false };
  const waiting =
    pass.waiting.length > 0
      ? ` Waiting: ${list(
          pass.waiting.map((w) => `${name(w.epic_id)} — ${w.message}`),
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
    const needs = list(pass.unstaffed.map((u) => `${name(u.epic_id)} needs ${ROLE_NAMES[u.role] ?? u.role}`));
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

function actionText(a: Action, name: (epicId: string) => string): string {
  if (a.kind === 'stop_run') return `stopping run ${a.runId}`;
  const epic = name(a.epicId);
  switch (a.kind) {
    case 'run':
      return `started ${ROLE_NAMES[a.role] ?? a.role} on ${epic}${a.stepAnchor ? ` · ${a.stepAnchor}` : ''}`;
    case 'start_epic':
      return `started ${epic} in its own worktree`;
    case 'setup':
      return `setting up ${epic}'s worktree`;
    case 'verify':
      return `verifying ${epic}`;
    case 'complete_mechanically':
      return `${epic}: every step done, implemented`;
    case 'merge':
      return `merging ${epic}`;
    case 'check_pr':
      return `checking ${epic}'s pull request`;
    case 'transition':
      return `${epic}: ${a.reason}`;
    case 'surface':
    case 'wait':
      return `${epic}: ${a.message}`;
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

/** A report as the first words of a sentence: its first letter capitalised, unless it begins with an id (`sf-5b51: …`). */
export function sentence(message: string): string {
  return /^sf-[0-9a-f]/.test(message) ? message : message.replace(/^./, (c) => c.toUpperCase());
}
