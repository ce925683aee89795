import type { SqlConnection } from './sqlite.ts';
import { emptyPartition, place, stateLetter, type ReadinessPort, type StepPartition } from '../shared/readiness.ts';
import type { SqliteMethods } from './port.ts';

export type { StepPartition } from '../shared/readiness.ts';

/**
 * SQL condition for a claimable top-level step `s`: pending, or holding an expired lease, with no
 * unfinished dependency outside its family (`blockers`, kept by the triggers of migration 2).
 * Binds @plan and @now.
 */
export const READY_CONDITION = `
  s.plan_path = @plan AND s.parent_anchor IS NULL AND s.blockers = 0
  AND (s.status = 'pending' OR (s.status IN ('claimed', 'in_progress') AND s.lease_expires_at < @now))`;

/**
 * Each top-level step's blockers computed from the dependency graph: the dependencies of the step
 * and of its substeps on unfinished steps outside its family. Binds @plan. The stored column must
 * always equal this; initPlan writes it, doctor and the tests compare against it.
 */
export const DERIVED_BLOCKERS = `
  SELECT coalesce(c.parent_anchor, c.anchor) AS top, COUNT(*) AS n
  FROM step_deps d
  JOIN steps c ON c.plan_path = d.plan_path AND c.anchor = d.step_anchor
  JOIN steps dep ON dep.plan_path = d.plan_path AND dep.anchor = d.depends_on
  WHERE d.plan_path = @plan AND dep.status != 'completed'
    AND coalesce(dep.parent_anchor, dep.anchor) != coalesce(c.parent_anchor, c.anchor)
  GROUP BY 1`;

/** Rewrites a plan's stored blockers and open-step count from scratch (after its structure changed). */
export function recomputeReadiness(db: SqlConnection, plan: string): void {
  db.prepare('UPDATE steps SET blockers = 0 WHERE plan_path = @plan AND blockers != 0').run({ plan });
  db.prepare(
    `UPDATE steps SET blockers = b.n FROM (${DERIVED_BLOCKERS}) AS b WHERE steps.plan_path = @plan AND steps.anchor = b.top`,
  ).run({ plan });
  db.prepare(
    `UPDATE plans SET open_steps = (SELECT COUNT(*) FROM steps s WHERE s.plan_path = @plan AND s.parent_anchor IS NULL AND s.status != 'completed')
    WHERE plan_path = @plan`,
  ).run({ plan });
}

/**
 * Splits a plan's top-level steps by claimability at `now`. The first call for a plan on a
 * connection reads it in one query (partitionAtOnce: a CLI process calls once); later calls on
 * the same connection (the editor's, the scheduler's) keep the plan's anchors in order and read
 * only the small sets (partitionByShape). Both give the same answer. Call it inside a read
 * transaction so every query sees the same snapshot.
 */
export function partitionSteps(db: SqlConnection, plan: string, now: string): StepPartition {
  let byPlan = shapes.get(db);
  if (!byPlan) shapes.set(db, (byPlan = new Map()));
  if (byPlan.has(plan)) return partitionByShape(db, plan, now);
  byPlan.set(plan, null);
  return partitionAtOnce(db, plan, now);
}

/** stateLetter (shared/readiness.ts) as SQL, for the one-string read of a whole plan. Binds @now. */
const STATE_LETTER = `CASE
    WHEN status = 'completed' THEN 'c'
    WHEN status = 'pending' THEN (CASE WHEN blockers = 0 THEN 'r' ELSE 'b' END)
    WHEN lease_expires_at < @now THEN (CASE WHEN blockers = 0 THEN 'e' ELSE 'x' END)
    ELSE 'h' END`;

/**
 * The partition from one query returning one string, a line per step in step order (its state
 * letter, then its anchor) joined inside SQLite: a fresh process reads a 2,000-step plan so in about
 * a millisecond, where fetching the steps as rows costs several (docs/cli-cost.md).
 */
export function partitionAtOnce(db: SqlConnection, plan: string, now: string): StepPartition {
  const p = emptyPartition();
  const lines = db
    .prepare(
      `SELECT group_concat(${STATE_LETTER} || anchor, char(10) ORDER BY step_index)
      FROM steps WHERE plan_path = @plan AND parent_anchor IS NULL`,
    )
    .pluck()
    .get({ plan, now }) as string | null;
  if (lines === null) return p;
  // Anchors are lowercase letters, digits and dashes (docs/plan-grammar.md): the lines split back exactly.
  // Each anchor is cut out once (split, then slicing off the letter, would make every string twice).
  for (let at = 0; at < lines.length;) {
    const end = lines.indexOf('\n', at);
    const stop = end === -1 ? lines.length : end;
    place(p, lines.slice(at + 1, stop), lines[at]);
    at = stop + 1;
  }
  return p;
}

/** A plan's top-level anchors in step order; fixed for a given plan hash, so cached per connection. */
interface Shape {
  readonly hash: string;
  readonly anchors: readonly string[];
  /** step_index → position in `anchors` (-1 for substeps). */
  readonly position: Int32Array;
}

