/**
 * The step commands' operations (StepStore) as a table of plain functions over a backend's
 * transactions, once for both backends and both surfaces: each names its operation (claims.ts, …),
 * whether it writes, and what it passes. A store is these tables spread into one object
 * (storeOperations.ts adds the rest); the step commands' SQLite store binds this table alone, so
 * their bundle links only the operations (and the port methods, StepPort) these reach
 * (docs/cli-cost.md, "The step store").
 */
import type { StepStore } from '../store.ts';
import { claimNext, DEFAULT_LEASE_SECONDS, heartbeat, resetStep, startStep } from './claims.ts';
import { completeStep } from './complete.ts';
import { initPlan } from './initPlan.ts';
import { recordArtifact, updateItems } from './items.ts';
import type { Op } from './op.ts';
import type { StepPort } from './port.ts';
import { listEvents, readySteps, showPlans, showStep } from './queries.ts';

/** How a backend runs an operation over its port `P`: each as one transaction. */
export interface Transactions<P> {
  /** A writing operation as one transaction; `doing` says what it does, for a failure's message. */
  write<T>(doing: string, op: (port: P) => Op<T>): Promise<T>;
  /** A reading operation in one consistent snapshot. */
  read<T>(doing: string, op: (port: P) => Op<T>): Promise<T>;
}

/** Every StepStore method but the backend's own (describe, close). */
export type StepOperations = Omit<StepStore, 'describe' | 'close'>;

export function stepOperations(tx: Transactions<StepPort>): StepOperations {
  return {
    initPlan: (source, actor, options = {}) =>
      tx.write('initialising the plan', (port) =>
        initPlan(port, source, actor, options.force ?? false, options.epicId ?? null),
      ),
    claimNext: (source, actor, options = {}) =>
      tx.write('claiming', (port) =>
        claimNext(
          port,
          source,
          actor,
          options.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
          options.branch ?? null,
          options.files ?? true,
          options.anchor ?? null,
        ),
      ),
    start: (planPath, anchor, actor) =>
      tx.write('starting the step', (port) => startStep(port, planPath, anchor, actor)),
    heartbeat: (planPath, anchor, actor, options = {}) =>
      tx.write('renewing the lease', (port) =>
        heartbeat(port, planPath, anchor, actor, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS),
      ),
    updateItems: (source, anchor, changes, actor, options) =>
      tx.write('updating items', (port) => updateItems(port, source, anchor, changes, actor, options)),
    recordArtifact: (planPath, anchor, kind, summary, actor) =>
      tx.write('recording the artifact', (port) => recordArtifact(port, planPath, anchor, kind, summary, actor)),
    complete: (source, anchor, actor, options = {}) =>
      tx.write('completing', (port) => completeStep(port, source, anchor, actor, options)),
    reset: (planPath, anchor, actor, reason = null) =>
      tx.write('resetting the step', (port) => resetStep(port, planPath, anchor, actor, reason)),
    ready: (planPath, actor = null) => tx.read('reading the plan', (port) => readySteps(port, planPath, actor)),
    showPlans: (planPath) => tx.read('reading plans', (port) => showPlans(port, planPath)),
    showStep: (planPath, anchor) => tx.read('reading the step', (port) => showStep(port, planPath, anchor)),
    events: (query) => tx.read('reading events', (port) => listEvents(port, query)),
  };
}
