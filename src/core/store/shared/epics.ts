/**
 * Epics and their state machine (docs/state-machine.md): creation, the one way a status changes
 * (applyEpicEvent), a retry lifting the block it undoes, the merge approval, build iterations against
 * the budget, and the debt register an epic set aside opens (docs/lifecycle.md).
 */
import { BUDGET_BLOCK, budgetBlockReason } from '../../epics/budget.ts';
import { buildBudget, detectComplexity, type Complexity } from '../../epics/complexity.ts';
import { newEpicId } from '../../epics/ids.ts';
import { nextStatus } from '../../epics/nextStatus.ts';
import { isRetryable, RETRYABLE_BLOCKS, type EpicEvent, type EpicStatus } from '../../epics/transitions.ts';
import type { DebtRow, EpicRow, NewEpic, Planner, TransitionOutcome } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';
import * as refuse from './refusals.ts';
import { PLANNING_ROLE } from '../../../shared/roles.ts';

/**
 * A new epic's column values in both backends' order: id, title, brief, priority, complexity,
 * complexity_source, max_iterations, planner, budget_usd, budget_tokens, budget_minutes (then each
 * backend's status 'planned' and its times).
 */
export function epicValues(id: string, input: NewEpic, complexity: Complexity, planner: Planner): unknown[] {
  return [
    id,
    input.title.trim(),
    input.brief,
    input.priority,
    complexity,
    input.complexity ? 'override' : 'detected',
    input.maxIterations ?? null,
    planner,
    input.budget?.usd ?? null,
    input.budget?.tokens ?? null,
    input.budget?.minutes ?? null,
  ];
}

/** An epic event as the retry rule reads it (newest first). */
export interface BlockEvent {
  readonly action: string;
  readonly at: string;
  readonly from_status: EpicStatus;
  readonly data: Record<string, unknown> | null;
}

export interface EpicsPort {
  /** Inserts a new epic in `planned`; false when the id is taken. */
  insertEpic(id: string, input: NewEpic, complexity: Complexity, planner: Planner): Io<boolean>;
  /** The epic's row; with `lock`, PostgreSQL locks it FOR UPDATE (every change of its status reads it so). */
  epicRow(id: string, lock?: boolean): Io<EpicRow | undefined>;
  /** Every epic of the store (status given: only those, by priority and age; else open ones first). */
  listEpics(status?: EpicStatus): Io<EpicRow[]>;
  /** The epic's status, reason and iteration, if it is still `from`. */
  setEpicStatus(id: string, from: EpicStatus, to: EpicStatus, statusReason: string | null, iteration: number): Io<void>;
  /** The epic's events that move it to blocked or retry it, newest first (read only as far as needed). */
  epicBlockEvents(id: string): Io<Iterable<BlockEvent>>;
  approveMergeRow(id: string, by: string): Io<void>;
  setPlannerRow(id: string, planner: Planner): Io<void>;
  bumpIteration(id: string): Io<void>;
  setPullRequestRow(id: string, url: string): Io<void>;
  markPullRequestChecked(id: string): Io<void>;
  /** Where the epic's worktree lives (PostgreSQL: and on which host). */
  setEpicWorktree(id: string, path: string, branch: string): Io<void>;
  /** The epic's worktree, forgotten when it is still `path` (a newer one is kept). */
  clearEpicWorktree(id: string, path: string): Io<void>;
  openDebt(epicId: string, event: string, fromStatus: string, reason: string, by: string): Io<void>;
  closeDebt(epicId: string, resolution: string): Io<void>;
  /** The register, newest first: open entries only unless `all`. */
  listDebt(all: boolean): Io<DebtRow[]>;
}

export function* requireEpic(port: StorePort, id: string, lock = false): Op<EpicRow> {
  const row = yield* call(port.epicRow(id, lock));
  if (!row) throw refuse.unknownEpic(id);
  return row;
}

