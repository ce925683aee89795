import type { ItemRow } from '../shared/itemSelection.ts';
import type { ItemsPort } from '../shared/items.ts';
import type { SqliteMethods } from './port.ts';

/** Checklist items and artifacts (shared/items.ts). */
export const itemsSql: SqliteMethods<ItemsPort> = {
  stepItems(plan, anchor) {
    return this.db
      .prepare(
        'SELECT id, step_anchor, kind, ordinal, text, status FROM checklist_items WHERE plan_path = ? AND step_anchor = ? ORDER BY kind, ordinal',
      )
      .all(plan, anchor) as ItemRow[];
  },
  setItemStatus(id, status, worktree) {
    this.db
      .prepare('UPDATE checklist_items SET status = ?, updated_at = ?, updated_by = ? WHERE id = ? AND status != ?')
      .run(status, this.now, worktree, id, status);
  },
  insertArtifact(plan, anchor, kind, summary, worktree) {
    return Number(
      this.db
        .prepare(
          'INSERT INTO artifacts (plan_path, step_anchor, kind, summary, recorded_by, recorded_at) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(plan, anchor, kind, summary, worktree, this.now).lastInsertRowid,
    );
  },
};
