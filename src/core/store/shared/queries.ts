/** What the read commands show: which steps are ready, plans and steps with their items, the audit log. */
import type {
  Actor,
  EventQuery,
  EventView,
  FilesWait,
  ItemView,
  PlanRecord,
  PlanView,
  ReadyResult,
  StepRecord,
  StepStatus,
  StepView,
} from '../types.ts';
import { epicWait } from './claims.ts';
import { filesWait, othersHeld } from './filesClaim.ts';
import { call, type Io, type Op } from './op.ts';
import type { StepPort } from './port.ts';
import * as refuse from './refusals.ts';
import { requirePlan, requireStep, stepRecord, type PlanRow, type StepRow } from './rows.ts';
import { stepViews } from './stepViews.ts';

/** A checklist item with its step, as views group them. */
export type ItemOfStep = ItemView & { readonly step_anchor: string };

export interface QueriesPort {
  /** Every plan, by age then path. */
  listPlans(): Io<PlanRow[]>;
  /** A plan's steps (by step_index), dependencies and items (by step, kind, ordinal). */
  planContents(
    planPath: string,
  ): Io<{ steps: StepRow[]; deps: { step_anchor: string; depends_on: string }[]; items: ItemOfStep[] }>;
  /** A step and its substeps, their dependencies with the status of each, and their items. */
  stepFamily(
    planPath: string,
    anchor: string,
  ): Io<{
    steps: StepRow[];
    deps: { step_anchor: string; depends_on: string; status: StepStatus }[];
    items: ItemOfStep[];
  }>;
  /**
   * The audit log filtered by plan, epic (its own events and those of its plans, pruned ones included:
   * their versions stay), step and position: paging forward from an id takes the oldest after it,
   * otherwise the newest `limit`; oldest first either way.
   */
  events(q: EventQuery & { readonly limit: number }): Io<EventView[]>;
}

/**
 * Which steps are ready, claimed, expired, blocked and completed. It agrees with claim: while the
 * plan's epic is not in progress, steps that would be ready are `waiting_steps`, with the reason,
 * the same words claim refuses with; a step whose declared files meet those of a step another holder
 * (than `actor`, when given) has claimed is in `files_waiting`, with what it shares, not in `ready_steps`.
 */
export function* readySteps(port: StepPort, plan: string, actor: Actor | null = null): Op<ReadyResult> {
  const row = yield* requirePlan(port, plan);
  const p = yield* call(port.partitionSteps(plan));
  const epic = epicWait(row, row.epic_id ? ((yield* call(port.claimedEpic(row.epic_id)))?.status ?? null) : null);
  const waiting = epic.message !== null;
  const filesWaiting: FilesWait[] = [];
  if (!waiting && p.ready.length > 0) {
    // One read on a partial index: a plan without **Files:** lines has no rows in it.
    const declared = new Map((yield* call(port.planFiles(plan))).map((s) => [s.anchor, s.files]));
    if (p.ready.some((a) => declared.has(a))) {
      const held = othersHeld(yield* call(port.heldFiles()), actor, port.host);
      for (const anchor of p.ready) {
        const wait = filesWait(anchor, declared.get(anchor), held);
        if (wait) filesWaiting.push(wait);
      }
    }
  }
  const held = new Set(filesWaiting.map((w) => w.anchor));
  return {
    plan_path: plan,
    ready_steps: waiting ? [] : p.ready.filter((a) => !held.has(a)),
    waiting_steps: waiting ? p.ready : [],
    waiting_reason: epic.message,
    files_waiting: filesWaiting,
    epic_id: row.epic_id,
    epic_status: epic.status,
    all_steps: p.all,
    completed_steps: p.completed,
    claimed_steps: p.claimed,
    blocked_steps: p.blocked,
    expired_claims: p.expired,
  };
}

/** Every plan (or one) with its step tree, items, deps, blockers and progress. */
export function* showPlans(port: StepPort, plan?: string): Op<PlanView[]> {
  const rows = plan ? [yield* requirePlan(port, plan)] : yield* call(port.listPlans());
  const out: PlanView[] = [];
  for (const row of rows) out.push(yield* planView(port, row));
  return out;
}

function* planView(port: StepPort, row: PlanRow): Op<PlanView> {
  const { steps, deps, items } = yield* call(port.planContents(row.plan_path));
  const { top, itemsDone } = stepViews(port.now, steps, deps, items, new Map(steps.map((s) => [s.anchor, s.status])));
  return {
    plan_path: row.plan_path,
    title: row.title,
    status: row.status,
    epic_id: row.epic_id,
    plan_hash: row.plan_hash,
    created_at: row.created_at,
    updated_at: row.updated_at,
    steps: top,
    progress: {
      steps_completed: top.filter((s) => s.status === 'completed').length,
      steps_total: top.length,
      items_completed: itemsDone,
      items_total: items.length,
    },
  };
}

/** One step (or substep) with its substeps, reading only their rows: what `show PLAN --step STEP` prints. */
export function* showStep(port: StepPort, plan: string, anchor: string): Op<StepView> {
  yield* requireStep(port, plan, anchor);
  const { steps, deps, items } = yield* call(port.stepFamily(plan, anchor));
  const status = new Map([
    ...deps.map((d): [string, StepStatus] => [d.depends_on, d.status]),
    ...steps.map((s): [string, StepStatus] => [s.anchor, s.status]),
  ]);
  return stepViews(port.now, steps, deps, items, status).top[0] as StepView;
}

/** The plan's record; an unknown plan is refused. */
export function* planRecord(port: StepPort, plan: string): Op<PlanRecord> {
  return yield* requirePlan(port, plan);
}

/** The step's record (the same shape on every backend); an unknown plan or step is refused. */
export function* stepRecordOf(port: StepPort, plan: string, anchor: string): Op<StepRecord> {
  return stepRecord(yield* requireStep(port, plan, anchor));
}

/** The audit log, oldest first, filtered by plan, epic (with its plans' events), step and/or position. */
export function* listEvents(port: StepPort, q: EventQuery = {}): Op<EventView[]> {
  const rows = yield* call(port.events({ ...q, limit: Math.max(1, Math.floor(q.limit ?? 1000)) }));
  // A plan that never existed is a typo; a pruned one still has its history.
  if (rows.length === 0 && q.planPath !== undefined && !(yield* call(port.findPlan(q.planPath))))
    throw refuse.unknownPlan(q.planPath);
  return rows;
}
