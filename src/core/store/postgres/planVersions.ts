import { planHash } from '../../plan/hash.ts';
import type { PlanVersionRow, ProposedPlan, ProposeResult } from '../epicTypes.ts';
import type { PlanVersionsPort } from '../shared/planVersions.ts';
import type { Actor } from '../types.ts';
import type { PgMethods } from './port.ts';
import { opEvent } from './rows.ts';
import type { Tx } from './session.ts';

const VERSION_COLUMNS = `id, epic_id, plan_path, version, plan_hash, structure, body, status, feedback, proposed_by, proposed_agent, decided_by, created_at, decided_at`;

/** Plan versions (shared/planVersions.ts); a proposal or decision runs under its epic's row lock. */
export const planVersionsPg: PgMethods<PlanVersionsPort> = {
  async versionedPlanOwner(plan) {
    return (
      await this.tx.q<{ epic_id: string }>(
        'SELECT epic_id FROM plan_versions WHERE repo_id = $1 AND plan_path = $2 LIMIT 1',
        [this.tx.repo, plan],
      )
    )[0]?.epic_id;
  },
  async latestVersion(epicId) {
    return (
      await this.tx.q<PlanVersionRow>(
        `SELECT ${VERSION_COLUMNS} FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 ORDER BY version DESC LIMIT 1`,
        [this.tx.repo, epicId],
      )
    )[0];
  },
  listVersions(epicId) {
    return this.tx.q<PlanVersionRow>(
      `SELECT ${VERSION_COLUMNS} FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 ORDER BY version`,
      [this.tx.repo, epicId],
    );
  },
  async proposedVersion(epicId, version) {
    return (
      version !== undefined
        ? await this.tx.q<PlanVersionRow>(
            `SELECT ${VERSION_COLUMNS} FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 AND version = $3`,
            [this.tx.repo, epicId, version],
          )
        : await this.tx.q<PlanVersionRow>(
            `SELECT ${VERSION_COLUMNS} FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 AND status = 'proposed' ORDER BY version DESC LIMIT 1`,
            [this.tx.repo, epicId],
          )
    )[0];
  },
  async approvedVersion(epicId) {
    return (
      await this.tx.q<PlanVersionRow>(
        `SELECT ${VERSION_COLUMNS} FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 AND status = 'approved' ORDER BY version DESC LIMIT 1`,
        [this.tx.repo, epicId],
      )
    )[0];
  },
  async supersedeProposals(epicId) {
    await this.tx.q(
      `UPDATE plan_versions SET status = 'superseded', decided_at = $3 WHERE repo_id = $1 AND epic_id = $2 AND status = 'proposed'`,
      [this.tx.repo, epicId, this.now],
    );
  },
  async insertVersion(epicId, plan, version, hash, structure, actor) {
    await this.tx.q(
      `INSERT INTO plan_versions (repo_id, epic_id, plan_path, version, plan_hash, structure, body, status, proposed_by, proposed_agent, created_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, 'proposed', $8, $9, $10)`,
      [this.tx.repo, epicId, plan.planPath, version, hash, structure, plan.body, actor.worktree, actor.agent, this.now],
    );
  },
  async bumpPlanIteration(epicId) {
    await this.tx.q(
      'UPDATE epics SET plan_iteration = plan_iteration + 1, updated_at = $3 WHERE repo_id = $1 AND id = $2',
      [this.tx.repo, epicId, this.now],
    );
  },
  async decideVersion(id, status, by, feedback) {
    await this.tx.q(
      'UPDATE plan_versions SET status = $2, feedback = coalesce($3, feedback), decided_by = $4, decided_at = $5 WHERE id = $1',
      [id, status, feedback, by, this.now],
    );
  },
  async livePlanPath(epicId) {
    return (
      (
        await this.tx.q<{ plan_path: string }>(
          'SELECT plan_path FROM plans WHERE repo_id = $1 AND epic_id = $2 ORDER BY updated_at DESC, plan_path LIMIT 1',
          [this.tx.repo, epicId],
        )
      )[0]?.plan_path ?? null
    );
  },
  async openStepAnchors(plan) {
    return (
      await this.tx.q<{ anchor: string }>(
        `SELECT anchor FROM steps WHERE repo_id = $1 AND plan_path = $2 AND status <> 'completed' ORDER BY step_index`,
        [this.tx.repo, plan],
      )
    ).map((r) => r.anchor);
  },
};

/**
 * The version operation `op` proposed for `epicId` from this plan file, with these contents, for this
 * holder, rebuilt from its event; null when it committed none (its reply was lost: docs/postgres-design.md,
 * "Failures, retries, idempotence"). Its planning iteration is the epic's count of versions up to it (each proposal adds one).
 */
export async function findProposal(
  tx: Tx,
  op: string,
  epicId: string,
  plan: ProposedPlan,
  actor: Actor,
): Promise<ProposeResult | null> {
  const hash = planHash(plan.plan());
  const row = await opEvent(tx, op, actor, 'plan_version', 'propose', {
    epic_id: epicId,
    plan_path: plan.planPath,
    "data->>'plan_hash'": hash,
  });
  if (!row) return null;
  const version = Number(row.data.version);
  const iteration = Number(
    (
      await tx.q<{ n: number }>(
        'SELECT count(*)::int AS n FROM plan_versions WHERE repo_id = $1 AND epic_id = $2 AND version <= $3',
        [tx.repo, epicId, version],
      )
    )[0]?.n,
  );
  const changes = Array.isArray(row.data.changes) ? row.data.changes.map(String) : [];
  return {
    proposed: true,
    epic_id: epicId,
    plan_path: plan.planPath,
    version,
    plan_hash: hash,
    changes_since_previous: changes,
    plan_iteration: iteration,
  };
}
