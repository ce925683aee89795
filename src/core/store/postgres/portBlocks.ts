import type { PortBlock } from '../portTypes.ts';
import type { PortBlocksPort } from '../shared/portBlocks.ts';
import type { PgMethods } from './port.ts';

/** The ports reserved for worktrees (shared/portBlocks.ts): a host's blocks are shared by every repository on the server. */
export const portBlocksPg: PgMethods<PortBlocksPort> = {
  portBlocks(host) {
    return this.tx.q<PortBlock>(
      'SELECT host, first_port AS first, count, worktree, epic_id FROM port_blocks WHERE host = $1 ORDER BY first_port',
      [host],
    );
  },
  async insertPortBlock(b) {
    const rows = await this.tx.q(
      'INSERT INTO port_blocks (host, first_port, count, worktree, repo_id, epic_id, reserved_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING 1',
      [b.host, b.first, b.count, b.worktree, this.tx.repo, b.epic_id, this.now],
    );
    return rows.length === 1;
  },
  async releasePortBlock(host, worktree) {
    return (await this.tx.q('DELETE FROM port_blocks WHERE host = $1 AND worktree = $2 RETURNING 1', [host, worktree]))
      .length;
  },
};
