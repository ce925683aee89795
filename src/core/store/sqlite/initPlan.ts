import { planHash, structureJson } from '../../plan/hash.ts';
import type { PlanStep, PlanSource } from '../../plan/types.ts';
import { recomputeReadiness } from './readiness.ts';
import { driftRefusal, findPlan, writeEvent, type StepRow } from './rows.ts';
import type { Database } from './sqlite.ts';
import type { Actor, InitResult, ItemStatus } from '../types.ts';

interface KeptItem {
  kind: string;
  text: string;
  status: ItemStatus;
  updated_at: string | null;
  updated_by: string | null;
}

/**
 * Writes a plan's steps, dependencies and checklist items. Idempotent; a file whose structure
 * drifted is refused unless `force`, which re-initialises from it, keeping completed steps (and items).
 * The caller wraps this in a write transaction.
 */
export function initPlan(db: Database, now: string, source: PlanSource, actor: Actor, force: boolean, epicId: string | null): InitResult {
  const existing = findPlan(db, source.planPath);
  const hash = planHash(source.plan);
  const base = { plan_path: source.planPath, plan_hash: hash };
  // A drifted file is not "already initialised": say what changed and refuse (docs/cli-contract.md).
  if (existing && !force && existing.plan_hash !== hash) throw driftRefusal(db, source.planPath, source.plan);
  if (existing && (!force || existing.plan_hash === hash)) {
    if (epicId && existing.epic_id !== epicId) db.prepare('UPDATE plans SET epic_id = ?, updated_at = ? WHERE plan_path = ?').run(epicId, now, source.planPath);
    return { ...base, plan_hash: existing.plan_hash, steps_created: 0, checklist_items_created: 0, already_initialized: true, reinitialized: false, steps_kept_completed: 0 };
  }
  const structure = structureJson(source.plan);
  // The file's bytes go with the structure they have (docs/cli-cost.md); none known, none kept.
  const bytes = source.bytes === undefined ? null : Buffer.from(source.bytes);
  if (existing) {
    db.prepare('UPDATE plans SET plan_hash = ?, title = ?, epic_id = COALESCE(?, epic_id), updated_at = ? WHERE plan_path = ?')
      .run(hash, source.plan.title, epicId, now, source.planPath);
  } else {
    db.prepare('INSERT INTO plans (plan_path, epic_id, plan_hash, title, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(source.planPath, epicId, hash, source.plan.title, 'active', now, now);
  }
  db.prepare('INSERT INTO plan_files (plan_path, source, structure) VALUES (?, ?, ?) ON CONFLICT (plan_path) DO UPDATE SET source = excluded.source, structure = excluded.structure')
    .run(source.planPath, bytes, structure);
  const counts = writeSteps(db, now, source, existing !== undefined);
  recomputeReadiness(db, source.planPath);
  const allDone = source.plan.steps.every((s) => counts.keptCompleted.has(s.anchor));
  db.prepare('UPDATE plans SET status = ? WHERE plan_path = ?').run(allDone ? 'done' : 'active', source.planPath);
  writeEvent(db, now, actor, {
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

function writeSteps(db: Database, now: string, source: PlanSource, reinit: boolean) {
  const { planPath, plan } = source;
  const oldSteps = new Map<string, StepRow>();
  const oldItems = new Map<string, KeptItem[]>();
  if (reinit) {
    for (const row of db.prepare('SELECT * FROM steps WHERE plan_path = ?').all(planPath) as StepRow[]) oldSteps.set(row.anchor, row);
    for (const item of db.prepare('SELECT step_anchor, kind, text, status, updated_at, updated_by FROM checklist_items WHERE plan_path = ? ORDER BY id').all(planPath) as (KeptItem & { step_anchor: string })[]) {
      const list = oldItems.get(item.step_anchor) ?? [];
      list.push(item);
      oldItems.set(item.step_anchor, list);
    }
    db.prepare('DELETE FROM checklist_items WHERE plan_path = ?').run(planPath);
    db.prepare('DELETE FROM step_deps WHERE plan_path = ?').run(planPath);
    // Detach every parent link first, so removing a step never cascades into one that is kept.
    db.prepare('UPDATE steps SET parent_anchor = NULL WHERE plan_path = ?').run(planPath);
  }
  const oldKey = (row: StepRow) => JSON.stringify([row.parent_anchor, row.title, (oldItems.get(row.anchor) ?? []).map((i) => [i.kind, i.text])]);
  const newAnchors = new Set(plan.steps.map((s) => s.anchor));
  const removed = [...oldSteps.keys()].filter((a) => !newAnchors.has(a));
  const removeStep = db.prepare('DELETE FROM steps WHERE plan_path = ? AND anchor = ?');
  for (const anchor of removed) removeStep.run(planPath, anchor);
  // A step stays completed only if it, and every substep it now has, is unchanged and was completed.
  const unchangedDone = new Set(plan.steps.filter((s) => {
    const old = oldSteps.get(s.anchor);
    return old !== undefined && old.status === 'completed' && oldKey(old) === stepKey(s);
  }).map((s) => s.anchor));
  const keptCompleted = new Set(plan.steps.filter((s) => unchangedDone.has(s.anchor) &&
    (s.parentAnchor !== null || plan.steps.every((c) => c.parentAnchor !== s.anchor || unchangedDone.has(c.anchor)))).map((s) => s.anchor));
  const insert = db.prepare(`INSERT INTO steps (plan_path, anchor, step_index, number, title, status) VALUES (?, ?, ?, ?, ?, 'pending')`);
  const refresh = db.prepare(`UPDATE steps SET step_index = ?, number = ?, title = ? WHERE plan_path = ? AND anchor = ?`);
  const release = db.prepare(`UPDATE steps SET status = 'pending', claimed_by = NULL, claimed_agent = NULL, claim_token = claim_token + 1,
    claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL, completed_at = NULL, completed_by = NULL,
    completed_token = NULL, commit_hash = NULL, complete_reason = NULL WHERE plan_path = ? AND anchor = ?`);
  for (const step of plan.steps) {
    const old = oldSteps.get(step.anchor);
    if (!old) {
      insert.run(planPath, step.anchor, step.stepIndex, step.number, step.title);
      continue;
    }
    refresh.run(step.stepIndex, step.number, step.title, planPath, step.anchor);
    if (!keptCompleted.has(step.anchor) && old.status !== 'pending') release.run(planPath, step.anchor);
  }
  const parent = db.prepare('UPDATE steps SET parent_anchor = ? WHERE plan_path = ? AND anchor = ?');
  for (const step of plan.steps) if (step.parentAnchor) parent.run(step.parentAnchor, planPath, step.anchor);
  const dep = db.prepare('INSERT INTO step_deps (plan_path, step_anchor, depends_on) VALUES (?, ?, ?)');
  for (const step of plan.steps) for (const d of step.dependsOn) dep.run(planPath, step.anchor, d);
  const item = db.prepare('INSERT INTO checklist_items (plan_path, step_anchor, kind, ordinal, text, status, updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  let items = 0;
  for (const step of plan.steps) {
    const pool = [...(oldItems.get(step.anchor) ?? [])];
    for (const it of step.items) {
      const idx = pool.findIndex((o) => o.kind === it.kind && o.text === it.text && o.status === 'completed');
      const kept = idx >= 0 ? pool.splice(idx, 1)[0] : undefined;
      item.run(planPath, step.anchor, it.kind, it.ordinal, it.text, kept ? 'completed' : 'open', kept?.updated_at ?? null, kept?.updated_by ?? null);
      items++;
    }
  }
  return { items, keptCompleted, removed };
}
