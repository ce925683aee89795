/** A block of ports reserved for one worktree on one host (docs/worktrees.md, "Ports"). */
export interface PortBlock {
  readonly host: string;
  /** The block's first port; the block is `first` … `first + count - 1`. */
  readonly first: number;
  readonly count: number;
  /** The worktree's absolute path: one block per worktree and host. */
  readonly worktree: string;
  readonly epic_id: string;
}
