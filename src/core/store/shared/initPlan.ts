/**
 * Initialising a plan (docs/steps.md): its steps, dependencies and checklist items written from the
 * file. Idempotent; a file whose structure drifted is refused unless `force`, which re-initialises from
 * it, keeping the steps (and items) already completed and unchanged.
 */
import { planHash, structureJson } from '../../plan/hash.ts';
import type { PlanSource, PlanStep } from '../../plan/types.ts';
import type { Actor, InitResult, ItemStatus } from '../types.ts';
import { call, type Io, type Op } from './op.ts';
import type { StepPort } from './port.ts';
import { driftRefusal, type StepRow } from './rows.ts';

/** A checklist item as a re-initialisation finds it. */
export interface KeptItem {
  readonly step_anchor: string;
  readonly kind: string;
  readonly text: string;
  readonly status: ItemStatus;
  readonly updated_at: string | null;
  readonly updated_by: string | null;
}

/** A checklist item to write, in plan order. */
export interface NewItem {
  readonly anchor: string;
  readonly kind: string;
  readonly ordinal: number;
  readonly text: string;
  readonly status: ItemStatus;
  readonly updatedAt: string | null;
  readonly updatedBy: string | null;
}

export interface InitPlanPort {
  /** Marks the plan done or active again (also reconcile.ts, when trailers complete its last step). */
  setPlanStatus(planPath: string, status: 'active' | 'done'): Io<void>;
  /** Ties an initialised plan to an epic. */
  linkPlanToEpic(planPath: string, epicId: string): Io<void>;
  /** The plan's row (inserted, or updated when `existing`) with its title, hash and epic, and the structure (SQLite: with the file's bytes, docs/cli-cost.md). */
  writePlan(source: PlanSource, hash: string, structure: string, epicId: string | null, existing: boolean): Io<void>;
  /** A re-initialised plan's steps and items (in id order) as they were. */
  oldPlanRows(planPath: string): Io<{ steps: StepRow[]; items: KeptItem[] }>;
  /** Deletes its items and dependencies and detaches every parent link, so removing a step never cascades into one that is kept. */
  clearPlanLinks(planPath: string): Io<void>;
  removeSteps(planPath: string, anchors: readonly string[]): Io<void>;
  /** New steps, pending, each with its declared files (`files`: stepFiles's JSON, by anchor). */
  insertSteps(planPath: string, steps: readonly PlanStep[], files: ReadonlyMap<string, string | null>): Io<void>;
  /** Kept steps' index, number, title and declared files from the file. */
  refreshSteps(planPath: string, steps: readonly PlanStep[], files: ReadonlyMap<string, string | null>): Io<void>;
  /** Kept steps not kept completed: back to pending, claim and completion cleared, token bumped. */
  releaseSteps(planPath: string, anchors: readonly string[]): Io<void>;
  setParents(planPath: string, children: readonly PlanStep[]): Io<void>;
  insertDeps(planPath: string, deps: readonly (readonly [string, string])[]): Io<void>;
  insertItems(planPath: string, items: readonly NewItem[]): Io<void>;
}

/** Writes a plan's steps, dependencies and checklist items, holding the plan's lock exclusively (PostgreSQL). */
export function* initPlan(
  port: StepPort,
  source: PlanSource,
  actor: Actor,
  force: boolean,
  epicId: string | null,
): Op<InitResult> {
  yield* call(port.lockPlan(source.planPath, true));
  const existing = yield* call(port.findPlan(source.planPath));
  const hash = planHash(source.plan());
  const base = { plan_path: source.planPath, plan_hash: hash };
  // A drifted file is not "already initialised": say what changed and refuse (docs/cli-contract.md).
  if (existing && !force && existing.plan_hash !== hash)
    throw yield* driftRefusal(port, source.planPath, source.plan());
  if (existing && (!force || existing.plan_hash === hash)) {
    if (epicId && existing.epic_id !== epicId) yield* call(port.linkPlanToEpic(source.planPath, epicId));
    return {
      ...base,
      plan_hash: existing.plan_hash,
      steps_created: 0,
      checklist_items_created: 0,
      already_initialized: true,
      reinitialized: false,
      steps_kept_completed: 0,
    };
  }
  yield* call(port.writePlan(source, hash, structureJson(source.plan()), epicId, existing !== undefined));
  const counts = yield* writeSteps(port, source, existing !== undefined);
  yield* call(port.recomputeReadiness(source.planPath));
  const allDone = source.plan().steps.every((s) => counts.keptCompleted.has(s.anchor));
  yield* call(port.setPlanStatus(source.planPath, allDone ? 'done' : 'active'));
  yield* call(
    port.writeEvent(actor, {
      entity: 'plan',
      action: existing ? 'reinit' : 'init',
      planPath: source.planPath,
      epicId,
      from: existing ? existing.plan_hash : null,
      to: hash,
      data: {
        steps: source.plan().steps.length,
        items: counts.items,
        kept_completed: [...counts.keptCompleted],
        removed: counts.removed,
      },
    }),
  );
  return {
    ...base,
    steps_created: source.plan().steps.length,
    checklist_items_created: counts.items,
    already_initialized: false,
    reinitialized: existing !== undefined,
    steps_kept_completed: counts.keptCompleted.size,
  };
}

