import { countByKind, type ItemRow, selectItems } from '../shared/itemSelection.ts';
import { RefusedError } from '../../errors.ts';
import type { PlanSource } from '../../plan/types.ts';
import type { Actor, ArtifactResult, ItemChange, UpdateOptions, UpdateResult } from '../types.ts';
import { assertHolder, lockOwner, opEvent, requireCurrentPlan, writeEvent } from './rows.ts';
import type { Tx } from './session.ts';

/** Sets checklist item statuses of a step or substep the actor holds; never its status (only complete does). */
export async function updateItems(tx: Tx, source: PlanSource, anchor: string, changes: readonly ItemChange[], actor: Actor, options: UpdateOptions = {}): Promise<UpdateResult> {
  const plan = source.planPath;
  await requireCurrentPlan(tx, source);
  const { step, owner } = await lockOwner(tx, plan, anchor, true);
  if (step.status === 'completed') throw new RefusedError('already_completed', `cannot update ${anchor}: it is completed`);
  if (!options.override) assertHolder(tx, owner, actor, 'update');
  const items = await tx.q<ItemRow>(`SELECT id, step_anchor, kind, ordinal, text, status FROM checklist_items WHERE repo_id = $1 AND plan_path = $2 AND step_anchor = $3
    ORDER BY kind, ordinal FOR UPDATE`, [tx.repo, plan, anchor]);
  let updated = 0;
  for (const change of changes) {
    for (const item of selectItems(items, change.selector, anchor)) {
      if (item.status === change.status) continue;
      await tx.q('UPDATE checklist_items SET status = $2, updated_at = $3, updated_by = $4 WHERE id = $1', [item.id, change.status, tx.now, actor.worktree]);
      await writeEvent(tx, actor, {
        entity: 'item', action: 'update', planPath: plan, stepAnchor: anchor, from: item.status, to: change.status,
        reason: options.override ? `override of ${owner.claimed_by ?? 'no holder'}` : null,
        data: { item_id: item.id, kind: item.kind, ordinal: item.ordinal, text: item.text },
      });
      item.status = change.status;
      updated++;
    }
  }
  return { updated, step_anchor: anchor, step_status: step.status, ...countByKind(items) };
}

/** Records a short audit breadcrumb on a step the actor holds (summary cut to 500 characters). */
export async function recordArtifact(tx: Tx, plan: string, anchor: string, kind: string, summary: string, actor: Actor): Promise<ArtifactResult> {
  const { owner } = await lockOwner(tx, plan, anchor);
  assertHolder(tx, owner, actor, 'record an artifact on');
  const text = summary.length > 500 ? summary.slice(0, 499) + '…' : summary;
  const id = (await tx.q<{ id: number }>(`INSERT INTO artifacts (repo_id, plan_path, step_anchor, kind, summary, recorded_by, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [tx.repo, plan, anchor, kind, text, actor.worktree, tx.now]))[0]?.id ?? 0;
  await writeEvent(tx, actor, { entity: 'artifact', action: 'record', planPath: plan, stepAnchor: anchor, data: { artifact_id: id, kind } });
  return { recorded: true, step_anchor: anchor, kind, artifact_id: id };
}

/**
 * The artifact operation `op` recorded on `anchor` for this holder, from its event; null when it
 * committed nothing (its reply was lost: docs/postgres.md, "Failures, retries, idempotence").
 */
export async function findArtifact(tx: Tx, op: string, plan: string, anchor: string, actor: Actor): Promise<ArtifactResult | null> {
  const row = await opEvent(tx, op, actor, 'artifact', 'record', { plan_path: plan, step_anchor: anchor });
  if (!row) return null;
  return { recorded: true, step_anchor: anchor, kind: String(row.data.kind), artifact_id: Number(row.data.artifact_id) };
}
