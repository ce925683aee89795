/**
 * What a planner found while researching an epic, before any step exists to hang an artifact on:
 * her next session (after a person asked for changes) reads it in its context (docs/lifecycle.md).
 */
import { UsageError } from '../../errors.ts';
import type { PlanningNote } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { getEpic } from './interim.ts';
import { writeEvent } from './rows.ts';
import type { Tx } from './session.ts';

/** Records a research note on the epic (cut to 2000 characters). */
export async function recordPlanningNote(tx: Tx, epicId: string, kind: string, summary: string, actor: Actor): Promise<PlanningNote> {
  await getEpic(tx, epicId);
  const text = summary.trim().slice(0, 2000);
  if (text === '') throw new UsageError('missing_value', '--summary needs a non-empty text');
  const by = actor.agent ?? actor.worktree;
  const id = (await tx.q<{ id: number }>('INSERT INTO planning_notes (repo_id, epic_id, kind, summary, recorded_by, recorded_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
    [tx.repo, epicId, kind, text, by, tx.now]))[0]?.id ?? 0;
  await writeEvent(tx, actor, { entity: 'planning_note', action: 'record', epicId, reason: text.slice(0, 200), data: { note_id: id, kind } });
  return { id, kind, summary: text, recorded_by: by, recorded_at: tx.now };
}

/** The epic's latest notes, oldest first. */
export async function planningNotes(tx: Tx, epicId: string, limit = 10): Promise<PlanningNote[]> {
  return (await tx.q<PlanningNote>('SELECT id, kind, summary, recorded_by, recorded_at FROM planning_notes WHERE repo_id = $1 AND epic_id = $2 ORDER BY id DESC LIMIT $3',
    [tx.repo, epicId, limit])).reverse();
}
