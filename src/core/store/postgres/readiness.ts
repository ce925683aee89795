import { emptyPartition, place, stateLetter, type ReadinessPort, type StepPartition } from '../shared/readiness.ts';
import type { PgMethods } from './port.ts';
import type { Tx } from './session.ts';

/** Rewrites a plan's stored blockers and open-step count from scratch (after its structure changed). */
export async function recomputeReadiness(tx: Tx, plan: string): Promise<void> {
  await tx.q('UPDATE steps SET blockers = 0 WHERE repo_id = $1 AND plan_path = $2 AND blockers <> 0', [tx.repo, plan]);
  await tx.q(
    `UPDATE steps SET blockers = b.n FROM (
      SELECT coalesce(c.parent_anchor, c.anchor) AS top, count(*) AS n
      FROM step_deps d
      JOIN steps c ON c.repo_id = d.repo_id AND c.plan_path = d.plan_path AND c.anchor = d.step_anchor
      JOIN steps dep ON dep.repo_id = d.repo_id AND dep.plan_path = d.plan_path AND dep.anchor = d.depends_on
      WHERE d.repo_id = $1 AND d.plan_path = $2 AND dep.status <> 'completed'
        AND coalesce(dep.parent_anchor, dep.anchor) <> coalesce(c.parent_anchor, c.anchor)
      GROUP BY 1) AS b
    WHERE steps.repo_id = $1 AND steps.plan_path = $2 AND steps.anchor = b.top`,
    [tx.repo, plan],
  );
  await rebuildOpenCounts(tx, plan);
}

/** A plan's open-step counters (migration 5: one per shard of its top-level steps) counted again from its steps. */
export async function rebuildOpenCounts(tx: Tx, plan: string): Promise<void> {
  await tx.q('DELETE FROM plan_open WHERE repo_id = $1 AND plan_path = $2', [tx.repo, plan]);
  await tx.q(
    `INSERT INTO plan_open (repo_id, plan_path, shard, n)
    SELECT $1, $2, (hashtext(anchor) & 15)::smallint, count(*) FROM steps
    WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor IS NULL AND status <> 'completed' GROUP BY 3`,
    [tx.repo, plan],
  );
}

/** SQL for a plan's count of top-level steps not completed: the sum of its counters. `where` scopes plan_open to one plan. */
export function openStepsSql(where: string): string {
  return `(SELECT coalesce(sum(n), 0)::int FROM plan_open WHERE ${where})`;
}

/** Splits a plan's top-level steps by claimability at the transaction's time, in step order: one query. */
export async function partitionSteps(tx: Tx, plan: string): Promise<StepPartition> {
  const rows = await tx.q<{ anchor: string; status: string; expired: boolean; blockers: number }>(
    `SELECT anchor, status, blockers,
      coalesce(status IN ('claimed', 'in_progress') AND lease_expires_at < $3, false) AS expired
    FROM steps WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor IS NULL ORDER BY step_index`,
    [tx.repo, plan, tx.now],
  );
  const p = emptyPartition();
  for (const r of rows) place(p, r.anchor, stateLetter(r.status, r.expired, r.blockers));
  return p;
}

/** How many top-level steps are not yet completed. */
export async function countRemaining(tx: Tx, plan: string): Promise<number> {
  return Number(
    (await tx.q<{ n: number }>(`SELECT ${openStepsSql('repo_id = $1 AND plan_path = $2')} AS n`, [tx.repo, plan]))[0]
      ?.n ?? 0,
  );
}

/** Readiness (shared/readiness.ts), from the blockers and per-shard open-step counters the triggers keep (migrations 2 and 5). */
export const readinessPg: PgMethods<ReadinessPort> = {
  partitionSteps(plan) {
    return partitionSteps(this.tx, plan);
  },
  countRemaining(plan) {
    return countRemaining(this.tx, plan);
  },
  recomputeReadiness(plan) {
    return recomputeReadiness(this.tx, plan);
  },
};
