import { COMPLEXITY_POLICY, type EpicStatus } from '../../src/core/epics/index.ts';
import type { EpicFiles, EpicSnapshot, SchedulerConfig } from '../../src/core/scheduler/types.ts';

/**
 * The scheduler's snapshot of a standard P2 epic titled by its id, in its first build iteration, with
 * its plan and worktree once planned, nothing verified or reviewed, and two steps with step-1 ready:
 * the base the decide() tables (decideBudget, decideFiles) add their own facts to.
 */
export function standardEpic(id: string, status: EpicStatus): EpicSnapshot {
  const planned = status === 'planned';
  return {
    id,
    title: id,
    status,
    statusReason: null,
    priority: 'P2',
    complexity: 'standard',
    iteration: 1,
    buildBudget: COMPLEXITY_POLICY.standard.buildIterations,
    planIteration: planned ? 0 : 1,
    planBudget: 5,
    planPath: planned ? null : `plans/${id}.md`,
    awaitingApproval: false,
    worktree: planned ? null : `/wt/${id}`,
    reworkPending: false,
    signalsAwaitingPerson: 0,
    mergeApprovedByPerson: false,
    mergeQueued: false,
    faults: {},
    setupDone: false,
    verification: {
      lastVerdict: status === 'verified' ? 'pass' : null,
      sameFailureStreak: 0,
      running: false,
      unverifiedBuild: false,
    },
    review: { signalsThisIteration: 0, bartRunsThisIteration: 0 },
    steps: { total: 2, completed: 0, ready: ['step-1'], claimedLive: [] },
  };
}

/** A scheduler configuration with Ralph configured, 8 slots and verification: the files tables' base. */
export const FILES_CONFIG: SchedulerConfig = {
  maxParallelAgents: 8,
  runTimeoutMs: 3_600_000,
  sameFailureLimit: 3,
  verificationConfigured: true,
  retryLimit: 3,
  retryBackoffMs: [15_000],
  setupConfigured: false,
  roles: { ralph: ['ralph-agent'] },
};

/** An epic under way with one step, step-1, touching `step1`; created on the day of its id's last digit. */
export function oneStepEpic(id: string, step1: string[], files: Partial<EpicFiles> = {}): EpicSnapshot {
  return {
    ...standardEpic(id, 'in_progress'),
    steps: { total: 1, completed: 0, ready: ['step-1'], claimedLive: [] },
    files: {
      openSteps: { 'step-1': step1 },
      changed: [],
      createdAt: `2025-01-0${id.slice(-1)}T00:00:00.000Z`,
      conflictsWith: [],
      ...files,
    },
  };
}
