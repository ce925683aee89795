/**
 * Agent faults in the decision (docs/scheduler-faults.md): a role whose runs keep failing on an
 * epic waits out a growing backoff before each retry, and after `retryLimit` failures in a row the
 * epic is blocked (agent_failed) until a person retries. Pure: the failures come in the snapshot.
 */
import { lastAgentLine } from '../runs/agentErrors.ts';
import { FAULT_ROLES, isRoleIn, ROLE_REGISTRY, type RunRole, SETUP_ROLE } from '../../shared/roles.ts';
import type { EpicAction } from './rules.ts';
import type { EpicSnapshot, FaultRole, RoleFaults, SchedulerConfig } from './types.ts';

/** "Ralph", or "Setup" for the scheduler's own worktree setup. */
export function faultRoleName(role: RunRole): string {
  return ROLE_REGISTRY[role].name;
}

/** The wait after `consecutive` failures in a row: the n-th delay, the last one repeating. */
export function backoffMs(config: SchedulerConfig, consecutive: number): number {
  const delays = config.retryBackoffMs;
  if (consecutive <= 0 || delays.length === 0) return 0;
  return delays[Math.min(consecutive, delays.length) - 1] ?? 0;
}

/** What the action needs from the fault record: its role, or null when it starts nothing. */
function roleOf(action: EpicAction): FaultRole | null {
  if (action.kind === SETUP_ROLE) return SETUP_ROLE;
  if (action.kind === 'run' && isRoleIn(FAULT_ROLES, action.role)) return action.role;
  return null;
}

/**
 * The action to take instead of starting a role that has been failing: the block once the limit is
 * reached, a wait while the backoff runs, else the action itself.
 */
export function gateFaults(epic: EpicSnapshot, action: EpicAction, config: SchedulerConfig, now: Date): EpicAction {
  const role = roleOf(action);
  const f = role ? epic.faults[role] : undefined;
  if (!role || !f || f.consecutive <= 0) return action;
  // An agent that cannot run at all is told once, not retried: nothing it does can change that (docs/scheduler-faults.md).
  if (f.lastOutcome === 'unavailable') {
    return {
      kind: 'transition',
      epicId: epic.id,
      event: 'agent_unavailable',
      reason: unavailableReason(role, f.lastReason ?? 'its command cannot run'),
      data: agentFailedData(role, f),
    };
  }
  if (f.consecutive >= config.retryLimit) {
    return {
      kind: 'transition',
      epicId: epic.id,
      event: 'agent_failed',
      reason: agentFailedReason(role, f),
      data: agentFailedData(role, f),
    };
  }
  const until = Date.parse(f.lastEndedAt) + backoffMs(config, f.consecutive);
  if (Number.isFinite(until) && now.getTime() < until) {
    return {
      kind: 'wait',
      epicId: epic.id,
      role,
      until: new Date(until).toISOString(),
      message: waitMessage(role, f, config),
    };
  }
  return action;
}

function times(n: number): string {
  return n === 1 ? 'once' : `${n} times`;
}

function lastRun(f: RoleFaults): string {
  const exit = f.lastExitCode !== null && f.lastOutcome !== 'failed' ? `, exit ${f.lastExitCode}` : '';
  const why = f.lastReason ?? (f.lastExitCode !== null ? `exit ${f.lastExitCode}` : '');
  return `run ${f.lastRunId} ${f.lastOutcome}${exit}${why ? `: ${why}` : ''}`;
}

/** The epic's status reason when a role's failures block it; the `agent_failed:` prefix marks a retryable block. */
export function agentFailedReason(role: FaultRole, f: RoleFaults): string {
  // The agent's own error when its reason carries one (`exit 1 — …`), else the last line it printed (never one of Springfield's notes).
  const output = f.lastReason?.includes(' — ') ? null : lastAgentLine(f.lastOutput);
  return `agent_failed: ${faultRoleName(role)} failed ${times(f.consecutive)} in a row (last: ${lastRun(f)})${output ? `; last output: ${output.slice(0, 200)}` : ''}`;
}

/** The epic's status reason when a role's agent cannot run; `agent_unavailable:` marks a retryable block. */
export function unavailableReason(role: RunRole, why: string): string {
  return `agent_unavailable: ${faultRoleName(role)} cannot run — ${why}`;
}

function agentFailedData(role: FaultRole, f: RoleFaults): Record<string, unknown> {
  return {
    role,
    failures: f.consecutive,
    run_id: f.lastRunId,
    outcome: f.lastOutcome,
    exit_code: f.lastExitCode,
    outcome_reason: f.lastReason,
    output_tail: f.lastOutput,
  };
}

function waitMessage(role: FaultRole, f: RoleFaults, config: SchedulerConfig): string {
  const seconds = Math.round(backoffMs(config, f.consecutive) / 1000);
  return `${faultRoleName(role)} failed ${times(f.consecutive)} in a row (last: ${lastRun(f)}); retrying after a ${seconds} s backoff (${f.consecutive} of ${config.retryLimit} failures before the epic is blocked)`;
}
