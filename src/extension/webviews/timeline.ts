import { type EventView, folderName, holderName } from '../../core/index.ts';
import type { TimelineEntry } from '../../protocol/messages.ts';
import { ROLE_NAMES, SIGNAL_WORDS, statusWord } from '../views/viewText.ts';

/** What the timeline needs to name things: plans' epics and titles, and steps' numbers and titles. */
export interface TimelineNames {
  readonly self: string;
  readonly epicOfPlan: ReadonlyMap<string, string>;
  readonly planTitle: ReadonlyMap<string, string>;
  /** `planPath#anchor` → "Step 2". */
  readonly stepName: ReadonlyMap<string, string>;
}

const EPIC_EVENTS: Readonly<Record<string, string>> = {
  plan_approved: 'approved its plan',
  start: 'started it',
  steps_completed: 'finished every step',
  signal_pass: 'passed review',
  signal_implementation_failure: 'sent it back to Ralph',
  signal_option_viability_failure: 'sent it back to Lisa',
  signal_adr_invalidated: 'sent it back to Lisa (an ADR no longer holds)',
  merged: 'merged it into the main branch',
  defer: 'set it aside',
  resume: 'resumed it',
  plan_discarded: 'discarded its plan',
  new_plan_approved: 'approved its new plan',
  agent_failed: 'stopped it: an agent kept failing',
  retry: 'retried it',
  planner: 'changed who writes its plan',
};

const ITEM_MOVES: Readonly<Record<string, string>> = { completed: 'ticked', open: 'unticked', in_progress: 'started' };

/** The role behind an agent id ("ralph-b" → ralph); a person (no agent id) is "person". */
export function roleOf(agent: string | null): string {
  if (!agent) return 'person';
  const role = Object.keys(ROLE_NAMES).find((r) => agent === r || new RegExp(`^${r}[-_.\\d]`, 'i').test(agent));
  return role ?? 'agent';
}

/**
 * Reasons as people read them: absolute paths become folder names, ISO timestamps local times, and
 * hashes go (they mean nothing on a timeline).
 */
export function humanise(text: string): string {
  return text
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z/g, (iso) =>
      new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }),
    )
    .replace(/(?:[A-Za-z]:)?(?:[\\/][\w.@+-]+){2,}[\\/]?/g, (path) => folderName(path))
    .replace(/\b[0-9a-f]{7,64}\b/g, (hex) => (/[a-f]/.test(hex) && /\d/.test(hex) ? '' : hex))
    .replace(/\s{2,}/g, ' ')
    .replace(/\s+([,.;:)])/g, '$1')
    .trim();
}

/**
 * The events without the echo of a review: a review's signal is recorded with the epic's move it
 * causes, by the same agent at the same moment ("signalled pass" beside "passed review"), so the
 * signal's own event is left out and the review is one entry, the epic's.
 */
export function withoutReviewEchoes<E extends Pick<EventView, 'entity' | 'action' | 'epic_id' | 'agent' | 'at'>>(
  events: readonly E[],
): E[] {
  const key = (e: E) => JSON.stringify([e.epic_id, e.agent, e.at]);
  const moves = new Set(events.filter((e) => e.entity === 'epic' && e.action.startsWith('signal_')).map(key));
  return events.filter((e) => !(e.entity === 'signal' && e.action === 'record' && moves.has(key(e))));
}

