// Shared epic operations for the SQLite modules not yet written as operations themselves (removed once they are).
import type { EpicEvent } from '../../epics/transitions.ts';
import type { EpicRow, PlanVersionRow, TransitionOutcome } from '../epicTypes.ts';
import * as epics from '../shared/epics.ts';
import { call } from '../shared/op.ts';
import type { Actor } from '../types.ts';
import { runSqlite } from './port.ts';
import type { Database } from './sqlite.ts';

export function getEpic(db: Database, id: string): EpicRow {
  return runSqlite(db, new Date(), (p) => epics.requireEpic(p, id));
}

export function applyEpicEvent(db: Database, now: string, id: string, event: EpicEvent, actor: Actor, reason: string | null = null, data: Record<string, unknown> = {}): TransitionOutcome {
  return runSqlite(db, new Date(now), (p) => epics.applyEpicEvent(p, id, event, actor, reason, data));
}

export function countIteration(db: Database, now: string, id: string, actor: Actor, reason: string): boolean {
  return runSqlite(db, new Date(now), (p) => epics.countIteration(p, id, actor, reason));
}

export function approvedVersion(db: Database, epic: EpicRow): PlanVersionRow | undefined {
  return runSqlite(db, new Date(), function* (p) { return yield* call(p.approvedVersion(epic.id)); });
}