/** Creates an epic in `planned` with a short id unique in the store (a taken id is drawn again, longer) and a detected (or given) complexity. */
export function* createEpic(port: StorePort, input: NewEpic, actor: Actor): Op<EpicRow> {
  if (input.title.trim() === '') throw refuse.missingTitle();
  const complexity = input.complexity ?? detectComplexity(input.title, input.brief);
  const planner = input.planner ?? PLANNING_ROLE;
  // An id the insert finds taken is drawn again; as newEpicId does with ids it is told exist, five
  // collisions at one length move on to the next (4, 5, then 6 hex digits), then it gives up.
  const taken = new Set<string>();
  for (;;) {
    const shortest = 4 + Math.floor(taken.size / 5);
    const id = newEpicId((candidate) => taken.has(candidate) || candidate.length - 'sf-'.length < shortest);
    if (!(yield* call(port.insertEpic(id, input, complexity, planner)))) {
      taken.add(id);
      continue;
    }
    yield* call(
      port.writeEvent(actor, {
        entity: 'epic',
        action: 'create',
        epicId: id,
        to: 'planned',
        data: { title: input.title.trim(), complexity, priority: input.priority, planner },
      }),
    );
    return yield* requireEpic(port, id);
  }
}

/**
 * The one way an epic's status changes: checks the transition table (docs/state-machine.md), counts
 * build iterations on each entry to in_progress (a retry is not a new iteration) and blocks the epic
 * when the budget is spent. Writes an event per change; `data` adds to its record (a block also keeps
 * the reason it replaced, which a retry restores). The epic's row is read (and locked) first.
 */
export function* applyEpicEvent(
  port: StorePort,
  epicId: string,
  event: EpicEvent,
  actor: Actor,
  reason: string | null = null,
  data: Record<string, unknown> = {},
): Op<TransitionOutcome> {
  const epic = yield* requireEpic(port, epicId, true);
  const block = event === 'retry' ? yield* retryableBlock(port, epic) : undefined;
  const { to, nextRole, why, iteration } = nextStatus(epic, event, reason, block?.from);
  const statusReason = block ? block.previousReason : why;
  yield* call(port.setEpicStatus(epicId, epic.status, to, statusReason, iteration));
  // Setting an epic aside is debt until a person resumes it (docs/lifecycle.md).
  if (to === 'deferred')
    yield* call(port.openDebt(epicId, event, epic.status, why ?? event, actor.agent ?? actor.worktree));
  if (epic.status === 'deferred' && to !== 'deferred') yield* call(port.closeDebt(epicId, why ?? event));
  yield* call(
    port.writeEvent(actor, {
      entity: 'epic',
      action: event,
      epicId,
      from: epic.status,
      to,
      reason: why,
      data: {
        next_role: nextRole,
        iteration,
        budget: buildBudget(epic),
        ...(to === 'blocked' ? { previous_reason: epic.status_reason } : {}),
        ...data,
      },
    }),
  );
  return { epic_id: epicId, event, from: epic.status, to, next_role: nextRole, iteration, reason: why };
}

/** The block an epic is in now: the newest move to blocked that no retry has undone (blocks on blocks lift one at a time). */
function* currentBlock(port: StorePort, epicId: string): Op<BlockEvent | undefined> {
  let undone = 0;
  for (const e of yield* call(port.epicBlockEvents(epicId))) {
    if (e.action === 'retry') undone++;
    else if (undone > 0) undone--;
    else return e;
  }
  return undefined;
}

/** The block a retry lifts, which must be agent_failed or plan_drift: where it came from and the reason it replaced. */
function* retryableBlock(
  port: StorePort,
  epic: EpicRow,
): Op<{ from: EpicStatus; previousReason: string | null } | undefined> {
  if (epic.status !== 'blocked') return undefined;
  const block = yield* currentBlock(port, epic.id);
  if (!block || !(RETRYABLE_BLOCKS as readonly string[]).includes(block.action))
    throw refuse.notRetryable(epic.id, epic.status_reason);
  return {
    from: block.from_status,
    previousReason: (block.data?.previous_reason as string | null | undefined) ?? null,
  };
}

