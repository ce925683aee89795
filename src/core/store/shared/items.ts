/** Checklist items and artifacts of a step the actor holds (docs/steps.md): never its status (only complete changes that). */
import type { PlanSource } from '../../plan/types.ts';
import type { Actor, ArtifactResult, ItemChange, UpdateOptions, UpdateResult } from '../types.ts';
import { countByKind, selectItems, type ItemRow } from './itemSelection.ts';
import { call, type Io, type Op } from './op.ts';
import type { StepPort } from './port.ts';
import * as refuse from './refusals.ts';
import { assertHolder, requireClaim, requireCurrentPlan } from './rows.ts';

export interface ItemsPort {
  /** The step's own items by kind and ordinal (PostgreSQL locks them). */
  stepItems(planPath: string, anchor: string): Io<ItemRow[]>;
  setItemStatus(id: number, status: ItemRow['status'], worktree: string): Io<void>;
  /** The new artifact's id. */
  insertArtifact(planPath: string, anchor: string, kind: string, summary: string, worktree: string): Io<number>;
}

/** Sets checklist item statuses of a step or substep the actor holds (or, with `override`, a person over its holder). */
export function* updateItems(
  port: StepPort,
  source: PlanSource,
  anchor: string,
  changes: readonly ItemChange[],
  actor: Actor,
  options: UpdateOptions = {},
): Op<UpdateResult> {
  const plan = source.planPath;
  yield* requireCurrentPlan(port, source);
  const { step, owner } = yield* requireClaim(port, plan, anchor, true);
  if (step.status === 'completed') throw refuse.updateCompleted(anchor);
  if (!options.override) assertHolder(port.host, owner, actor, 'update');
  const items = yield* call(port.stepItems(plan, anchor));
  let updated = 0;
  for (const change of changes) {
    for (const item of selectItems(items, change.selector, anchor)) {
      if (item.status === change.status) continue;
      yield* call(port.setItemStatus(item.id, change.status, actor.worktree));
      yield* call(
        port.writeEvent(actor, {
          entity: 'item',
          action: 'update',
          planPath: plan,
          stepAnchor: anchor,
          from: item.status,
          to: change.status,
          reason: options.override ? `override of ${owner.claimed_by ?? 'no holder'}` : null,
          data: { item_id: item.id, kind: item.kind, ordinal: item.ordinal, text: item.text },
        }),
      );
      item.status = change.status;
      updated++;
    }
  }
  return { updated, step_anchor: anchor, step_status: step.status, ...countByKind(items) };
}

/** Records a short audit breadcrumb on a step the actor holds (summary cut to 500 characters). */
export function* recordArtifact(
  port: StepPort,
  plan: string,
  anchor: string,
  kind: string,
  summary: string,
  actor: Actor,
): Op<ArtifactResult> {
  const { owner } = yield* requireClaim(port, plan, anchor);
  assertHolder(port.host, owner, actor, 'record an artifact on');
  const text = summary.length > 500 ? summary.slice(0, 499) + '…' : summary;
  const id = yield* call(port.insertArtifact(plan, anchor, kind, text, actor.worktree));
  yield* call(
    port.writeEvent(actor, {
      entity: 'artifact',
      action: 'record',
      planPath: plan,
      stepAnchor: anchor,
      data: { artifact_id: id, kind },
    }),
  );
  return { recorded: true, step_anchor: anchor, kind, artifact_id: id };
}
