import { BUDGET_BLOCK, budgetBlockReason } from '../../epics/budget.ts';
import { buildBudget, detectComplexity } from '../../epics/complexity.ts';
import { newEpicId } from '../../epics/ids.ts';
import { nextStatus } from '../../epics/nextStatus.ts';
import { isRetryable, RETRYABLE_BLOCKS, type EpicEvent, type EpicStatus } from '../../epics/transitions.ts';
import { RefusedError, UsageError } from '../../errors.ts';
import type { EpicRow, NewEpic, Planner, TransitionOutcome } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { recordDebt, resolveDebt } from './debt.ts';
import { opEvent, writeEvent } from './rows.ts';
import type { Tx } from './session.ts';

const EPIC_COLUMNS = `id, title, brief, priority, complexity, complexity_source, status, status_reason, iteration, plan_iteration, max_iterations,
  merge_approved_by, merge_approved_at, worktree_path, branch, created_at, updated_at, pr_url, pr_checked_at, planner`;

/** Creates an epic in `planned` with a short id unique in this repository (a taken id is drawn again, longer). */
export async function createEpic(tx: Tx, input: NewEpic, actor: Actor): Promise<EpicRow> {
  if (input.title.trim() === '') throw new UsageError('missing_argument', 'an epic needs a non-empty title');
  const complexity = input.complexity ?? detectComplexity(input.title, input.brief);
  const taken = new Set<string>();
  for (;;) {
    const id = newEpicId((candidate) => taken.has(candidate));
    const inserted = await tx.q(`INSERT INTO epics (repo_id, id, title, brief, priority, complexity, complexity_source, status, max_iterations, created_at, updated_at, planner)
      VALUES ($1, $2, $3, $4, $5, $6, $7, 'planned', $8, $9, $9, $10) ON CONFLICT DO NOTHING RETURNING id`,
    [tx.repo, id, input.title.trim(), input.brief, input.priority, complexity, input.complexity ? 'override' : 'detected', input.maxIterations ?? null, tx.now, input.planner ?? 'lisa']);
    if (inserted.length === 0) {
      taken.add(id);
      continue;
    }
    await writeEvent(tx, actor, { entity: 'epic', action: 'create', epicId: id, to: 'planned', data: { title: input.title.trim(), complexity, priority: input.priority, planner: input.planner ?? 'lisa' } });
    return getEpic(tx, id);
  }
}

/**
 * The epic operation `op` created for this holder with this title, as it is now; null when it committed
 * none (its reply was lost: docs/postgres.md, "Failures, retries, idempotence"). An epic of another title is not this one.
 */
export async function findEpic(tx: Tx, op: string, input: NewEpic, actor: Actor): Promise<EpicRow | null> {
  const row = await opEvent(tx, op, actor, 'epic', 'create', { "data->>'title'": input.title.trim() });
  return row?.epic_id ? ((await tx.q<EpicRow>(`SELECT ${EPIC_COLUMNS} FROM epics WHERE repo_id = $1 AND id = $2`, [tx.repo, row.epic_id]))[0] ?? null) : null;
}

