import { RefusedError, UsageError } from '../errors.ts';
import { writeEvent } from '../store/rows.ts';
import type { Database } from '../store/sqlite.ts';
import type { Actor } from '../store/types.ts';
import { COMPLEXITY_POLICY, detectComplexity, type Complexity } from './complexity.ts';
import { newEpicId, type Priority } from './ids.ts';
import { transition, type EpicEvent, type EpicStatus, type Role } from './transitions.ts';

export interface EpicRow {
  id: string;
  title: string;
  brief: string;
  priority: Priority;
  complexity: Complexity;
  complexity_source: 'detected' | 'override';
  status: EpicStatus;
  status_reason: string | null;
  iteration: number;
  plan_iteration: number;
  max_iterations: number | null;
  merge_approved_by: string | null;
  merge_approved_at: string | null;
  worktree_path: string | null;
  branch: string | null;
  created_at: string;
  updated_at: string;
}

export interface NewEpic {
  readonly title: string;
  readonly brief: string;
  readonly priority: Priority;
  readonly complexity?: Complexity;
  readonly maxIterations?: number;
}

/** Creates an epic in `planned` with a short collision-safe id and a detected (or given) complexity. */
export function createEpic(db: Database, now: string, input: NewEpic, actor: Actor): EpicRow {
  if (input.title.trim() === '') throw new UsageError('missing_argument', 'an epic needs a non-empty title');
  const exists = db.prepare('SELECT 1 FROM epics WHERE id = ?').pluck();
  const id = newEpicId((candidate) => exists.get(candidate) !== undefined);
  const complexity = input.complexity ?? detectComplexity(input.title, input.brief);
  db.prepare(`INSERT INTO epics (id, title, brief, priority, complexity, complexity_source, status, max_iterations, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, 'planned', ?, ?, ?)`)
    .run(id, input.title.trim(), input.brief, input.priority, complexity, input.complexity ? 'override' : 'detected', input.maxIterations ?? null, now, now);
  writeEvent(db, now, actor, { entity: 'epic', action: 'create', epicId: id, to: 'planned', data: { title: input.title.trim(), complexity, priority: input.priority } });
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

/** The build-iteration budget: the explicit override, else the complexity policy's. */
export function buildBudget(epic: EpicRow): number {
  return epic.max_iterations ?? COMPLEXITY_POLICY[epic.complexity].buildIterations;
}

export interface TransitionOutcome {
  readonly epic_id: string;
  readonly event: EpicEvent;
  readonly from: EpicStatus;
  readonly to: EpicStatus;
  readonly next_role: Role | null;
  readonly iteration: number;
  readonly reason: string | null;
}

/**
 * The one way an epic's status changes: checks the SPEC §4 table, counts build iterations on each
 * entry to in_progress and blocks the epic when the budget is spent. Writes an event per change.
 */
export function applyEpicEvent(db: Database, now: string, epicId: string, event: EpicEvent, actor: Actor, reason: string | null = null): TransitionOutcome {
  const epic = getEpic(db, epicId);
  const step = transition(epic.status, event);
  let to = step.to;
  let nextRole = step.nextRole;
  let why = reason;
  // A new plan after a block is a fresh attempt: its build iterations count from zero.
  let iteration = event === 'new_plan_approved' ? 0 : epic.iteration;
  if (to === 'in_progress') {
    iteration += 1;
    if (iteration > buildBudget(epic)) {
      const blocked = transition('in_progress', 'iteration_budget_exhausted');
      to = blocked.to;
      nextRole = blocked.nextRole;
      why = 'iteration_budget_exhausted';
      iteration = epic.iteration;
    }
  }
  db.prepare('UPDATE epics SET status = ?, status_reason = ?, iteration = ?, updated_at = ? WHERE id = ? AND status = ?')
    .run(to, why, iteration, now, epicId, epic.status);
  writeEvent(db, now, actor, {
    entity: 'epic', action: event, epicId, from: epic.status, to, reason: why,
    data: { next_role: nextRole, iteration, budget: buildBudget(epic) },
  });
  return { epic_id: epicId, event, from: epic.status, to, next_role: nextRole, iteration, reason: why };
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

/**
 * Counts one more build iteration for a retry that stays in_progress (a failed verification sent
 * back to Ralph); past the budget the epic is blocked instead. Returns whether Ralph may run.
 */
export function countIteration(db: Database, now: string, epicId: string, actor: Actor, reason: string): boolean {
  const epic = getEpic(db, epicId);
  if (epic.iteration + 1 > buildBudget(epic)) {
    applyEpicEvent(db, now, epicId, 'iteration_budget_exhausted', actor, `iteration_budget_exhausted: ${reason}`);
    return false;
  }
  db.prepare('UPDATE epics SET iteration = iteration + 1, updated_at = ? WHERE id = ?').run(now, epicId);
  writeEvent(db, now, actor, { entity: 'epic', action: 'iteration', epicId, reason, data: { iteration: epic.iteration + 1, budget: buildBudget(epic) } });
  return true;
}

/** Records where the epic's worktree lives. */
export function setEpicWorktree(db: Database, now: string, epicId: string, path: string, branch: string): void {
  db.prepare('UPDATE epics SET worktree_path = ?, branch = ?, updated_at = ? WHERE id = ?').run(path, branch, now, epicId);
}
