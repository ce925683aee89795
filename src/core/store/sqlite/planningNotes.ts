/**
 * What a planner found while researching an epic, before any step exists to hang an artifact on:
 * her next session (after a person asked for changes) reads it in its context (docs/lifecycle.md).
 */
import { UsageError } from '../../errors.ts';
import type { PlanningNote } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { getEpic } from './interim.ts';
import { writeEvent } from './rows.ts';
import type { Database } from './sqlite.ts';

/** Records a research note on the epic (cut to 2000 characters). */
export function recordPlanningNote(db: Database, now: string, epicId: string, kind: string, summary: string, actor: Actor): PlanningNote {
  getEpic(db, epicId);
  const text = summary.trim().slice(0, 2000);
  if (text === '') throw new UsageError('missing_value', '--summary needs a non-empty text');
  const id = Number(db.prepare('INSERT INTO planning_notes (epic_id, kind, summary, recorded_by, recorded_at) VALUES (?, ?, ?, ?, ?)')
    .run(epicId, kind, text, actor.agent ?? actor.worktree, now).lastInsertRowid);
  writeEvent(db, now, actor, { entity: 'planning_note', action: 'record', epicId, reason: text.slice(0, 200), data: { note_id: id, kind } });
  return { id, kind, summary: text, recorded_by: actor.agent ?? actor.worktree, recorded_at: now };
}

/** The epic's latest notes, oldest first. */
export function planningNotes(db: Database, epicId: string, limit = 10): PlanningNote[] {
  return (db.prepare('SELECT id, kind, summary, recorded_by, recorded_at FROM planning_notes WHERE epic_id = ? ORDER BY id DESC LIMIT ?').all(epicId, limit) as PlanningNote[]).reverse();
}
