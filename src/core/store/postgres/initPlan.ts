import type { InitPlanPort, KeptItem } from '../shared/initPlan.ts';
import { STEP_COLUMNS, type PgStepRow } from './rows.ts';
import type { PgMethods } from './port.ts';

/** Initialising a plan (shared/initPlan.ts) under the plan's exclusive lock: set-based, so a 10,000-step plan is a handful of round trips. */
export const initPlanPg: PgMethods<InitPlanPort> = {
  async setPlanStatus(plan, status) {
    await this.tx.q('UPDATE plans SET status = $3, updated_at = $4 WHERE repo_id = $1 AND plan_path = $2', [
      this.tx.repo,
      plan,
      status,
      this.now,
    ]);
  },
  async linkPlanToEpic(plan, epicId) {
    await this.tx.q('UPDATE plans SET epic_id = $3, updated_at = $4 WHERE repo_id = $1 AND plan_path = $2', [
      this.tx.repo,
      plan,
      epicId,
      this.now,
    ]);
  },
  async writePlan(source, hash, structure, epicId, existing) {
    if (existing) {
      await this.tx.q(
        'UPDATE plans SET plan_hash = $3, structure = $4, title = $5, epic_id = coalesce($6, epic_id), updated_at = $7 WHERE repo_id = $1 AND plan_path = $2',
        [this.tx.repo, source.planPath, hash, structure, source.plan().title, epicId, this.now],
      );
    } else {
      await this.tx.q(
        `INSERT INTO plans (repo_id, plan_path, epic_id, plan_hash, structure, title, status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 'active', $7, $7)`,
        [this.tx.repo, source.planPath, epicId, hash, structure, source.plan().title, this.now],
      );
    }
  },
  async oldPlanRows(plan) {
    const P = [this.tx.repo, plan];
    return {
      steps: await this.tx.q<PgStepRow>(`SELECT ${STEP_COLUMNS} FROM steps WHERE repo_id = $1 AND plan_path = $2`, P),
      items: await this.tx.q<KeptItem>(
        'SELECT step_anchor, kind, text, status, updated_at, updated_by FROM checklist_items WHERE repo_id = $1 AND plan_path = $2 ORDER BY id',
        P,
      ),
    };
  },
  async clearPlanLinks(plan) {
    const P = [this.tx.repo, plan];
    await this.tx.q('DELETE FROM checklist_items WHERE repo_id = $1 AND plan_path = $2', P);
    await this.tx.q('DELETE FROM step_deps WHERE repo_id = $1 AND plan_path = $2', P);
    await this.tx.q(
      'UPDATE steps SET parent_anchor = NULL WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor IS NOT NULL',
      P,
    );
  },
  async removeSteps(plan, anchors) {
    await this.tx.q('DELETE FROM steps WHERE repo_id = $1 AND plan_path = $2 AND anchor = ANY($3::text[])', [
      this.tx.repo,
      plan,
      anchors,
    ]);
  },
  async insertSteps(plan, steps, files) {
    await this.tx.q(
      `INSERT INTO steps (repo_id, plan_path, anchor, step_index, number, title, status, files)
      SELECT $1, $2, a, i, n, t, 'pending', f FROM unnest($3::text[], $4::int[], $5::text[], $6::text[], $7::text[]) AS u(a, i, n, t, f)`,
      [
        this.tx.repo,
        plan,
        steps.map((s) => s.anchor),
        steps.map((s) => s.stepIndex),
        steps.map((s) => s.number),
        steps.map((s) => s.title),
        steps.map((s) => files.get(s.anchor) ?? null),
      ],
    );
  },
  async refreshSteps(plan, steps, files) {
    await this.tx.q(
      `UPDATE steps SET step_index = u.i, number = u.n, title = u.t, files = u.f
      FROM unnest($3::text[], $4::int[], $5::text[], $6::text[], $7::text[]) AS u(a, i, n, t, f)
      WHERE steps.repo_id = $1 AND steps.plan_path = $2 AND steps.anchor = u.a`,
      [
        this.tx.repo,
        plan,
        steps.map((s) => s.anchor),
        steps.map((s) => s.stepIndex),
        steps.map((s) => s.number),
        steps.map((s) => s.title),
        steps.map((s) => files.get(s.anchor) ?? null),
      ],
    );
  },
  async releaseSteps(plan, anchors) {
    await this.tx.q(
      `UPDATE steps SET status = 'pending', claimed_host = NULL, claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1,
      claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL, completed_at = NULL, completed_host = NULL, completed_by = NULL,
      completed_token = NULL, commit_hash = NULL, complete_reason = NULL WHERE repo_id = $1 AND plan_path = $2 AND anchor = ANY($3::text[])`,
      [this.tx.repo, plan, anchors],
    );
  },
  async setParents(plan, children) {
    await this.tx.q(
      `UPDATE steps SET parent_anchor = u.p FROM unnest($3::text[], $4::text[]) AS u(a, p)
      WHERE steps.repo_id = $1 AND steps.plan_path = $2 AND steps.anchor = u.a`,
      [this.tx.repo, plan, children.map((s) => s.anchor), children.map((s) => s.parentAnchor)],
    );
  },
  async insertDeps(plan, deps) {
    await this.tx.q(
      'INSERT INTO step_deps (repo_id, plan_path, step_anchor, depends_on) SELECT $1, $2, a, d FROM unnest($3::text[], $4::text[]) AS u(a, d)',
      [this.tx.repo, plan, deps.map((d) => d[0]), deps.map((d) => d[1])],
    );
  },
  async insertItems(plan, rows) {
    await this.tx.q(
      `INSERT INTO checklist_items (repo_id, plan_path, step_anchor, kind, ordinal, text, status, updated_at, updated_by)
      SELECT $1, $2, a, k, o, t, s, at, b FROM unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::timestamptz[], $9::text[]) WITH ORDINALITY AS u(a, k, o, t, s, at, b, n) ORDER BY n`,
      [
        this.tx.repo,
        plan,
        rows.map((r) => r.anchor),
        rows.map((r) => r.kind),
        rows.map((r) => r.ordinal),
        rows.map((r) => r.text),
        rows.map((r) => r.status),
        rows.map((r) => r.updatedAt),
        rows.map((r) => r.updatedBy),
      ],
    );
  },
};
