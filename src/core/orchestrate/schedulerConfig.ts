import type { RunConfig } from '../runs/runConfig.ts';
import { AUTO_START } from '../scheduler/autoParallel.ts';
import type { SchedulerConfig } from '../scheduler/types.ts';
import { DEFAULT_MAX_WAITING_ON_PERSON, slotsOf } from './fleetConfig.ts';
import { setupWanted } from './setup.ts';

/**
 * decide()'s configuration from the run config (seconds become milliseconds), the same for a pass and
 * a dry run. `auto`: the current value of `"maxParallelAgents": "auto"` (autoParallel.ts).
 */
export function schedulerConfigOf(
  c: RunConfig,
  mainRoot: string,
  sameFailureLimit = 3,
  auto: number = AUTO_START,
): SchedulerConfig {
  const timeoutsMs = Object.fromEntries(Object.entries(c.timeouts).map(([role, s]) => [role, s * 1000]));
  return {
    maxParallelAgents: c.maxParallelAgents === 'auto' ? auto : c.maxParallelAgents,
    runTimeoutMs: c.runTimeoutSeconds * 1000,
    timeoutsMs,
    killGraceMs: c.killGraceSeconds * 1000,
    sameFailureLimit,
    roles: c.roles as SchedulerConfig['roles'],
    verificationConfigured: c.verification.length > 0,
    retryLimit: c.retryLimit,
    retryBackoffMs: c.retryBackoffSeconds.map((s) => s * 1000),
    setupConfigured: setupWanted(mainRoot, c.setup),
    prCheckMs: (c.prCheckSeconds ?? 60) * 1000,
    ...(c.budget ? { budget: c.budget } : {}),
    ...(c.reviewedByPerson ? { reviewedByPerson: c.reviewedByPerson } : {}),
    slots: slotsOf(c),
    maxWaitingOnPerson: c.maxWaitingOnPerson ?? DEFAULT_MAX_WAITING_ON_PERSON,
  };
}
