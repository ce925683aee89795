import type { ItemRow } from '../shared/itemSelection.ts';
import type { ItemsPort } from '../shared/items.ts';
import type { Actor, ArtifactResult } from '../types.ts';
import type { PgMethods } from './port.ts';
import { opEvent } from './rows.ts';
import type { Tx } from './session.ts';

/** Checklist items and artifacts (shared/items.ts), the step's items locked while they change. */
export const itemsPg: PgMethods<ItemsPort> = {
  stepItems(plan, anchor) {
    return this.tx.q<ItemRow>(
      `SELECT id, step_anchor, kind, ordinal, text, status FROM checklist_items WHERE repo_id = $1 AND plan_path = $2 AND step_anchor = $3
      ORDER BY kind, ordinal FOR UPDATE`,
      [this.tx.repo, plan, anchor],
    );
  },
  async setItemStatus(id, status, worktree) {
    await this.tx.q('UPDATE checklist_items SET status = $2, updated_at = $3, updated_by = $4 WHERE id = $1', [
      id,
      status,
      this.now,
      worktree,
    ]);
  },
  async insertArtifact(plan, anchor, kind, summary, worktree) {
    return (
      (
        await this.tx.q<{ id: number }>(
          `INSERT INTO artifacts (repo_id, plan_path, step_anchor, kind, summary, recorded_by, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
          [this.tx.repo, plan, anchor, kind, summary, worktree, this.now],
        )
      )[0]?.id ?? 0
    );
  },
};

/**
 * The artifact operation `op` recorded on `anchor` for this holder, from its event; null when it
 * committed nothing (its reply was lost: docs/postgres-design.md, "Failures, retries, idempotence").
 */
export async function findArtifact(
  tx: Tx,
  op: string,
  plan: string,
  anchor: string,
  actor: Actor,
): Promise<ArtifactResult | null> {
  const row = await opEvent(tx, op, actor, 'artifact', 'record', { plan_path: plan, step_anchor: anchor });
  if (!row) return null;
  return {
    recorded: true,
    step_anchor: anchor,
    kind: String(row.data.kind),
    artifact_id: Number(row.data.artifact_id),
  };
}
