import { countByKind, type ItemRow, selectItems } from '../shared/itemSelection.ts';
import { RefusedError } from '../../errors.ts';
import { assertHolder, ownerOf, requireCurrentPlan, requireStep, writeEvent } from './rows.ts';
import type { Database } from './sqlite.ts';
import type { Actor, UpdateOptions, ArtifactResult, ItemChange, UpdateResult } from '../types.ts';
import type { PlanSource } from '../../plan/types.ts';

/** Sets checklist item statuses of a step or substep the actor holds; never its status (only complete does: docs/steps.md). */
export function updateItems(db: Database, now: Date, source: PlanSource, anchor: string, changes: readonly ItemChange[], actor: Actor, options: UpdateOptions = {}): UpdateResult {
  const plan = source.planPath;
  requireCurrentPlan(db, source);
  const step = requireStep(db, plan, anchor);
  if (step.status === 'completed') throw new RefusedError('already_completed', `cannot update ${anchor}: it is completed`);
  const owner = ownerOf(db, step);
  if (!options.override) assertHolder(owner, actor, 'update');
  const at = now.toISOString();
  const items = db.prepare('SELECT id, step_anchor, kind, ordinal, text, status FROM checklist_items WHERE plan_path = ? AND step_anchor = ? ORDER BY kind, ordinal').all(plan, anchor) as ItemRow[];
  const set = db.prepare('UPDATE checklist_items SET status = ?, updated_at = ?, updated_by = ? WHERE id = ? AND status != ?');
  let updated = 0;
  for (const change of changes) {
    for (const item of selectItems(items, change.selector, anchor)) {
      if (item.status === change.status) continue;
      set.run(change.status, at, actor.worktree, item.id, change.status);
      writeEvent(db, at, actor, {
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
export function recordArtifact(db: Database, now: Date, plan: string, anchor: string, kind: string, summary: string, actor: Actor): ArtifactResult {
  const owner = ownerOf(db, requireStep(db, plan, anchor));
  assertHolder(owner, actor, 'record an artifact on');
  const at = now.toISOString();
  const text = summary.length > 500 ? summary.slice(0, 499) + '…' : summary;
  const id = Number(db.prepare('INSERT INTO artifacts (plan_path, step_anchor, kind, summary, recorded_by, recorded_at) VALUES (?, ?, ?, ?, ?, ?)')
    .run(plan, anchor, kind, text, actor.worktree, at).lastInsertRowid);
  writeEvent(db, at, actor, { entity: 'artifact', action: 'record', planPath: plan, stepAnchor: anchor, data: { artifact_id: id, kind } });
  return { recorded: true, step_anchor: anchor, kind, artifact_id: id };
}
