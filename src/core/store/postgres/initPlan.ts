import { planHash, structureJson } from '../../plan/hash.ts';
import type { PlanSource, PlanStep } from '../../plan/types.ts';
import type { Actor, InitResult, ItemStatus } from '../types.ts';
import { recomputeReadiness } from './readiness.ts';
import { driftRefusal, findPlan, lockPlan, STEP_COLUMNS, writeEvent, type PgStepRow } from './rows.ts';
import type { Tx } from './session.ts';

interface KeptItem {
  kind: string;
  text: string;
  status: ItemStatus;
  updated_at: string | null;
  updated_by: string | null;
}

/**
 * Writes a plan's steps, dependencies and checklist items, holding the plan's lock exclusively.
 * Idempotent; with `force` it re-initialises from the current file, keeping steps (and items)
 * already completed. Set-based inserts: a 10,000-step plan is a handful of round trips.
 */
export async function initPlan(tx: Tx, source: PlanSource, actor: Actor, force: boolean, epicId: string | null): Promise<InitResult> {
  await lockPlan(tx, source.planPath, true);
  const existing = await findPlan(tx, source.planPath);
  const hash = planHash(source.plan);
  const base = { plan_path: source.planPath, plan_hash: hash };
  // A drifted file is not "already initialised": say what changed and refuse (docs/cli-contract.md).
  if (existing && !force && existing.plan_hash !== hash) throw await driftRefusal(tx, source.planPath, source.plan);
  if (existing && (!force || existing.plan_hash === hash)) {
    if (epicId && existing.epic_id !== epicId) await tx.q('UPDATE plans SET epic_id = $3, updated_at = $4 WHERE repo_id = $1 AND plan_path = $2', [tx.repo, source.planPath, epicId, tx.now]);
    return { ...base, plan_hash: existing.plan_hash, steps_created: 0, checklist_items_created: 0, already_initialized: true, reinitialized: false, steps_kept_completed: 0 };
  }
  const structure = structureJson(source.plan);
  if (existing) {
    await tx.q('UPDATE plans SET plan_hash = $3, structure = $4, title = $5, epic_id = coalesce($6, epic_id), updated_at = $7 WHERE repo_id = $1 AND plan_path = $2',
      [tx.repo, source.planPath, hash, structure, source.plan.title, epicId, tx.now]);
  } else {
    await tx.q(`INSERT INTO plans (repo_id, plan_path, epic_id, plan_hash, structure, title, status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 'active', $7, $7)`,
      [tx.repo, source.planPath, epicId, hash, structure, source.plan.title, tx.now]);
  }
  const counts = await writeSteps(tx, source, existing !== undefined);
  await recomputeReadiness(tx, source.planPath);
  const allDone = source.plan.steps.every((s) => counts.keptCompleted.has(s.anchor));
  await tx.q('UPDATE plans SET status = $3 WHERE repo_id = $1 AND plan_path = $2', [tx.repo, source.planPath, allDone ? 'done' : 'active']);
  await writeEvent(tx, actor, {
    entity: 'plan', action: existing ? 'reinit' : 'init', planPath: source.planPath, epicId,
    from: existing ? existing.plan_hash : null, to: hash,
    data: { steps: source.plan.steps.length, items: counts.items, kept_completed: [...counts.keptCompleted], removed: counts.removed },
  });
  return {
    ...base, steps_created: source.plan.steps.length, checklist_items_created: counts.items, already_initialized: false,
    reinitialized: existing !== undefined, steps_kept_completed: counts.keptCompleted.size,
  };
}

function stepKey(step: PlanStep): string {
  return JSON.stringify([step.parentAnchor, step.title, step.items.map((i) => [i.kind, i.text])]);
}

