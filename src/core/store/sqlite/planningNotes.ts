import type { PlanningNote } from '../epicTypes.ts';
import type { PlanningNotesPort } from '../shared/planningNotes.ts';
import type { SqliteMethods } from './port.ts';

/** Planning notes (shared/planningNotes.ts). */
export const planningNotesSql: SqliteMethods<PlanningNotesPort> = {
  insertPlanningNote(epicId, kind, summary, by) {
    return Number(
      this.db
        .prepare('INSERT INTO planning_notes (epic_id, kind, summary, recorded_by, recorded_at) VALUES (?, ?, ?, ?, ?)')
        .run(epicId, kind, summary, by, this.now).lastInsertRowid,
    );
  },
  latestPlanningNotes(epicId, limit) {
    return this.db
      .prepare(
        'SELECT id, kind, summary, recorded_by, recorded_at FROM planning_notes WHERE epic_id = ? ORDER BY id DESC LIMIT ?',
      )
      .all(epicId, limit) as PlanningNote[];
  },
};