/**
 * What the store keeps of each step's `**Files:**` globs (docs/files.md, "Claims by agents themselves"):
 * a top-level step's with its substeps' (a claim takes them together), a substep's own, as a JSON array;
 * null when it declares none, as a step without files is claimed as before.
 */
export function stepFiles(steps: readonly PlanStep[]): Map<string, string | null> {
  const globs = new Map<string, string[]>(steps.map((s) => [s.anchor, [...s.files]]));
  for (const s of steps) if (s.parentAnchor !== null) globs.get(s.parentAnchor)?.push(...s.files);
  return new Map(
    [...globs].map(([anchor, list]) => [anchor, list.length > 0 ? JSON.stringify([...new Set(list)]) : null]),
  );
}

function stepKey(step: PlanStep): string {
  return JSON.stringify([step.parentAnchor, step.title, step.items.map((i) => [i.kind, i.text])]);
}

function* writeSteps(
  port: StepPort,
  source: PlanSource,
  reinit: boolean,
): Op<{ items: number; keptCompleted: Set<string>; removed: string[] }> {
  const { planPath } = source;
  const plan = source.plan();
  const oldSteps = new Map<string, StepRow>();
  const oldItems = new Map<string, KeptItem[]>();
  if (reinit) {
    const old = yield* call(port.oldPlanRows(planPath));
    for (const row of old.steps) oldSteps.set(row.anchor, row);
    for (const item of old.items) {
      const list = oldItems.get(item.step_anchor) ?? [];
      list.push(item);
      oldItems.set(item.step_anchor, list);
    }
    yield* call(port.clearPlanLinks(planPath));
  }
  const oldKey = (row: StepRow) =>
    JSON.stringify([row.parent_anchor, row.title, (oldItems.get(row.anchor) ?? []).map((i) => [i.kind, i.text])]);
  const newAnchors = new Set(plan.steps.map((s) => s.anchor));
  const removed = [...oldSteps.keys()].filter((a) => !newAnchors.has(a));
  if (removed.length > 0) yield* call(port.removeSteps(planPath, removed));
  // A step stays completed only if it, and every substep it now has, is unchanged and was completed.
  const unchangedDone = new Set(
    plan.steps
      .filter((s) => {
        const old = oldSteps.get(s.anchor);
        return old !== undefined && old.status === 'completed' && oldKey(old) === stepKey(s);
      })
      .map((s) => s.anchor),
  );
  const keptCompleted = new Set(
    plan.steps
      .filter(
        (s) =>
          unchangedDone.has(s.anchor) &&
          (s.parentAnchor !== null ||
            plan.steps.every((c) => c.parentAnchor !== s.anchor || unchangedDone.has(c.anchor))),
      )
      .map((s) => s.anchor),
  );
  const fresh = plan.steps.filter((s) => !oldSteps.has(s.anchor));
  const kept = plan.steps.filter((s) => oldSteps.has(s.anchor));
  const files = stepFiles(plan.steps);
  if (fresh.length > 0) yield* call(port.insertSteps(planPath, fresh, files));
  if (kept.length > 0) {
    yield* call(port.refreshSteps(planPath, kept, files));
    const release = kept
      .filter((s) => !keptCompleted.has(s.anchor) && oldSteps.get(s.anchor)?.status !== 'pending')
      .map((s) => s.anchor);
    if (release.length > 0) yield* call(port.releaseSteps(planPath, release));
  }
  const children = plan.steps.filter((s) => s.parentAnchor);
  if (children.length > 0) yield* call(port.setParents(planPath, children));
  const deps = plan.steps.flatMap((s) => s.dependsOn.map((d) => [s.anchor, d] as const));
  if (deps.length > 0) yield* call(port.insertDeps(planPath, deps));
  const items: NewItem[] = [];
  for (const step of plan.steps) {
    const pool = [...(oldItems.get(step.anchor) ?? [])];
    for (const it of step.items) {
      // An item completed before keeps its state and who completed it, when the same item (kind and text) is still there.
      const idx = pool.findIndex((o) => o.kind === it.kind && o.text === it.text && o.status === 'completed');
      const keptItem = idx >= 0 ? pool.splice(idx, 1)[0] : undefined;
      items.push({
        anchor: step.anchor,
        kind: it.kind,
        ordinal: it.ordinal,
        text: it.text,
        status: keptItem ? 'completed' : 'open',
        updatedAt: keptItem?.updated_at ?? null,
        updatedBy: keptItem?.updated_by ?? null,
      });
    }
  }
  if (items.length > 0) yield* call(port.insertItems(planPath, items));
  return { items: items.length, keptCompleted, removed };
}