/** A person's approval to merge (required for critical epics before Lovejoy merges). */
export function* approveMerge(port: StorePort, epicId: string, actor: Actor): Op<EpicRow> {
  const epic = yield* requireEpic(port, epicId, true);
  if (epic.status !== 'verified' && epic.status !== 'implemented') throw refuse.mergeNotReady(epicId, epic.status);
  yield* call(port.approveMergeRow(epicId, actor.agent ?? actor.worktree));
  yield* call(
    port.writeEvent(actor, { entity: 'epic', action: 'approve_merge', epicId, reason: 'a person approved the merge' }),
  );
  return yield* requireEpic(port, epicId);
}

/** Who writes the epic's plans from now on; only before a plan is approved (a re-plan keeps the epic's planner). */
export function* setPlanner(port: StorePort, epicId: string, planner: Planner, actor: Actor): Op<EpicRow> {
  const epic = yield* requireEpic(port, epicId, true);
  if (epic.status !== 'planned' && epic.status !== 'blocked') throw refuse.plannerFixed(epicId, epic.status);
  if (epic.planner === planner) return epic;
  yield* call(port.setPlannerRow(epicId, planner));
  yield* call(
    port.writeEvent(actor, {
      entity: 'epic',
      action: 'planner',
      epicId,
      reason: planner === PLANNING_ROLE ? 'Lisa writes its plan' : 'a person writes its plan',
      data: { planner, was: epic.planner },
    }),
  );
  return yield* requireEpic(port, epicId);
}

/**
 * Counts one more build iteration for a retry that stays in_progress (a failed verification sent
 * back to Ralph); past the budget the epic is blocked instead. Returns whether Ralph may run.
 */
export function* countIteration(port: StorePort, epicId: string, actor: Actor, reason: string): Op<boolean> {
  const epic = yield* requireEpic(port, epicId, true);
  if (epic.iteration + 1 > buildBudget(epic)) {
    yield* applyEpicEvent(
      port,
      epicId,
      BUDGET_BLOCK,
      actor,
      budgetBlockReason(epic.iteration, buildBudget(epic), reason),
    );
    return false;
  }
  yield* call(port.bumpIteration(epicId));
  yield* call(
    port.writeEvent(actor, {
      entity: 'epic',
      action: 'iteration',
      epicId,
      reason,
      data: { iteration: epic.iteration + 1, budget: buildBudget(epic) },
    }),
  );
  return true;
}

/** Records the pull request a verified epic now waits on (PR mode). */
export function* setPullRequest(
  port: StorePort,
  epicId: string,
  url: string,
  actor: Actor,
  data: Record<string, unknown>,
): Op<void> {
  yield* requireEpic(port, epicId, true);
  yield* call(port.setPullRequestRow(epicId, url));
  yield* call(
    port.writeEvent(actor, {
      entity: 'epic',
      action: 'pr_opened',
      epicId,
      reason: `pull request ${url}`,
      data: { url, ...data },
    }),
  );
}

/** Records what the scheduler did to an epic's worktree (tidied it, set it up) in the event log. */
export function* recordWorktreeEvent(
  port: StorePort,
  epicId: string,
  actor: Actor,
  action: string,
  reason: string,
  data?: Record<string, unknown>,
): Op<void> {
  yield* call(port.writeEvent(actor, { entity: 'worktree', action, epicId, reason, data }));
}

/** What blocked an epic that a person can retry: the event's record (role, failures, the last run and its output), or null. */
export function* blockDetails(port: StorePort, epicId: string): Op<Record<string, unknown> | null> {
  const epic = yield* requireEpic(port, epicId);
  if (!isRetryable(epic)) return null;
  const last = yield* currentBlock(port, epic.id);
  if (!last) return null;
  const { next_role: _n, iteration: _i, budget: _b, previous_reason: _p, ...data } = last.data ?? {};
  return { event: last.action, at: last.at, ...data };
}
