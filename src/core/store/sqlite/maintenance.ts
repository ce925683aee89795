import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from './sqlite.ts';

/**
 * Plans whose file exists in none of `roots`. A plan still present in some linked worktree (say,
 * initialised on an epic's branch before it reached main) is not orphaned.
 */
export function findOrphanedPlans(db: Database, roots: readonly string[]): string[] {
  if (roots.length === 0) return [];
  const plans = db.prepare('SELECT plan_path FROM plans ORDER BY plan_path').pluck().all() as string[];
  return plans.filter((p) => !roots.some((root) => existsSync(join(root, p))));
}

/** Tables whose rows hang off a plan's steps; dangling rows there are safe to delete. */
export const PLAN_CHILD_TABLES: readonly string[] = ['plan_files', 'steps', 'step_deps', 'checklist_items', 'artifacts'];

interface ForeignKeyViolation {
  table: string;
  rowid: number | null;
  parent: string;
}

/** Rows that violate a foreign key, as `PRAGMA foreign_key_check` reports them. */
export function foreignKeyViolations(db: Database): ForeignKeyViolation[] {
  return db.pragma('foreign_key_check') as ForeignKeyViolation[];
}
