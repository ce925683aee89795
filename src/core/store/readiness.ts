import type { Database } from './sqlite.ts';

/**
 * SQL condition for a claimable top-level step `s`: pending, or holding an expired lease, with every
 * dependency of the step and of its substeps (outside its own family) completed.
 * Binds @plan and @now. Two NOT EXISTS (the step's own deps, then its substeps') with forced join
 * order keep every lookup on an index: one OR across both made SQLite scan all of a plan's deps.
 */
export const READY_CONDITION = `
  s.plan_path = @plan AND s.parent_anchor IS NULL
  AND (s.status = 'pending' OR (s.status IN ('claimed', 'in_progress') AND s.lease_expires_at < @now))
  AND NOT EXISTS (
    SELECT 1 FROM step_deps d CROSS JOIN steps dep ON dep.plan_path = d.plan_path AND dep.anchor = d.depends_on
    WHERE d.plan_path = s.plan_path AND d.step_anchor = s.anchor AND dep.status != 'completed'
      AND dep.anchor != s.anchor AND (dep.parent_anchor IS NULL OR dep.parent_anchor != s.anchor))
  AND NOT EXISTS (
    SELECT 1 FROM steps c CROSS JOIN step_deps d ON d.plan_path = c.plan_path AND d.step_anchor = c.anchor
    CROSS JOIN steps dep ON dep.plan_path = d.plan_path AND dep.anchor = d.depends_on
    WHERE c.plan_path = s.plan_path AND c.parent_anchor = s.anchor AND dep.status != 'completed'
      AND dep.anchor != s.anchor AND (dep.parent_anchor IS NULL OR dep.parent_anchor != s.anchor))`;

export interface StepPartition {
  readonly all: string[];
  readonly ready: string[];
  readonly completed: string[];
  readonly claimed: string[];
  readonly expired: string[];
  readonly blocked: string[];
}

/** Splits a plan's top-level steps by claimability at `now`. */
export function partitionSteps(db: Database, plan: string, now: string): StepPartition {
  const rows = db.prepare(`SELECT anchor, status, lease_expires_at FROM steps WHERE plan_path = ? AND parent_anchor IS NULL ORDER BY step_index`)
    .all(plan) as { anchor: string; status: string; lease_expires_at: string | null }[];
  const ready = new Set((db.prepare(`SELECT s.anchor FROM steps s WHERE ${READY_CONDITION} ORDER BY s.step_index`).pluck().all({ plan, now }) as string[]));
  const p: StepPartition = { all: [], ready: [...ready], completed: [], claimed: [], expired: [], blocked: [] };
  for (const r of rows) {
    p.all.push(r.anchor);
    const live = r.status === 'claimed' || r.status === 'in_progress';
    if (r.status === 'completed') p.completed.push(r.anchor);
    else if (live && r.lease_expires_at !== null && r.lease_expires_at < now) p.expired.push(r.anchor);
    else if (live) p.claimed.push(r.anchor);
    if (!ready.has(r.anchor) && (r.status === 'pending' || (live && r.lease_expires_at !== null && r.lease_expires_at < now))) p.blocked.push(r.anchor);
  }
  return p;
}

/** How many top-level steps are claimable right now. */
export function countReady(db: Database, plan: string, now: string): number {
  return Number(db.prepare(`SELECT COUNT(*) FROM steps s WHERE ${READY_CONDITION}`).pluck().get({ plan, now }));
}

/** How many top-level steps are not yet completed. */
export function countRemaining(db: Database, plan: string): number {
  return Number(db.prepare(`SELECT COUNT(*) FROM steps WHERE plan_path = ? AND parent_anchor IS NULL AND status != 'completed'`).pluck().get(plan));
}
