/**
 * The rest of the Store's operations (beyond the step commands', stepOperations.ts) as tables of
 * plain functions over a backend's transactions, once for both backends: each names its operation,
 * whether it writes, and what it passes. `storeOperations` spreads every table into one object; a
 * backend adds only what is its own (describe, close, watch, and PostgreSQL's one-round-trip claim
 * and completion and lost replies: postgres/postgresStore.ts).
 */
import type { Store } from '../store.ts';
import type { PruneResult } from '../maintenanceTypes.ts';
import { beginAgentRun, recordFailedLaunch } from './agentRun.ts';
import { resolveTarget } from './commitTarget.ts';
import { completeStep } from './complete.ts';
import { buildContext } from './context.ts';
import {
  applyEpicEvent,
  approveMerge,
  blockDetails,
  countIteration,
  createEpic,
  recordWorktreeEvent,
  requireEpic,
  setPlanner,
  setPullRequest,
} from './epics.ts';
import { epicPlans, handoffText } from './handoff.ts';
import { one, type Op } from './op.ts';
import { recordPlanningNote } from './planningNotes.ts';
import {
  approvePlan,
  discardPlan,
  finishEpic,
  listVersions,
  pendingVersion,
  changesSinceInit,
  proposePlan,
  requestChanges,
  startEpic,
} from './planVersions.ts';
import type { StorePort } from './port.ts';
import { stepOperations, type Transactions } from './stepOperations.ts';
import { prunePlans } from './prune.ts';
import { planRecord, stepRecordOf } from './queries.ts';
import { reconcileTrailers } from './reconcile.ts';
import { epicReport, markMerged, retrospective } from './records.ts';
import { reopenStep } from './reopen.ts';
import { countSessions, findOrphans, finishRun, markOrphans, startRun } from './runs.ts';
import { schedulerSnapshot } from './schedulerSnapshot.ts';
import { decideSignal, recordSignal } from './signals.ts';
import { setEpicBudget, spendReport } from './spend.ts';
import { recordRoute, statsRows } from './stats.ts';

/** An operation over a port, as a store method hands it to its backend. */
export type PortOp<T> = (port: StorePort) => Op<T>;

/** How a whole store runs its operations; `preview` runs a write and rolls it back (exactly its checks and refusals, nothing written). */
export interface StoreTransactions extends Transactions<StorePort> {
  preview<T>(doing: string, op: PortOp<T>): Promise<T>;
}

/** Every Store method but the backend's own (describe, close, watch). */
export type StoreOperations = Omit<Store, 'describe' | 'close' | 'watch'>;

export function storeOperations(tx: StoreTransactions): StoreOperations {
  return { ...stepOperations(tx), ...planOperations(tx), ...epicOperations(tx), ...runOperations(tx) };
}

/** Plans and steps beyond the step commands: previews, reopening, records, commit trailers, pruning. */
function planOperations(tx: StoreTransactions) {
  return {
    previewComplete: (source, anchor, actor, options = {}) =>
      tx.preview('checking the completion', (port) => completeStep(port, source, anchor, actor, options)),
    reopen: (planPath, anchor, actor, reason) =>
      tx.write('reopening the step', (port) => reopenStep(port, planPath, anchor, actor, reason)),
    plan: (planPath) => tx.read('reading the plan', (port) => planRecord(port, planPath)),
    stepRecord: (planPath, anchor) => tx.read('reading the step', (port) => stepRecordOf(port, planPath, anchor)),
    commitTarget: (query) => tx.read('finding the step', (port) => resolveTarget(port, query)),
    reconcileTrailers: (trailers, actor, options) =>
      tx.write('reconciling', (port) => reconcileTrailers(port, trailers, actor, options)),
    prunePlans: (roots, actor, options) => {
      const op: PortOp<PruneResult> = (port) => prunePlans(port, actor, roots, options.dryRun);
      return options.dryRun ? tx.read('finding plans to prune', op) : tx.write('pruning plans', op);
    },
  } satisfies Partial<StoreOperations>;
}

