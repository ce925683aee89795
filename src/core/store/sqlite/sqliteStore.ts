import { listDebt, type DebtRow } from '../../epics/debt.ts';
import { buildContext, type ContextRequest, type ContextView } from '../../epics/context.ts';
import { applyEpicEvent, approveMerge, createEpic, getEpic, listEpics, type EpicRow, type NewEpic, type TransitionOutcome } from '../../epics/epicStore.ts';
import { approvePlan, discardPlan, finishEpic, listVersions, startEpic, proposePlan, requestChanges, type ApproveResult, type PlanVersionRow, type ProposedPlan, type ProposeResult } from '../../epics/planApproval.ts';
import { decideSignal, listSignals, recordSignal, type SignalDecision, type SignalLocation, type SignalResult, type SignalView } from '../../epics/signals.ts';
import type { EpicEvent, EpicStatus, SignalType } from '../../epics/transitions.ts';
import { listRuns, listVerifications, type RunView, type VerificationView } from './runs.ts';
import { SqliteStepStore } from './sqliteStepStore.ts';
import type { Actor, PlanSource, StateStore } from '../types.ts';

export { type SqliteStoreOptions } from './sqliteStepStore.ts';

/** The whole SQLite backend: steps and claims (SqliteStepStore) plus epics, approval, signals and runs. */
export class SqliteStore extends SqliteStepStore implements StateStore {
  createEpic(input: NewEpic, actor: Actor): Promise<EpicRow> {
    return this.write((db, now) => createEpic(db, now.toISOString(), input, actor));
  }
  listEpics(status?: EpicStatus): Promise<EpicRow[]> {
    return this.read((db) => listEpics(db, status));
  }
  getEpic(id: string): Promise<EpicRow> {
    return this.read((db) => getEpic(db, id));
  }
  applyEpicEvent(id: string, event: EpicEvent, actor: Actor, reason: string | null = null): Promise<TransitionOutcome> {
    return this.write((db, now) => applyEpicEvent(db, now.toISOString(), id, event, actor, reason));
  }
  approveMerge(epicId: string, actor: Actor): Promise<EpicRow> {
    return this.write((db, now) => approveMerge(db, now.toISOString(), epicId, actor));
  }
  startEpic(epicId: string, current: PlanSource, actor: Actor): Promise<TransitionOutcome> {
    return this.write((db, now) => startEpic(db, now.toISOString(), epicId, current, actor));
  }
  finishEpic(epicId: string, actor: Actor, reason: string): Promise<TransitionOutcome> {
    return this.write((db, now) => finishEpic(db, now.toISOString(), epicId, actor, reason));
  }
  proposePlan(epicId: string, plan: ProposedPlan, actor: Actor): Promise<ProposeResult> {
    return this.write((db, now) => proposePlan(db, now.toISOString(), epicId, plan, actor));
  }
  approvePlan(epicId: string, current: PlanSource, actor: Actor, version?: number): Promise<ApproveResult> {
    return this.write((db, now) => approvePlan(db, now.toISOString(), epicId, current, actor, version));
  }
  requestChanges(epicId: string, feedback: string, actor: Actor, version?: number): Promise<PlanVersionRow> {
    return this.write((db, now) => requestChanges(db, now.toISOString(), epicId, feedback, actor, version));
  }
  discardPlan(epicId: string, actor: Actor, version?: number, reason: string | null = null): Promise<PlanVersionRow & { transition: TransitionOutcome }> {
    return this.write((db, now) => discardPlan(db, now.toISOString(), epicId, actor, version, reason));
  }
  planVersions(epicId: string): Promise<PlanVersionRow[]> {
    return this.read((db) => listVersions(db, epicId));
  }
  recordSignal(epicId: string, type: SignalType, summary: string, locations: readonly SignalLocation[], actor: Actor, awaitPerson = false): Promise<SignalResult> {
    return this.write((db, now) => recordSignal(db, now.toISOString(), epicId, type, summary, locations, actor, awaitPerson));
  }
  signals(epicId?: string): Promise<SignalView[]> {
    return this.read((db) => listSignals(db, epicId));
  }
  decideSignal(signalId: number, decision: SignalDecision, actor: Actor, note: string | null = null): Promise<TransitionOutcome> {
    return this.write((db, now) => decideSignal(db, now.toISOString(), signalId, decision, actor, note));
  }
  context(request: ContextRequest): Promise<ContextView> {
    return this.read((db, now) => buildContext(db, now, request));
  }
  runs(options: { active?: boolean; epicId?: string; limit?: number } = {}): Promise<RunView[]> {
    return this.read((db) => listRuns(db, options));
  }
  /** The debt register: epics set aside and why (open entries unless `all`). */
  debt(options: { all?: boolean } = {}): Promise<DebtRow[]> {
    return this.read((db) => listDebt(db, options));
  }
  verifications(options: { epicId?: string; limit?: number } = {}): Promise<VerificationView[]> {
    return this.read((db) => listVerifications(db, options));
  }
}