/** The epic's row; `lock` takes it FOR UPDATE (every change of its status reads it under that lock). */
export async function getEpic(tx: Tx, id: string, lock = false): Promise<EpicRow> {
  const row = (await tx.q<EpicRow>(`SELECT ${EPIC_COLUMNS} FROM epics WHERE repo_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [tx.repo, id]))[0];
  if (!row) throw new UsageError('unknown_epic', `no epic '${id}' (see 'springfield epic list')`);
  return row;
}

export function listEpics(tx: Tx, status?: EpicStatus): Promise<EpicRow[]> {
  return status
    ? tx.q<EpicRow>(`SELECT ${EPIC_COLUMNS} FROM epics WHERE repo_id = $1 AND status = $2 ORDER BY priority, created_at, id`, [tx.repo, status])
    : tx.q<EpicRow>(`SELECT ${EPIC_COLUMNS} FROM epics WHERE repo_id = $1 ORDER BY CASE status WHEN 'done' THEN 1 ELSE 0 END, priority, created_at, id`, [tx.repo]);
}

/**
 * The one way an epic's status changes (src/core/epics/transitions.ts), as on SQLite: the epic row is
 * locked first, build iterations counted on each entry to in_progress, the budget enforced.
 */
export async function applyEpicEvent(tx: Tx, epicId: string, event: EpicEvent, actor: Actor, reason: string | null = null, data: Record<string, unknown> = {}): Promise<TransitionOutcome> {
  const epic = await getEpic(tx, epicId, true);
  const block = event === 'retry' ? await retryableBlock(tx, epic) : undefined;
  const { to, nextRole, why, iteration } = nextStatus(epic, event, reason, block?.from);
  const statusReason = block ? block.previousReason : why;
  await tx.q('UPDATE epics SET status = $3, status_reason = $4, iteration = $5, updated_at = $6 WHERE repo_id = $1 AND id = $2 AND status = $7',
    [tx.repo, epicId, to, statusReason, iteration, tx.now, epic.status]);
  // Setting an epic aside is debt until a person resumes it (docs/lifecycle.md).
  if (to === 'deferred') await recordDebt(tx, epicId, event, epic.status, why ?? event, actor);
  if (epic.status === 'deferred' && to !== 'deferred') await resolveDebt(tx, epicId, why ?? event);
  await writeEvent(tx, actor, {
    entity: 'epic', action: event, epicId, from: epic.status, to, reason: why,
    data: { next_role: nextRole, iteration, budget: buildBudget(epic), ...(to === 'blocked' ? { previous_reason: epic.status_reason } : {}), ...data },
  });
  return { epic_id: epicId, event, from: epic.status, to, next_role: nextRole, iteration, reason: why };
}

interface BlockEvent {
  readonly action: string;
  readonly at: string;
  readonly from_status: EpicStatus;
  readonly data: Record<string, unknown> | null;
}

/** The block an epic is in now: the newest move to blocked that no retry has undone. */
async function currentBlock(tx: Tx, epicId: string): Promise<BlockEvent | undefined> {
  const events = await tx.q<BlockEvent>(`SELECT action, at, from_status, data FROM events WHERE repo_id = $1 AND epic_id = $2 AND entity = 'epic'
    AND (to_status = 'blocked' OR action = 'retry') ORDER BY id DESC`, [tx.repo, epicId]);
  let undone = 0;
  for (const e of events) {
    if (e.action === 'retry') undone++;
    else if (undone > 0) undone--;
    else return e;
  }
  return undefined;
}

async function retryableBlock(tx: Tx, epic: EpicRow): Promise<{ from: EpicStatus; previousReason: string | null } | undefined> {
  if (epic.status !== 'blocked') return undefined;
  const block = await currentBlock(tx, epic.id);
  if (!block || !(RETRYABLE_BLOCKS as readonly string[]).includes(block.action)) {
    throw new RefusedError('not_retryable', `${epic.id} is blocked by ${epic.status_reason ?? 'a review signal'}, not by a failing agent or a drifted plan; re-plan it (propose and approve a new plan) or defer it`);
  }
  return { from: block.from_status, previousReason: (block.data?.previous_reason as string | null | undefined) ?? null };
}

/** A person's approval to merge (required for critical epics before the merge). */
export async function approveMerge(tx: Tx, epicId: string, actor: Actor): Promise<EpicRow> {
  const epic = await getEpic(tx, epicId, true);
  if (epic.status !== 'verified' && epic.status !== 'implemented') {
    throw new RefusedError('invalid_transition', `cannot approve the merge of ${epicId}: it is ${epic.status} (approve once it is implemented or verified)`);
  }
  await tx.q('UPDATE epics SET merge_approved_by = $3, merge_approved_at = $4, updated_at = $4 WHERE repo_id = $1 AND id = $2', [tx.repo, epicId, actor.agent ?? actor.worktree, tx.now]);
  await writeEvent(tx, actor, { entity: 'epic', action: 'approve_merge', epicId, reason: 'a person approved the merge' });
  return getEpic(tx, epicId);
}

/** Who writes the epic's plans from now on; only before a plan is approved (a re-plan keeps the epic's planner). */
export async function setPlanner(tx: Tx, epicId: string, planner: Planner, actor: Actor): Promise<EpicRow> {
  const epic = await getEpic(tx, epicId, true);
  if (epic.status !== 'planned' && epic.status !== 'blocked') {
    throw new RefusedError('invalid_transition', `cannot change who plans ${epicId}: it is ${epic.status} (only a planned or blocked epic takes a new plan)`);
  }
  if (epic.planner === planner) return epic;
  await tx.q('UPDATE epics SET planner = $3, updated_at = $4 WHERE repo_id = $1 AND id = $2', [tx.repo, epicId, planner, tx.now]);
  await writeEvent(tx, actor, { entity: 'epic', action: 'planner', epicId, reason: planner === 'lisa' ? 'Lisa writes its plan' : 'a person writes its plan', data: { planner, was: epic.planner } });
  return getEpic(tx, epicId);
}

/** One more build iteration for a retry that stays in progress; past the budget the epic is blocked instead. */
export async function countIteration(tx: Tx, epicId: string, actor: Actor, reason: string): Promise<boolean> {
  const epic = await getEpic(tx, epicId, true);
  if (epic.iteration + 1 > buildBudget(epic)) {
    await applyEpicEvent(tx, epicId, BUDGET_BLOCK, actor, budgetBlockReason(epic.iteration, buildBudget(epic), reason));
    return false;
  }
  await tx.q('UPDATE epics SET iteration = iteration + 1, updated_at = $3 WHERE repo_id = $1 AND id = $2', [tx.repo, epicId, tx.now]);
  await writeEvent(tx, actor, { entity: 'epic', action: 'iteration', epicId, reason, data: { iteration: epic.iteration + 1, budget: buildBudget(epic) } });
  return true;
}

/** What blocked an epic that a person can retry: the event's record, or null. */
export async function blockDetails(tx: Tx, epicId: string): Promise<Record<string, unknown> | null> {
  const epic = await getEpic(tx, epicId);
  if (!isRetryable(epic)) return null;
  const last = await currentBlock(tx, epic.id);
  if (!last) return null;
  const { next_role: _n, iteration: _i, budget: _b, previous_reason: _p, ...data } = last.data ?? {};
  return { event: last.action, at: last.at, ...data };
}

/** Records where the epic's worktree lives, and on which host. */
export async function setEpicWorktree(tx: Tx, epicId: string, path: string, branch: string): Promise<void> {
  await tx.q('UPDATE epics SET worktree_path = $3, worktree_host = $4, branch = $5, updated_at = $6 WHERE repo_id = $1 AND id = $2', [tx.repo, epicId, path, tx.host, branch, tx.now]);
}
