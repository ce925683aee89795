import type { PlanningNote } from '../epicTypes.ts';
import type { PlanningNotesPort } from '../shared/planningNotes.ts';
import type { PgMethods } from './port.ts';

/** Planning notes (shared/planningNotes.ts). */
export const planningNotesPg: PgMethods<PlanningNotesPort> = {
  async insertPlanningNote(epicId, kind, summary, by) {
    return (
      (
        await this.tx.q<{ id: number }>(
          'INSERT INTO planning_notes (repo_id, epic_id, kind, summary, recorded_by, recorded_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
          [this.tx.repo, epicId, kind, summary, by, this.now],
        )
      )[0]?.id ?? 0
    );
  },
  latestPlanningNotes(epicId, limit) {
    return this.tx.q<PlanningNote>(
      'SELECT id, kind, summary, recorded_by, recorded_at FROM planning_notes WHERE repo_id = $1 AND epic_id = $2 ORDER BY id DESC LIMIT $3',
      [this.tx.repo, epicId, limit],
    );
  },
};
