// Shared epic operations for the PostgreSQL modules not yet written as operations themselves (removed once they are).
import type { EpicEvent } from '../../epics/transitions.ts';
import type { EpicRow, PlanVersionRow, TransitionOutcome } from '../epicTypes.ts';
import * as epics from '../shared/epics.ts';
import { call } from '../shared/op.ts';
import type { Actor } from '../types.ts';
import { runPg } from './port.ts';
import type { Tx } from './session.ts';

export function getEpic(tx: Tx, id: string, lock = false): Promise<EpicRow> {
  return runPg(tx, (p) => epics.requireEpic(p, id, lock));
}

export function applyEpicEvent(tx: Tx, id: string, event: EpicEvent, actor: Actor, reason: string | null = null, data: Record<string, unknown> = {}): Promise<TransitionOutcome> {
  return runPg(tx, (p) => epics.applyEpicEvent(p, id, event, actor, reason, data));
}

export function countIteration(tx: Tx, id: string, actor: Actor, reason: string): Promise<boolean> {
  return runPg(tx, (p) => epics.countIteration(p, id, actor, reason));
}

export function approvedVersion(tx: Tx, epic: EpicRow): Promise<PlanVersionRow | undefined> {
  return runPg(tx, function* (p) { return yield* call(p.approvedVersion(epic.id)); });
}