/** Epics, their worktrees and ports, plan versions, planning notes, review signals and context. */
function epicOperations(tx: StoreTransactions) {
  return {
    createEpic: (input, actor) => tx.write('creating the epic', (port) => createEpic(port, input, actor)),
    listEpics: (status) => tx.read('reading epics', (port) => one(port.listEpics(status))),
    getEpic: (id) => tx.read('reading the epic', (port) => requireEpic(port, id)),
    applyEpicEvent: (id, event, actor, reason = null, data = {}) =>
      tx.write('changing the epic', (port) => applyEpicEvent(port, id, event, actor, reason, { ...data })),
    startEpic: (epicId, current, actor) =>
      tx.write('starting the epic', (port) => startEpic(port, epicId, current, actor)),
    portBlocks: (host) => tx.read('reading the reserved ports', (port) => one(port.portBlocks(host))),
    insertPortBlock: (block) => tx.write('reserving ports', (port) => one(port.insertPortBlock(block))),
    releasePorts: (host, worktree) => tx.write('releasing ports', (port) => one(port.releasePortBlock(host, worktree))),
    setPlanner: (epicId, planner, actor) =>
      tx.write('changing who plans the epic', (port) => setPlanner(port, epicId, planner, actor)),
    approveMerge: (epicId, actor) => tx.write('approving the merge', (port) => approveMerge(port, epicId, actor)),
    finishEpic: (epicId, actor, reason, options = {}) =>
      tx.write('finishing the epic', (port) =>
        finishEpic(port, epicId, actor, reason, options.verificationConfigured ?? false),
      ),
    countIteration: (epicId, actor, reason) =>
      tx.write('counting the iteration', (port) => countIteration(port, epicId, actor, reason)),
    setEpicWorktree: (epicId, path, branch) =>
      tx.write('recording the worktree', (port) => one(port.setEpicWorktree(epicId, path, branch))),
    forgetEpicWorktree: (epicId, path) =>
      tx.write('forgetting the worktree', (port) => one(port.clearEpicWorktree(epicId, path))),
    recordWorktreeEvent: (epicId, actor, action, reason, data) =>
      tx.write('recording the worktree event', (port) =>
        recordWorktreeEvent(port, epicId, actor, action, reason, data ? { ...data } : undefined),
      ),
    blockDetails: (epicId) => tx.read('reading the epic', (port) => blockDetails(port, epicId)),
    epicPlans: (epicId) => tx.read("reading the epic's plans", (port) => epicPlans(port, epicId)),
    changesSinceInit: (planPath, current) =>
      tx.read('reading the plan', (port) => changesSinceInit(port, planPath, current)),
    epicReport: (epicId) => tx.read('reading the epic report', (port) => epicReport(port, epicId)),
    handoffText: (epicId) => tx.read('reading the handoff', (port) => handoffText(port, epicId)),
    setPullRequest: (epicId, url, actor, data) =>
      tx.write('recording the pull request', (port) => setPullRequest(port, epicId, url, actor, { ...data })),
    markPullRequestChecked: (epicId) =>
      tx.write('recording the pull request check', (port) => one(port.markPullRequestChecked(epicId))),
    retrospective: (epicId) => tx.read('reading the retrospective', (port) => retrospective(port, epicId)),
    markMerged: (epicId, actor, reason, retro) =>
      tx.write('recording the merge', (port) => markMerged(port, epicId, actor, reason, retro)),
    debt: (options = {}) => tx.read('reading the debt register', (port) => one(port.listDebt(options.all ?? false))),

    proposePlan: (epicId, plan, actor) =>
      tx.write('proposing the plan', (port) => proposePlan(port, epicId, plan, actor)),
    approvePlan: (epicId, current, actor, version) =>
      tx.write('approving the plan', (port) => approvePlan(port, epicId, current, actor, version)),
    requestChanges: (epicId, feedback, actor, version) =>
      tx.write('requesting changes', (port) => requestChanges(port, epicId, feedback, actor, version)),
    discardPlan: (epicId, actor, version, reason = null) =>
      tx.write('discarding the plan', (port) => discardPlan(port, epicId, actor, version, reason)),
    planVersions: (epicId) => tx.read('reading plan versions', (port) => listVersions(port, epicId)),
    pendingPlanVersion: (epicId, version) =>
      tx.read('reading plan versions', (port) => pendingVersion(port, epicId, version)),
    recordPlanningNote: (epicId, kind, summary, actor) =>
      tx.write('recording the note', (port) => recordPlanningNote(port, epicId, kind, summary, actor)),

    recordSignal: (epicId, type, summary, locations, actor, awaitPerson = false) =>
      tx.write('recording the signal', (port) =>
        recordSignal(port, epicId, type, summary, locations, actor, awaitPerson),
      ),
    signals: (epicId) => tx.read('reading signals', (port) => one(port.listSignals(epicId, 100))),
    decideSignal: (signalId, decision, actor, note = null) =>
      tx.write('deciding the signal', (port) => decideSignal(port, signalId, decision, actor, note)),
    context: (request) => tx.read('reading the context', (port) => buildContext(port, request)),
  } satisfies Partial<StoreOperations>;
}