async function writeSteps(tx: Tx, source: PlanSource, reinit: boolean) {
  const { planPath, plan } = source;
  const P = [tx.repo, planPath];
  const oldSteps = new Map<string, PgStepRow>();
  const oldItems = new Map<string, KeptItem[]>();
  if (reinit) {
    for (const row of await tx.q<PgStepRow>(`SELECT ${STEP_COLUMNS} FROM steps WHERE repo_id = $1 AND plan_path = $2`, P)) oldSteps.set(row.anchor, row);
    for (const item of await tx.q<KeptItem & { step_anchor: string }>('SELECT step_anchor, kind, text, status, updated_at, updated_by FROM checklist_items WHERE repo_id = $1 AND plan_path = $2 ORDER BY id', P)) {
      const list = oldItems.get(item.step_anchor) ?? [];
      list.push(item);
      oldItems.set(item.step_anchor, list);
    }
    await tx.q('DELETE FROM checklist_items WHERE repo_id = $1 AND plan_path = $2', P);
    await tx.q('DELETE FROM step_deps WHERE repo_id = $1 AND plan_path = $2', P);
    await tx.q('UPDATE steps SET parent_anchor = NULL WHERE repo_id = $1 AND plan_path = $2 AND parent_anchor IS NOT NULL', P);
  }
  const oldKey = (row: PgStepRow) => JSON.stringify([row.parent_anchor, row.title, (oldItems.get(row.anchor) ?? []).map((i) => [i.kind, i.text])]);
  const newAnchors = new Set(plan.steps.map((s) => s.anchor));
  const removed = [...oldSteps.keys()].filter((a) => !newAnchors.has(a));
  if (removed.length > 0) await tx.q('DELETE FROM steps WHERE repo_id = $1 AND plan_path = $2 AND anchor = ANY($3::text[])', [...P, removed]);
  const unchangedDone = new Set(plan.steps.filter((s) => {
    const old = oldSteps.get(s.anchor);
    return old !== undefined && old.status === 'completed' && oldKey(old) === stepKey(s);
  }).map((s) => s.anchor));
  const keptCompleted = new Set(plan.steps.filter((s) => unchangedDone.has(s.anchor) &&
    (s.parentAnchor !== null || plan.steps.every((c) => c.parentAnchor !== s.anchor || unchangedDone.has(c.anchor)))).map((s) => s.anchor));
  const fresh = plan.steps.filter((s) => !oldSteps.has(s.anchor));
  const kept = plan.steps.filter((s) => oldSteps.has(s.anchor));
  if (fresh.length > 0) {
    await tx.q(`INSERT INTO steps (repo_id, plan_path, anchor, step_index, number, title, status)
      SELECT $1, $2, a, i, n, t, 'pending' FROM unnest($3::text[], $4::int[], $5::text[], $6::text[]) AS u(a, i, n, t)`,
    [...P, fresh.map((s) => s.anchor), fresh.map((s) => s.stepIndex), fresh.map((s) => s.number), fresh.map((s) => s.title)]);
  }
  if (kept.length > 0) {
    await tx.q(`UPDATE steps SET step_index = u.i, number = u.n, title = u.t FROM unnest($3::text[], $4::int[], $5::text[], $6::text[]) AS u(a, i, n, t)
      WHERE steps.repo_id = $1 AND steps.plan_path = $2 AND steps.anchor = u.a`,
    [...P, kept.map((s) => s.anchor), kept.map((s) => s.stepIndex), kept.map((s) => s.number), kept.map((s) => s.title)]);
    const release = kept.filter((s) => !keptCompleted.has(s.anchor) && oldSteps.get(s.anchor)?.status !== 'pending').map((s) => s.anchor);
    if (release.length > 0) {
      await tx.q(`UPDATE steps SET status = 'pending', claimed_host = NULL, claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1,
        claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL, completed_at = NULL, completed_host = NULL, completed_by = NULL,
        completed_token = NULL, commit_hash = NULL, complete_reason = NULL WHERE repo_id = $1 AND plan_path = $2 AND anchor = ANY($3::text[])`, [...P, release]);
    }
  }
  const children = plan.steps.filter((s) => s.parentAnchor);
  if (children.length > 0) {
    await tx.q(`UPDATE steps SET parent_anchor = u.p FROM unnest($3::text[], $4::text[]) AS u(a, p)
      WHERE steps.repo_id = $1 AND steps.plan_path = $2 AND steps.anchor = u.a`, [...P, children.map((s) => s.anchor), children.map((s) => s.parentAnchor)]);
  }
  const deps = plan.steps.flatMap((s) => s.dependsOn.map((d) => [s.anchor, d] as const));
  if (deps.length > 0) {
    await tx.q('INSERT INTO step_deps (repo_id, plan_path, step_anchor, depends_on) SELECT $1, $2, a, d FROM unnest($3::text[], $4::text[]) AS u(a, d)',
      [...P, deps.map((d) => d[0]), deps.map((d) => d[1])]);
  }
  const rows: { anchor: string; kind: string; ordinal: number; text: string; status: string; at: string | null; by: string | null }[] = [];
  for (const step of plan.steps) {
    const pool = [...(oldItems.get(step.anchor) ?? [])];
    for (const it of step.items) {
      const idx = pool.findIndex((o) => o.kind === it.kind && o.text === it.text && o.status === 'completed');
      const keptItem = idx >= 0 ? pool.splice(idx, 1)[0] : undefined;
      rows.push({ anchor: step.anchor, kind: it.kind, ordinal: it.ordinal, text: it.text, status: keptItem ? 'completed' : 'open', at: keptItem?.updated_at ?? null, by: keptItem?.updated_by ?? null });
    }
  }
  if (rows.length > 0) {
    await tx.q(`INSERT INTO checklist_items (repo_id, plan_path, step_anchor, kind, ordinal, text, status, updated_at, updated_by)
      SELECT $1, $2, a, k, o, t, s, at, b FROM unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::timestamptz[], $9::text[]) WITH ORDINALITY AS u(a, k, o, t, s, at, b, n) ORDER BY n`,
    [...P, rows.map((r) => r.anchor), rows.map((r) => r.kind), rows.map((r) => r.ordinal), rows.map((r) => r.text), rows.map((r) => r.status), rows.map((r) => r.at), rows.map((r) => r.by)]);
  }
  return { items: rows.length, keptCompleted, removed };
}
