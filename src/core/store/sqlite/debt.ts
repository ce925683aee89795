/**
 * The debt register (docs/lifecycle.md): every time an epic is set aside — deferred by a person, or
 * its plan discarded — a row says why; resuming the epic closes it. Written inside the transition.
 */
import type { DebtRow } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import type { Database } from './sqlite.ts';

/** Opens a debt entry for an epic that was just set aside. */
export function recordDebt(db: Database, now: string, epicId: string, event: string, fromStatus: string, reason: string, actor: Actor): void {
  db.prepare('INSERT INTO debt (epic_id, reason, event, from_status, recorded_by, recorded_at) VALUES (?, ?, ?, ?, ?, ?)')
    .run(epicId, reason, event, fromStatus, actor.agent ?? actor.worktree, now);
}

/** Closes the epic's open debt entries (it was resumed). */
export function resolveDebt(db: Database, now: string, epicId: string, resolution: string): void {
  db.prepare('UPDATE debt SET resolved_at = ?, resolution = ? WHERE epic_id = ? AND resolved_at IS NULL').run(now, resolution, epicId);
}

/** The register, newest first: open entries only unless `all`. */
export function listDebt(db: Database, options: { all?: boolean } = {}): DebtRow[] {
  return db.prepare(`SELECT d.*, e.title FROM debt d JOIN epics e ON e.id = d.epic_id ${options.all ? '' : 'WHERE d.resolved_at IS NULL'} ORDER BY d.id DESC`).all() as DebtRow[];
}