/** Agent runs, what they spent, verifications, the outcome ledger and the scheduler's snapshot. */
function runOperations(tx: StoreTransactions) {
  return {
    beginAgentRun: (input) => tx.write('recording the run', (port) => beginAgentRun(port, input)),
    startRun: (run, actor) => tx.write('recording the run', (port) => startRun(port, run, actor)),
    setAgentPid: (runId, pid) => tx.write('recording the agent', (port) => one(port.setAgentPid(runId, pid))),
    finishRun: (runId, end, actor) => tx.write('finishing the run', (port) => finishRun(port, runId, end, actor)),
    recordFailedLaunch: (run, end, actor) =>
      tx.write('recording the failed launch', (port) => recordFailedLaunch(port, run, end, actor)),
    findOrphans: (isAlive) => tx.read('reading runs', (port) => findOrphans(port, isAlive)),
    markOrphans: (isAlive, actor) => tx.write('marking lost runs', (port) => markOrphans(port, isAlive, actor)),
    runs: (options = {}) => tx.read('reading runs', (port) => one(port.listRuns(options))),
    runsByLaunch: (launchIds) => tx.read('reading runs', (port) => one(port.runsByLaunch(launchIds))),
    latestRun: async (epicId, role) =>
      (await tx.read('reading runs', (port) => one(port.latestRun(epicId, role)))) ?? null,
    sessionCounts: (epicId) => tx.read('reading runs', (port) => countSessions(port, epicId)),
    usageByEpic: (epicId) => tx.read('reading runs', (port) => one(port.usageByEpic(epicId))),
    spend: (epicId) => tx.read('reading what agents spent', (port) => spendReport(port, epicId)),
    setEpicBudget: (epicId, change, actor) =>
      tx.write('setting the budget', (port) => setEpicBudget(port, epicId, change, actor)),
    verifications: (options = {}) => tx.read('reading verifications', (port) => one(port.listVerifications(options))),
    recordVerifications: (entries) =>
      tx.write('recording verifications', (port) => one(port.insertVerifications(entries))),
    lastVerdict: (epicId) => tx.read('reading verifications', (port) => one(port.lastVerdict(epicId))),
    statsRows: (since) => tx.read('reading the outcome ledger', (port) => statsRows(port, since)),
    recordRoute: (epicId, stepAnchor, actor, reason, data) =>
      tx.write('recording the routing choice', (port) =>
        recordRoute(port, epicId, stepAnchor, actor, reason, { ...data }),
      ),
    schedulerSnapshot: () => tx.read('reading the scheduler snapshot', (port) => schedulerSnapshot(port)),
  } satisfies Partial<StoreOperations>;
}
