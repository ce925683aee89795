import type { AgentRunStart, Store } from '../store/index.ts';
import { messageOf } from '../../shared/errorMessage.ts';

/**
 * Renews the lease on the run's step every lease/3 while its agent lives; a renewal that fails stops
 * the renewing, with a warning unless the step is completed (`renewalWarning`). `stop()` returns how
 * many leases were taken or renewed (the claim is one).
 */
export function startHeartbeat(
  store: Store,
  p: AgentRunStart,
  leaseSeconds: number,
  warnings: string[],
): { stop(): number } {
  if (p.stepAnchor === null) return { stop: () => 0 };
  let beats = 1;
  let refused = false;
  const timer = setInterval(
    () => {
      store.heartbeat(p.planPath ?? '', p.stepAnchor ?? '', p.holder, { leaseSeconds }).then(
        () => {
          beats++;
        },
        (err: unknown) => {
          clearInterval(timer);
          if (refused) return;
          refused = true;
          void renewalWarning(store, p, err).then((warning) => {
            if (warning !== null) warnings.push(warning);
          });
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

/**
 * What to warn of when a renewal was refused: nothing when the step is completed (its agent finished
 * it, and a beat came between that and the agent's exit: the lease has nothing left to hold), else
 * the refusal, e.g. a step reset or reclaimed under a running agent.
 */
export async function renewalWarning(store: Store, p: AgentRunStart, err: unknown): Promise<string | null> {
  const step = await store.stepRecord(p.planPath ?? '', p.stepAnchor ?? '').catch(() => null);
  return step?.status === 'completed' ? null : `stopped renewing the lease on ${p.stepAnchor}: ${messageOf(err)}`;
}
