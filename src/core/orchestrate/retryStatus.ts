import { backoffMs, faultRoleName } from '../scheduler/faults.ts';
import type { FaultRole } from '../scheduler/types.ts';
import type { RunConfig } from '../runs/runConfig.ts';
import type { Store } from '../store/index.ts';
import { schedulerConfigOf } from './schedulerConfig.ts';

/** A role of an epic whose runs keep failing, as the scheduler sees it (docs/scheduler-faults.md, "Backoff and the retry limit"). */
export interface RoleRetry {
  readonly role: FaultRole;
  /** Non-successes in a row since the role's last success or a person's retry. */
  readonly failures: number;
  /** retryLimit: at this many the epic is blocked (agent_failed). */
  readonly limit: number;
  /** When the scheduler tries the role again (ISO 8601), or null when the next failure count blocks instead. */
  readonly next_try_at: string | null;
  readonly last_run_id: number;
  readonly last_outcome: string;
  readonly last_reason: string | null;
}

/** The roles of `epicId` that are backing off after failures, read as the scheduler reads them. */
export async function retryStatus(
  store: Store,
  epicId: string,
  config: RunConfig,
  mainRoot: string,
): Promise<RoleRetry[]> {
  const epic = (await store.schedulerSnapshot()).epics.find((e) => e.id === epicId);
  if (!epic) return [];
  const c = schedulerConfigOf(config, mainRoot);
  return (Object.entries(epic.faults) as [FaultRole, NonNullable<(typeof epic.faults)[FaultRole]>][])
    .filter(([, f]) => f.consecutive > 0 && f.lastOutcome !== 'unavailable')
    .map(([role, f]) => {
      const at = Date.parse(f.lastEndedAt) + backoffMs(c, f.consecutive);
      return {
        role,
        failures: f.consecutive,
        limit: c.retryLimit,
        next_try_at: f.consecutive >= c.retryLimit || !Number.isFinite(at) ? null : new Date(at).toISOString(),
        last_run_id: f.lastRunId,
        last_outcome: f.lastOutcome,
        last_reason: f.lastReason,
      };
    });
}

/** "Ralph failed 1 of 3 times in a row (last: run 12 failed: exit 1); next try at 19:39:15", one line per role. */
export function retryLines(retries: readonly RoleRetry[], now: Date = new Date()): string[] {
  return retries.map((r) => {
    const last = `last: run ${r.last_run_id} ${r.last_outcome}${r.last_reason ? `: ${r.last_reason}` : ''}`;
    const next =
      r.next_try_at === null
        ? 'the next pass blocks the epic (agent_failed)'
        : Date.parse(r.next_try_at) <= now.getTime()
          ? 'tried again on the next pass'
          : `next try at ${r.next_try_at.slice(11, 19)} UTC`;
    return `${faultRoleName(r.role)} failed ${r.failures} of ${r.limit} times in a row (${last}); ${next}`;
  });
}
