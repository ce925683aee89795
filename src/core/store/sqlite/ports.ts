import type { Database } from 'better-sqlite3';
import type { PortBlock } from '../portTypes.ts';

/** Ports reserved for worktrees (docs/worktrees.md, "Ports"). */
export function portBlocks(db: Database, host: string): PortBlock[] {
  return db.prepare('SELECT host, first_port AS first, count, worktree, epic_id FROM port_blocks WHERE host = ? ORDER BY first_port').all(host) as PortBlock[];
}

export function insertPortBlock(db: Database, now: string, b: PortBlock): boolean {
  return db.prepare('INSERT INTO port_blocks (host, first_port, count, worktree, epic_id, reserved_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING')
    .run(b.host, b.first, b.count, b.worktree, b.epic_id, now).changes === 1;
}

export function releasePorts(db: Database, host: string, worktree: string): number {
  return db.prepare('DELETE FROM port_blocks WHERE host = ? AND worktree = ?').run(host, worktree).changes;
}
