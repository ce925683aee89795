/**
 * The ports reserved for worktrees (docs/worktrees.md, "Ports"): a host's blocks, one per worktree,
 * none starting at the same port. The reservation's rules (aligned blocks, free on the machine, a gone
 * worktree's block freed) are core/orchestrate/ports.ts's; the store keeps the ledger.
 */
import type { PortBlock } from '../portTypes.ts';
import type { Io } from './op.ts';

export interface PortBlocksPort {
  /** The blocks reserved on `host`, lowest first (on PostgreSQL, whatever repository reserved them). */
  portBlocks(host: string): Io<PortBlock[]>;
  /** Inserts a block; false when one on its host starts at the same port or its worktree has one. */
  insertPortBlock(block: PortBlock): Io<boolean>;
  /** Deletes the worktree's block on `host`; how many went. */
  releasePortBlock(host: string, worktree: string): Io<number>;
}
