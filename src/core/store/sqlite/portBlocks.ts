import type { PortBlock } from '../portTypes.ts';
import type { PortBlocksPort } from '../shared/portBlocks.ts';
import type { SqliteMethods } from './port.ts';

/** The ports reserved for worktrees (shared/portBlocks.ts). */
export const portBlocksSql: SqliteMethods<PortBlocksPort> = {
  portBlocks(host) {
    return this.db
      .prepare(
        'SELECT host, first_port AS first, count, worktree, epic_id FROM port_blocks WHERE host = ? ORDER BY first_port',
      )
      .all(host) as PortBlock[];
  },
  insertPortBlock(b) {
    return (
      this.db
        .prepare(
          'INSERT INTO port_blocks (host, first_port, count, worktree, epic_id, reserved_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
        )
        .run(b.host, b.first, b.count, b.worktree, b.epic_id, this.now).changes === 1
    );
  },
  releasePortBlock(host, worktree) {
    return this.db.prepare('DELETE FROM port_blocks WHERE host = ? AND worktree = ?').run(host, worktree).changes;
  },
};
