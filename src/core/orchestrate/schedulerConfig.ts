import type { RunConfig } from '../runs/runConfig.ts';
import type { SchedulerConfig } from '../scheduler/types.ts';
import { setupWanted } from './setup.ts';

/** decide()'s configuration from the run config (seconds become milliseconds), the same for a pass and a dry run. */
export function schedulerConfigOf(c: RunConfig, mainRoot: string, sameFailureLimit = 3): SchedulerConfig {
  const timeoutsMs = Object.fromEntries(Object.entries(c.timeouts).map(([role, s]) => [role, s * 1000]));
  return {
    maxParallelAgents: c.maxParallelAgents,
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
  };
}