/** One event as a timeline row: who, in words what happened, and to which epic. */
export function timelineEntry(e: EventView, names: TimelineNames): TimelineEntry {
  const epicId = e.epic_id ?? (e.plan_path ? (names.epicOfPlan.get(e.plan_path) ?? null) : null);
  const step =
    e.plan_path && e.step_anchor ? (names.stepName.get(`${e.plan_path}#${e.step_anchor}`) ?? e.step_anchor) : null;
  const data = (typeof e.data === 'object' && e.data !== null ? e.data : {}) as Record<string, unknown>;
  const plan = e.plan_path ? names.planTitle.get(e.plan_path) || e.plan_path : 'a plan';
  const version = typeof data.version === 'number' ? `version ${data.version}` : 'a version';
  const role = typeof data.role === 'string' ? (ROLE_NAMES[data.role] ?? data.role) : 'an agent';
  const kind =
    e.entity === 'epic'
      ? 'epic'
      : e.entity === 'plan' || e.entity === 'plan_version'
        ? 'plan'
        : e.entity === 'step' || e.entity === 'item' || e.entity === 'artifact'
          ? 'step'
          : e.entity === 'signal'
            ? 'signal'
            : e.entity === 'run'
              ? 'run'
              : 'other';
  const text = ((): string => {
    switch (`${e.entity}:${e.action}`) {
      case 'epic:create':
        return `created the epic${typeof data.title === 'string' ? ` “${data.title}”` : ''}`;
      case 'epic:iteration':
        return `began iteration ${String(data.iteration ?? '')}${typeof data.budget === 'number' ? ` of ${data.budget}` : ''}`;
      case 'epic:approve_merge':
        return 'approved the merge';
      case 'plan:init':
        return `recorded the plan “${plan}”`;
      case 'plan:reinit':
        return `re-recorded the plan “${plan}”`;
      case 'plan:complete':
        return `completed every step of “${plan}”`;
      case 'plan:prune':
        return `removed the plan “${plan}”`;
      case 'plan_version:propose':
        return `proposed ${version} of the plan`;
      case 'plan_version:approve':
        return `approved ${version} of the plan`;
      case 'plan_version:request_changes':
        return `asked for changes to ${version}`;
      case 'plan_version:discard':
        return `discarded ${version} of the plan`;
      case 'step:claim':
        return `claimed ${step}`;
      case 'step:reclaim':
        return `took over ${step} from ${holderName(typeof data.previous_holder === 'string' ? data.previous_holder : null, typeof data.previous_agent === 'string' ? data.previous_agent : null, names.self)}, whose lease had expired`;
      case 'step:start':
        return `started ${step}`;
      case 'step:heartbeat':
        return `renewed the lease on ${step}`;
      case 'step:complete':
        return data.forced === true ? `completed ${step} with open items` : `completed ${step}`;
      case 'step:reset':
        return `reset ${step} to pending`;
      case 'step:reconcile':
        return `completed ${step} from its commit`;
      case 'item:update':
        return `${ITEM_MOVES[e.to_status ?? ''] ?? 'changed'} “${typeof data.text === 'string' ? data.text : 'an item'}” in ${step}`;
      case 'artifact:record':
        return `noted ${typeof data.kind === 'string' ? `a ${data.kind}` : 'something'} on ${step}`;
      case 'signal:record':
        return `signalled ${SIGNAL_WORDS[e.to_status ?? ''] ?? statusWord(e.to_status ?? 'a review')}`;
      case 'signal:decide':
        return e.to_status === 'accept'
          ? 'accepted a review signal'
          : e.to_status === 'escalate'
            ? 'escalated a review signal to Lisa'
            : 'sent a review signal back to Ralph';
      case 'run:start':
        return `began ${roleOf(e.agent) === data.role ? 'a run' : `a ${role} run`}${step ? ` on ${step}` : ''}`;
      case 'run:finish':
        return `finished a run${typeof data.exit_code === 'number' ? ` (exit ${data.exit_code})` : typeof data.signal === 'string' ? ' (stopped)' : ''}`;
      case 'run:lost':
        return 'lost track of an agent run';
      default:
        if (e.entity === 'epic')
          return `${EPIC_EVENTS[e.action] ?? e.action.replace(/_/g, ' ')}${e.to_status ? `: ${statusWord(e.to_status)}` : ''}`;
        return `${e.entity.replace(/_/g, ' ')} ${e.action.replace(/_/g, ' ')}`;
    }
  })();
  const who = {
    id: e.id,
    at: e.at,
    who: holderName(e.worktree, e.agent, names.self),
    role: roleOf(e.agent),
    kind,
    epicId,
  };
  if (e.entity === 'epic' && e.action === 'retrospective')
    return { ...who, text: 'wrote the retrospective', reason: null, lines: retrospectiveLines(data) };
  // "squash-merged as 3f9a2c1d4e5b with 4 trailers": the commit and its trailers say nothing on a timeline.
  if (e.entity === 'epic' && e.action === 'merged')
    return {
      ...who,
      text,
      reason: e.reason?.startsWith('squash-merged')
        ? 'one squash commit'
        : e.reason
          ? humanise(e.reason) || null
          : null,
    };
  const reason = e.reason && !(e.entity === 'step' && e.action === 'reclaim') ? humanise(e.reason) : null;
  return { ...who, text, reason: reason || null };
}

/** A retrospective's figures (the event's data, docs/lifecycle.md), one line each, in words. */
export function retrospectiveLines(data: Record<string, unknown>): string[] {
  const sessions =
    typeof data.sessions === 'object' && data.sessions !== null
      ? Object.entries(data.sessions as Record<string, number>)
      : [];
  const total = sessions.reduce((n, [, v]) => n + v, 0);
  const count = (key: string): number => (Array.isArray(data[key]) ? (data[key] as unknown[]).length : 0);
  const minutes = typeof data.approval_to_merge_minutes === 'number' ? data.approval_to_merge_minutes : null;
  return [
    `Agent sessions: ${total === 0 ? 'none' : `${sessions.map(([r, n]) => `${ROLE_NAMES[r] ?? r} ${n}`).join(', ')} (${total} in all)`}`,
    `Plan versions: ${String(data.plan_versions ?? '?')} · build iterations: ${String(data.build_iterations ?? '?')}`,
    `Failed runs: ${count('failed_runs') || 'none'} · failed verifications: ${count('verification_failures') || 'none'}`,
    ...(minutes === null
      ? []
      : [
          `From approval to merge: ${minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`}`,
        ]),
  ];
}
