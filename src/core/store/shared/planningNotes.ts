/**
 * What a planner found while researching an epic, before any step exists to hang an artifact on:
 * her next session (after a person asked for changes) reads it in its context (docs/lifecycle.md).
 */
import type { PlanningNote } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { requireEpic } from './epics.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import * as refuse from './refusals.ts';

export interface PlanningNotesPort {
  /** The new note's id. */
  insertPlanningNote(epicId: string, kind: string, summary: string, by: string): Io<number>;
  /** The epic's latest notes, newest first. */
  latestPlanningNotes(epicId: string, limit: number): Io<PlanningNote[]>;
}

/** Records a research note on the epic (cut to 2000 characters). */
export function* recordPlanningNote(
  port: StorePort,
  epicId: string,
  kind: string,
  summary: string,
  actor: Actor,
): Op<PlanningNote> {
  yield* requireEpic(port, epicId);
  const text = summary.trim().slice(0, 2000);
  if (text === '') throw refuse.missingNote();
  const by = actor.agent ?? actor.worktree;
  const id = yield* call(port.insertPlanningNote(epicId, kind, text, by));
  yield* call(
    port.writeEvent(actor, {
      entity: 'planning_note',
      action: 'record',
      epicId,
      reason: text.slice(0, 200),
      data: { note_id: id, kind },
    }),
  );
  return { id, kind, summary: text, recorded_by: by, recorded_at: port.now };
}

/** The epic's latest notes, oldest first. */
export function* planningNotes(port: StorePort, epicId: string, limit = 10): Op<PlanningNote[]> {
  return (yield* call(port.latestPlanningNotes(epicId, limit))).reverse();
}
