import { knownPlanHash, rememberPlanHash, structureJson, type PlanStructure } from '../../plan/hash.ts';
import type { SqlConnection } from './sqlite.ts';
import type { Actor } from '../types.ts';
import type { PlanSource } from '../../plan/types.ts';
import { eventValues, type Claim, type EventInput, type PlanRow, type RowsPort, type StepRow } from '../shared/rows.ts';
import type { SqliteMethods } from './port.ts';

export type { EventInput, PlanRow, StepRow } from '../shared/rows.ts';

/** The plans columns callers read; the file's bytes and structure (large for big plans) live in plan_files. */
export const PLAN_COLUMNS = 'plan_path, epic_id, plan_hash, title, status, open_steps, created_at, updated_at';

/** Appends one audit event; every state change calls this inside its own transaction. */
export function writeEvent(db: SqlConnection, at: string, actor: Actor | null, e: EventInput): void {
  db.prepare(
    `INSERT INTO events (at, worktree, agent, entity, action, plan_path, step_anchor, epic_id, from_status, to_status, reason, data)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(at, ...eventValues(actor, e));
}

export function findPlan(db: SqlConnection, planPath: string): PlanRow | undefined {
  return db.prepare(`SELECT ${PLAN_COLUMNS} FROM plans WHERE plan_path = ?`).get(planPath) as PlanRow | undefined;
}

/** The structure recorded when the plan was initialised. */
export function initialisedStructure(db: SqlConnection, planPath: string): PlanStructure {
  return JSON.parse(
    String(db.prepare('SELECT structure FROM plan_files WHERE plan_path = ?').pluck().get(planPath)),
  ) as PlanStructure;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function stepRow(db: SqlConnection, planPath: string, anchor: string): StepRow | undefined {
  return db.prepare('SELECT * FROM steps WHERE plan_path = ? AND anchor = ?').get(planPath, anchor) as
    StepRow | undefined;
}

/**
 * The rows every operation reads, and the event every change writes (shared/rows.ts). No locks: the
 * operation runs inside one BEGIN IMMEDIATE transaction, so nothing else writes meanwhile.
 */
export const rowsSql: SqliteMethods<RowsPort> = {
  findPlan(planPath) {
    return findPlan(this.db, planPath);
  },
  findStep(planPath, anchor) {
    return stepRow(this.db, planPath, anchor);
  },
  findClaim(planPath, anchor): Claim | undefined {
    const step = stepRow(this.db, planPath, anchor);
    if (!step) return undefined;
    return { step, owner: step.parent_anchor ? (stepRow(this.db, planPath, step.parent_anchor) ?? step) : step };
  },
  currentPlan(source) {
    const file = source.file;
    let read: { settledStat: string | undefined } | undefined;
    if (file !== undefined) {
      // The stat under which the file's bytes last matched a structure, when that structure is the plan's.
      const known = this.db
        .prepare(
          `SELECT ${PLAN_COLUMNS}, (SELECT stat FROM plan_file_stats r WHERE r.file = ? AND r.plan_hash = plans.plan_hash) AS seen FROM plans WHERE plan_path = ?`,
        )
        .get(file.path, source.planPath) as (PlanRow & { seen: string | null }) | undefined;
      const { seen, ...plan } = known ?? { seen: null };
      read = file.readIfChanged(seen ?? undefined);
      // Unchanged since its bytes last matched: nothing read.
      if (read === undefined && known !== undefined) return { plan: plan as PlanRow, current: true };
    }
    const found = bytesOrStructure(this.db, source);
    const settled = found?.current ? read?.settledStat : undefined;
    if (file !== undefined && settled !== undefined && found !== undefined)
      this.db
        .prepare(
          'INSERT INTO plan_file_stats (file, stat, plan_hash) VALUES (?, ?, ?) ON CONFLICT (file) DO UPDATE SET stat = excluded.stat, plan_hash = excluded.plan_hash',
        )
        .run(file.path, settled, found.plan.plan_hash);
    return found;
  },
  initialisedStructure(planPath) {
    return initialisedStructure(this.db, planPath);
  },
  lockPlan() {
    // Every write is BEGIN IMMEDIATE: no other writer runs meanwhile.
  },
  writeEvent(actor, e) {
    writeEvent(this.db, this.now, actor, e);
  },
};

/**
 * Whether the file's structure is the plan's: at once when its bytes are the ones last recorded with
 * it, else by its structure (recording these bytes when it is).
 */
function bytesOrStructure(db: SqlConnection, source: PlanSource): { plan: PlanRow; current: boolean } | undefined {
  const read = source.bytes();
  const bytes = read === undefined ? undefined : asBuffer(read);
  if (bytes !== undefined) {
    const seen = db
      .prepare(
        `SELECT ${PLAN_COLUMNS}, (SELECT source = ? FROM plan_files f WHERE f.plan_path = plans.plan_path) AS same FROM plans WHERE plan_path = ?`,
      )
      .get(bytes, source.planPath) as (PlanRow & { same: number | null }) | undefined;
    if (seen?.same === 1) {
      const { same: _, ...plan } = seen;
      return { plan, current: true };
    }
  }
  const found = sameStructure(db, source);
  if (found?.current && bytes !== undefined)
    db.prepare('UPDATE plan_files SET source = ? WHERE plan_path = ?').run(bytes, found.plan.plan_path);
  return found;
}

/**
 * Whether the parsed plan has the initialised structure: compares hashes when this parsed plan's is
 * known, else the structure JSON itself in the same query (equal JSON is equal hash).
 */
function sameStructure(db: SqlConnection, source: PlanSource): { plan: PlanRow; current: boolean } | undefined {
  const known = knownPlanHash(source.plan());
  let row: (PlanRow & { same?: number }) | undefined;
  if (known !== undefined) row = findPlan(db, source.planPath);
  else {
    row = db
      .prepare(
        `SELECT ${PLAN_COLUMNS}, (SELECT structure = ? FROM plan_files f WHERE f.plan_path = plans.plan_path) AS same FROM plans WHERE plan_path = ?`,
      )
      .get(structureJson(source.plan()), source.planPath) as (PlanRow & { same: number }) | undefined;
  }
  if (!row) return undefined;
  const { same, ...plan } = row;
  const current = known !== undefined ? known === plan.plan_hash : same === 1;
  if (current) rememberPlanHash(source.plan(), plan.plan_hash);
  return { plan, current };
}
