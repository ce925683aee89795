import { BUDGET_BLOCK, budgetBlockReason } from '../../epics/budget.ts';
import { buildBudget, detectComplexity } from '../../epics/complexity.ts';
import { newEpicId } from '../../epics/ids.ts';
import { nextStatus } from '../../epics/nextStatus.ts';
import { isRetryable, RETRYABLE_BLOCKS, type EpicEvent, type EpicStatus } from '../../epics/transitions.ts';
import { RefusedError, UsageError } from '../../errors.ts';
import type { EpicRow, NewEpic, Planner, TransitionOutcome } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { recordDebt, resolveDebt } from './debt.ts';
import { writeEvent } from './rows.ts';
import type { Database } from './sqlite.ts';

/** Creates an epic in `planned` with a short collision-safe id and a detected (or given) complexity. */
export function createEpic(db: Database, now: string, input: NewEpic, actor: Actor): EpicRow {
  if (input.title.trim() === '') throw new UsageError('missing_argument', 'an epic needs a non-empty title');
  const exists = db.prepare('SELECT 1 FROM epics WHERE id = ?').pluck();
  const id = newEpicId((candidate) => exists.get(candidate) !== undefined);
  const complexity = input.complexity ?? detectComplexity(input.title, input.brief);
  const planner = input.planner ?? 'lisa';
  db.prepare(`INSERT INTO epics (id, title, brief, priority, complexity, complexity_source, status, max_iterations, created_at, updated_at, planner)
    VALUES (?, ?, ?, ?, ?, ?, 'planned', ?, ?, ?, ?)`)
    .run(id, input.title.trim(), input.brief, input.priority, complexity, input.complexity ? 'override' : 'detected', input.maxIterations ?? null, now, now, planner);
  writeEvent(db, now, actor, { entity: 'epic', action: 'create', epicId: id, to: 'planned', data: { title: input.title.trim(), complexity, priority: input.priority, planner } });
  return getEpic(db, id);
}

export function findEpic(db: Database, id: string): EpicRow | undefined {
  return db.prepare('SELECT * FROM epics WHERE id = ?').get(id) as EpicRow | undefined;
}

export function getEpic(db: Database, id: string): EpicRow {
  const row = findEpic(db, id);
  if (!row) throw new UsageError('unknown_epic', `no epic '${id}' (see 'springfield epic list')`);
  return row;
}

export function listEpics(db: Database, status?: EpicStatus): EpicRow[] {
  return (status
    ? db.prepare(`SELECT * FROM epics WHERE status = ? ORDER BY priority, created_at`).all(status)
    : db.prepare(`SELECT * FROM epics ORDER BY CASE status WHEN 'done' THEN 1 ELSE 0 END, priority, created_at`).all()) as EpicRow[];
}

/**
 * The one way an epic's status changes: checks the transition table (docs/state-machine.md), counts build iterations on each
 * entry to in_progress (a retry is not a new iteration) and blocks the epic when the budget is
 * spent. Writes an event per change; `data` adds to its record (a block also keeps the reason it
 * replaced, which a retry restores).
 */
export function applyEpicEvent(db: Database, now: string, epicId: string, event: EpicEvent, actor: Actor, reason: string | null = null, data: Record<string, unknown> = {}): TransitionOutcome {
  const epic = getEpic(db, epicId);
  const block = event === 'retry' ? retryableBlock(db, epic) : undefined;
  const { to, nextRole, why, iteration } = nextStatus(epic, event, reason, block?.from);
  const statusReason = block ? block.previousReason : why;
  db.prepare('UPDATE epics SET status = ?, status_reason = ?, iteration = ?, updated_at = ? WHERE id = ? AND status = ?')
    .run(to, statusReason, iteration, now, epicId, epic.status);
  // Setting an epic aside is debt until a person resumes it (docs/lifecycle.md).
  if (to === 'deferred') recordDebt(db, now, epicId, event, epic.status, why ?? event, actor);
  if (epic.status === 'deferred' && to !== 'deferred') resolveDebt(db, now, epicId, why ?? event);
  writeEvent(db, now, actor, {
    entity: 'epic', action: event, epicId, from: epic.status, to, reason: why,
    data: { next_role: nextRole, iteration, budget: buildBudget(epic), ...(to === 'blocked' ? { previous_reason: epic.status_reason } : {}), ...data },
  });
  return { epic_id: epicId, event, from: epic.status, to, next_role: nextRole, iteration, reason: why };
}

interface BlockEvent {
  readonly action: string;
  readonly at: string;
  readonly from_status: EpicStatus;
  readonly data: string | null;
}

/** The block an epic is in now: the newest move to blocked that no retry has undone (blocks on blocks lift one at a time). */
function currentBlock(db: Database, epicId: string): BlockEvent | undefined {
  const events = db.prepare(`SELECT action, at, from_status, data FROM events WHERE epic_id = ? AND entity = 'epic' AND (to_status = 'blocked' OR action = 'retry') ORDER BY id DESC`)
    .iterate(epicId) as IterableIterator<BlockEvent>;
  let undone = 0;
  for (const e of events) {
    if (e.action === 'retry') undone++;
    else if (undone > 0) undone--;
    else return e;
  }
  return undefined;
}

