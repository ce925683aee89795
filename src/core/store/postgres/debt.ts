/**
 * The debt register (docs/lifecycle.md): every time an epic is set aside — deferred by a person, or
 * its plan discarded — a row says why; resuming the epic closes it. Written inside the transition.
 */
import type { DebtRow } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import type { Tx } from './session.ts';

/** Opens a debt entry for an epic that was just set aside. */
export async function recordDebt(tx: Tx, epicId: string, event: string, fromStatus: string, reason: string, actor: Actor): Promise<void> {
  await tx.q('INSERT INTO debt (repo_id, epic_id, reason, event, from_status, recorded_by, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [tx.repo, epicId, reason, event, fromStatus, actor.agent ?? actor.worktree, tx.now]);
}

/** Closes the epic's open debt entries (it was resumed). */
export async function resolveDebt(tx: Tx, epicId: string, resolution: string): Promise<void> {
  await tx.q('UPDATE debt SET resolved_at = $3, resolution = $4 WHERE repo_id = $1 AND epic_id = $2 AND resolved_at IS NULL', [tx.repo, epicId, tx.now, resolution]);
}

/** The register, newest first: open entries only unless `all`. */
export function listDebt(tx: Tx, options: { all?: boolean } = {}): Promise<DebtRow[]> {
  return tx.q<DebtRow>(`SELECT d.id, d.epic_id, e.title, d.reason, d.event, d.from_status, d.recorded_by, d.recorded_at, d.resolved_at, d.resolution
    FROM debt d JOIN epics e ON e.repo_id = d.repo_id AND e.id = d.epic_id
    WHERE d.repo_id = $1 ${options.all ? '' : 'AND d.resolved_at IS NULL'} ORDER BY d.id DESC`, [tx.repo]);
}
