import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { PruneResult } from '../maintenanceTypes.ts';
import type { Actor } from '../types.ts';
import { findPlan, lockPlan, writeEvent } from './rows.ts';
import type { Tx } from './session.ts';

/**
 * Removes the repository's plans whose file is in none of `roots` (this clone's worktrees), with their
 * steps, dependencies, items and artifacts (the foreign keys cascade); events stay. The server enforces
 * every foreign key, so no row is ever left dangling (dangling_rows is 0).
 */
export async function prunePlans(tx: Tx, actor: Actor | null, roots: readonly string[], dryRun: boolean): Promise<PruneResult> {
  const all = roots.length === 0 ? [] : (await tx.q<{ plan_path: string }>('SELECT plan_path FROM plans WHERE repo_id = $1 ORDER BY plan_path', [tx.repo])).map((r) => r.plan_path);
  const orphans = all.filter((p) => !roots.some((root) => existsSync(join(root, p))));
  if (dryRun) return { pruned: orphans, dry_run: true, dangling_rows: 0 };
  for (const plan of orphans) {
    await lockPlan(tx, plan, true);
    const row = await findPlan(tx, plan);
    if (!row) continue;
    const counts = (await tx.q<{ steps: number; completed: number }>(`SELECT count(*)::int AS steps, count(*) FILTER (WHERE status = 'completed')::int AS completed
      FROM steps WHERE repo_id = $1 AND plan_path = $2`, [tx.repo, plan]))[0] ?? { steps: 0, completed: 0 };
    await tx.q('DELETE FROM plan_open WHERE repo_id = $1 AND plan_path = $2', [tx.repo, plan]);
    await tx.q('DELETE FROM plans WHERE repo_id = $1 AND plan_path = $2', [tx.repo, plan]);
    await writeEvent(tx, actor, {
      entity: 'plan', action: 'prune', planPath: plan, epicId: row.epic_id, from: row.status, to: null,
      reason: 'plan file is in no worktree', data: { steps: counts.steps, steps_completed: counts.completed, plan_hash: row.plan_hash },
    });
  }
  return { pruned: orphans, dry_run: false, dangling_rows: 0 };
}