/** The block a retry lifts, which must be agent_failed or plan_drift: where it came from and the reason it replaced. */
function retryableBlock(db: Database, epic: EpicRow): { from: EpicStatus; previousReason: string | null } | undefined {
  if (epic.status !== 'blocked') return undefined;
  const block = currentBlock(db, epic.id);
  if (!block || !(RETRYABLE_BLOCKS as readonly string[]).includes(block.action)) {
    throw new RefusedError('not_retryable', `${epic.id} is blocked by ${epic.status_reason ?? 'a review signal'}, not by a failing agent or a drifted plan; re-plan it (propose and approve a new plan) or defer it`);
  }
  const data = block.data ? JSON.parse(block.data) as { previous_reason?: string | null } : {};
  return { from: block.from_status, previousReason: data.previous_reason ?? null };
}

/** A person's approval to merge (required for critical epics before Lovejoy merges). */
export function approveMerge(db: Database, now: string, epicId: string, actor: Actor): EpicRow {
  const epic = getEpic(db, epicId);
  if (epic.status !== 'verified' && epic.status !== 'implemented') {
    throw new RefusedError('invalid_transition', `cannot approve the merge of ${epicId}: it is ${epic.status} (approve once it is implemented or verified)`);
  }
  db.prepare('UPDATE epics SET merge_approved_by = ?, merge_approved_at = ?, updated_at = ? WHERE id = ?').run(actor.agent ?? actor.worktree, now, now, epicId);
  writeEvent(db, now, actor, { entity: 'epic', action: 'approve_merge', epicId, reason: 'a person approved the merge' });
  return getEpic(db, epicId);
}

/** Who writes the epic's plans from now on; only before a plan is approved (a re-plan keeps the epic's planner). */
export function setPlanner(db: Database, now: string, epicId: string, planner: Planner, actor: Actor): EpicRow {
  const epic = getEpic(db, epicId);
  if (epic.status !== 'planned' && epic.status !== 'blocked') {
    throw new RefusedError('invalid_transition', `cannot change who plans ${epicId}: it is ${epic.status} (only a planned or blocked epic takes a new plan)`);
  }
  if (epic.planner === planner) return epic;
  db.prepare('UPDATE epics SET planner = ?, updated_at = ? WHERE id = ?').run(planner, now, epicId);
  writeEvent(db, now, actor, { entity: 'epic', action: 'planner', epicId, reason: planner === 'lisa' ? 'Lisa writes its plan' : 'a person writes its plan', data: { planner, was: epic.planner } });
  return getEpic(db, epicId);
}

/**
 * Counts one more build iteration for a retry that stays in_progress (a failed verification sent
 * back to Ralph); past the budget the epic is blocked instead. Returns whether Ralph may run.
 */
export function countIteration(db: Database, now: string, epicId: string, actor: Actor, reason: string): boolean {
  const epic = getEpic(db, epicId);
  if (epic.iteration + 1 > buildBudget(epic)) {
    applyEpicEvent(db, now, epicId, BUDGET_BLOCK, actor, budgetBlockReason(epic.iteration, buildBudget(epic), reason));
    return false;
  }
  db.prepare('UPDATE epics SET iteration = iteration + 1, updated_at = ? WHERE id = ?').run(now, epicId);
  writeEvent(db, now, actor, { entity: 'epic', action: 'iteration', epicId, reason, data: { iteration: epic.iteration + 1, budget: buildBudget(epic) } });
  return true;
}

/** Records the pull request a verified epic now waits on (PR mode). */
export function setPullRequest(db: Database, now: string, epicId: string, url: string, actor: Actor, data: Record<string, unknown>): void {
  db.prepare('UPDATE epics SET pr_url = ?, pr_checked_at = ?, updated_at = ? WHERE id = ?').run(url, now, now, epicId);
  writeEvent(db, now, actor, { entity: 'epic', action: 'pr_opened', epicId, reason: `pull request ${url}`, data: { url, ...data } });
}

/** Records that the pull request's state was asked (the rate limit counts from here). */
export function markPullRequestChecked(db: Database, now: string, epicId: string): void {
  db.prepare('UPDATE epics SET pr_checked_at = ? WHERE id = ?').run(now, epicId);
}

/** Records where the epic's worktree lives. */
export function setEpicWorktree(db: Database, now: string, epicId: string, path: string, branch: string): void {
  db.prepare('UPDATE epics SET worktree_path = ?, branch = ?, updated_at = ? WHERE id = ?').run(path, branch, now, epicId);
}

/** Records what the scheduler did to an epic's worktree (tidied it, set it up) in the event log. */
export function recordWorktreeEvent(db: Database, now: string, epicId: string, actor: Actor, action: string, reason: string, data?: Record<string, unknown>): void {
  writeEvent(db, now, actor, { entity: 'worktree', action, epicId, reason, data });
}

/** What blocked an epic that a person can retry: the event's record (role, failures, the last run and its output), or null. */
export function blockDetails(db: Database, epic: EpicRow): Record<string, unknown> | null {
  if (!isRetryable(epic)) return null;
  const last = currentBlock(db, epic.id);
  if (!last) return null;
  const { next_role: _n, iteration: _i, budget: _b, previous_reason: _p, ...data } = (last.data ? JSON.parse(last.data) : {}) as Record<string, unknown>;
  return { event: last.action, at: last.at, ...data };
}