/** Per connection and plan: the shape, or null after the first call (which read the plan at once). */
const shapes = new WeakMap<SqlConnection, Map<string, Shape | null>>();

function shapeOf(db: SqlConnection, plan: string, hash: string): Shape {
  const byPlan = shapes.get(db) as Map<string, Shape | null>;
  const known = byPlan.get(plan);
  if (known?.hash === hash) return known;
  const rows = db
    .prepare('SELECT step_index, anchor FROM steps WHERE plan_path = ? AND parent_anchor IS NULL ORDER BY step_index')
    .raw()
    .all(plan) as [number, string][];
  const position = new Int32Array((rows.at(-1)?.[0] ?? -1) + 1).fill(-1);
  rows.forEach(([index], i) => {
    position[index] = i;
  });
  const shape: Shape = { hash, anchors: rows.map((r) => r[1]), position };
  byPlan.set(plan, shape);
  return shape;
}

const LETTER_OF = ['', 'c', 'r', 'h', 'e', 'x', 'b'] as const;
const CODE_OF = { c: 1, r: 2, h: 3, e: 4, x: 5, b: 6 } as const;
const COMPLETED = 1;
const READY = 2;
const BLOCKED = 6;

/**
 * The partition from the cached shape: reads only the small sets (ready, held) and the smaller of
 * completed and pending, as step indexes; the rest follows by elimination.
 */
export function partitionByShape(db: SqlConnection, plan: string, now: string): StepPartition {
  const p = emptyPartition();
  const head = db.prepare('SELECT plan_hash, open_steps FROM plans WHERE plan_path = ?').get(plan) as
    { plan_hash: string; open_steps: number } | undefined;
  if (!head) return p;
  if (!shapes.has(db)) shapes.set(db, new Map());
  const shape = shapeOf(db, plan, head.plan_hash);
  const at = (index: number): number => shape.position[index] ?? -1;
  const state = new Uint8Array(shape.anchors.length);
  const held = db
    .prepare(
      `SELECT step_index, lease_expires_at, blockers FROM steps
      WHERE plan_path = ? AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress')`,
    )
    .raw()
    .all(plan) as [number, string | null, number][];
  for (const [index, lease, blockers] of held)
    state[at(index)] = CODE_OF[stateLetter('claimed', lease !== null && lease < now, blockers)];
  const ready = db
    .prepare(
      `SELECT step_index FROM steps INDEXED BY idx_steps_ready
      WHERE plan_path = ? AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0`,
    )
    .pluck()
    .all(plan) as number[];
  for (const index of ready) state[at(index)] = READY;
  // Whichever of completed and pending is smaller is read; the other is what is left. The count
  // only picks the cheaper query: either way the result is exact.
  const completedMore = shape.anchors.length - head.open_steps > shape.anchors.length / 2;
  const listed = db
    .prepare(
      `SELECT step_index FROM steps INDEXED BY idx_steps_top WHERE plan_path = ? AND parent_anchor IS NULL AND status = ?`,
    )
    .pluck()
    .all(plan, completedMore ? 'pending' : 'completed') as number[];
  const [mark, rest] = completedMore ? [BLOCKED, COMPLETED] : [COMPLETED, BLOCKED];
  for (const index of listed) if (state[at(index)] === 0) state[at(index)] = mark;
  shape.anchors.forEach((anchor, i) => place(p, anchor, LETTER_OF[state[i] || rest]));
  return p;
}

/** How many top-level steps are claimable right now, and how many are not yet completed: one query. */
export function countOpen(db: SqlConnection, plan: string, now: string): { ready: number; remaining: number } {
  const [ready, remaining] = db
    .prepare(
      `SELECT
      (SELECT COUNT(*) FROM steps INDEXED BY idx_steps_ready WHERE plan_path = @plan AND parent_anchor IS NULL AND status = 'pending' AND blockers = 0)
    + (SELECT COUNT(*) FROM steps WHERE plan_path = @plan AND parent_anchor IS NULL AND status IN ('claimed', 'in_progress') AND lease_expires_at < @now AND blockers = 0),
      (SELECT open_steps FROM plans WHERE plan_path = @plan)`,
    )
    .raw()
    .get({ plan, now }) as [number, number | null];
  return { ready: Number(ready), remaining: Number(remaining ?? 0) };
}

/** How many top-level steps are not yet completed. */
export function countRemaining(db: SqlConnection, plan: string): number {
  return Number(db.prepare('SELECT open_steps FROM plans WHERE plan_path = ?').pluck().get(plan) ?? 0);
}

/** Readiness (shared/readiness.ts), from the blockers and open-step counts migration 2's triggers keep. */
export const readinessSql: SqliteMethods<ReadinessPort> = {
  partitionSteps(plan) {
    return partitionSteps(this.db, plan, this.now);
  },
  countRemaining(plan) {
    return countRemaining(this.db, plan);
  },
  recomputeReadiness(plan) {
    recomputeReadiness(this.db, plan);
  },
};
