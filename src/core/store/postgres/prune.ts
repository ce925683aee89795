import type { PrunePort } from '../shared/prune.ts';
import type { PgMethods } from './port.ts';

/** Pruning plans (shared/prune.ts). The server enforces every foreign key, so no row is ever left dangling. */
export const prunePg: PgMethods<PrunePort> = {
  async planPaths() {
    return (
      await this.tx.q<{ plan_path: string }>('SELECT plan_path FROM plans WHERE repo_id = $1 ORDER BY plan_path', [
        this.tx.repo,
      ])
    ).map((r) => r.plan_path);
  },
  async planStepCounts(plan) {
    return (
      (
        await this.tx.q<{ steps: number; completed: number }>(
          `SELECT count(*)::int AS steps, count(*) FILTER (WHERE status = 'completed')::int AS completed
      FROM steps WHERE repo_id = $1 AND plan_path = $2`,
          [this.tx.repo, plan],
        )
      )[0] ?? { steps: 0, completed: 0 }
    );
  },
  async deletePlan(plan) {
    await this.tx.q('DELETE FROM plan_open WHERE repo_id = $1 AND plan_path = $2', [this.tx.repo, plan]);
    await this.tx.q('DELETE FROM plans WHERE repo_id = $1 AND plan_path = $2', [this.tx.repo, plan]);
  },
  countDanglingRows() {
    return 0;
  },
  removeDanglingRows() {
    return 0;
  },
};
