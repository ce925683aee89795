import { orphanedPlans } from '../shared/prune.ts';
import type { SqlConnection } from './sqlite.ts';

/** Plans whose file exists in none of `roots` (shared/prune.ts). */
export function findOrphanedPlans(db: SqlConnection, roots: readonly string[]): string[] {
  if (roots.length === 0) return [];
  return orphanedPlans(db.prepare('SELECT plan_path FROM plans ORDER BY plan_path').pluck().all() as string[], roots);
}

/** Tables whose rows hang off a plan's steps; dangling rows there are safe to delete. */
export const PLAN_CHILD_TABLES: readonly string[] = [
  'plan_files',
  'steps',
  'step_deps',
  'checklist_items',
  'artifacts',
];

interface ForeignKeyViolation {
  table: string;
  rowid: number | null;
  parent: string;
}

/** Rows that violate a foreign key, as `PRAGMA foreign_key_check` reports them. */
export function foreignKeyViolations(db: SqlConnection): ForeignKeyViolation[] {
  return db.pragma('foreign_key_check') as ForeignKeyViolation[];
}
