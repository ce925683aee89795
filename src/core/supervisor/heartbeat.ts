import type { AgentRunStart, Store } from '../store/index.ts';
import { messageOf } from '../../shared/errorMessage.ts';

/**
 * Renews the lease on the run's step every lease/3 while its agent lives; a renewal that fails stops
 * the renewing with a warning. `stop()` returns how many leases were taken or renewed (the claim is one).
 */
export function startHeartbeat(
  store: Store,
  p: AgentRunStart,
  leaseSeconds: number,
  warnings: string[],
): { stop(): number } {
  if (p.stepAnchor === null) return { stop: () => 0 };
  let beats = 1;
  const timer = setInterval(
    () => {
      store.heartbeat(p.planPath ?? '', p.stepAnchor ?? '', p.holder, { leaseSeconds }).then(
        () => {
          beats++;
        },
        (err: unknown) => {
          warnings.push(`stopped renewing the lease on ${p.stepAnchor}: ${messageOf(err)}`);
          clearInterval(timer);
        },
      );
    },
    Math.max(100, (leaseSeconds * 1000) / 3),
  );
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      return beats;
    },
  };
}
