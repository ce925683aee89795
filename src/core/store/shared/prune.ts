import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { PruneResult } from '../maintenanceTypes.ts';
import type { Actor } from '../types.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';

export interface PrunePort {
  /** Every plan's path, sorted. */
  planPaths(): Io<string[]>;
  planStepCounts(planPath: string): Io<{ steps: number; completed: number }>;
  /** The plan with its steps, dependencies, items and artifacts (the foreign keys cascade); its events stay. */
  deletePlan(planPath: string): Io<void>;
  /** Rows of steps, deps, items or artifacts whose parent row is gone (SQLite: possible in a file written without foreign keys; PostgreSQL: never). */
  countDanglingRows(): Io<number>;
  /** Deletes those rows: how many. */
  removeDanglingRows(): Io<number>;
}

/**
 * Removes plans whose file is in none of `roots` (orphanedPlans), with their steps,
 * dependencies, items and artifacts, plus rows left dangling; events stay. With `dryRun`, says which.
 */
export function* prunePlans(
  port: StorePort,
  actor: Actor | null,
  roots: readonly string[],
  dryRun: boolean,
): Op<PruneResult> {
  const orphans = orphanedPlans(roots.length === 0 ? [] : yield* call(port.planPaths()), roots);
  if (dryRun) return { pruned: orphans, dry_run: true, dangling_rows: yield* call(port.countDanglingRows()) };
  for (const plan of orphans) {
    yield* call(port.lockPlan(plan, true));
    const row = yield* call(port.findPlan(plan));
    if (!row) continue;
    const counts = yield* call(port.planStepCounts(plan));
    yield* call(port.deletePlan(plan));
    yield* call(
      port.writeEvent(actor, {
        entity: 'plan',
        action: 'prune',
        planPath: plan,
        epicId: row.epic_id,
        from: row.status,
        to: null,
        reason: 'plan file is in no worktree',
        data: { steps: counts.steps, steps_completed: counts.completed, plan_hash: row.plan_hash },
      }),
    );
  }
  const removed = yield* call(port.removeDanglingRows());
  if (removed > 0)
    yield* call(
      port.writeEvent(actor, {
        entity: 'store',
        action: 'prune',
        reason: 'removed rows whose parent plan or step is gone',
        data: { dangling_rows: removed },
      }),
    );
  return { pruned: orphans, dry_run: false, dangling_rows: removed };
}

/**
 * The plans whose file exists in none of `roots` (every worktree's root: a plan still present in some
 * linked worktree, say initialised on an epic's branch before it reached main, is not orphaned).
 */
export function orphanedPlans(plans: readonly string[], roots: readonly string[]): string[] {
  return plans.filter((p) => !roots.some((root) => existsSync(join(root, p))));
}
