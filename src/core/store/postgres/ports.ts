import type { PortBlock } from '../portTypes.ts';
import type { Tx } from './session.ts';

/** Ports reserved for worktrees (docs/worktrees.md, "Ports"): a host's blocks, whatever repository reserved them. */
export function portBlocks(tx: Tx, host: string): Promise<PortBlock[]> {
  return tx.q<PortBlock>('SELECT host, first_port AS first, count, worktree, epic_id FROM port_blocks WHERE host = $1 ORDER BY first_port', [host]);
}

export async function insertPortBlock(tx: Tx, b: PortBlock): Promise<boolean> {
  const rows = await tx.q('INSERT INTO port_blocks (host, first_port, count, worktree, repo_id, epic_id, reserved_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING 1',
    [b.host, b.first, b.count, b.worktree, tx.repo, b.epic_id, tx.now]);
  return rows.length === 1;
}

export async function releasePorts(tx: Tx, host: string, worktree: string): Promise<number> {
  return (await tx.q('DELETE FROM port_blocks WHERE host = $1 AND worktree = $2 RETURNING 1', [host, worktree])).length;
}
