/**
 * A worktree's ports and environment from the store (docs/worktrees.md, "Ports"): the block is
 * reserved the first time something runs there (an agent, setup, verification, the app) and released
 * when Springfield removes the worktree; a block whose worktree has gone is freed by the next
 * reservation on the host.
 */
import { hostId } from '../git/repositoryId.ts';
import type { Store } from '../store/store.ts';
import { reservePorts, type PortBlock, type PortLedger, type PortProbe } from './ports.ts';
import type { WorktreeFacts } from './worktreeEnv.ts';

/** The store as the reservation's ledger. */
export function storeLedger(store: Store): PortLedger {
  return {
    blocks: (host) => store.portBlocks(host),
    insert: (block) => store.insertPortBlock(block),
    release: (host, worktree) => store.releasePorts(host, worktree),
  };
}

export interface WorktreeOf {
  readonly epic: { readonly id: string; readonly title: string | null };
  readonly worktree: string;
  readonly mainRoot: string;
  /** The config's `ports` (per worktree; 0: none) and `env` map. */
  readonly config: { readonly ports: number; readonly env: Readonly<Record<string, string>> };
  readonly env: NodeJS.ProcessEnv;
}

/** The worktree's block, reserved now if it has none; none for the main worktree (a person's checkout) or with `"ports": 0`. */
export async function worktreePortBlock(store: Store, w: WorktreeOf, probe?: PortProbe): Promise<PortBlock | null> {
  if (w.config.ports === 0 || w.worktree === w.mainRoot) return null;
  return reservePorts(
    storeLedger(store),
    { host: hostId(w.env), count: w.config.ports, worktree: w.worktree, epic_id: w.epic.id },
    probe,
  );
}

/** What commands in the worktree are told: its epic, paths, ports and the config's env map. */
export async function worktreeFacts(store: Store, w: WorktreeOf): Promise<WorktreeFacts> {
  const ports = await worktreePortBlock(store, w);
  return {
    epicId: w.epic.id,
    title: w.epic.title,
    worktree: w.worktree,
    mainRoot: w.mainRoot,
    ports,
    env: w.config.env,
  };
}

/** Frees the worktree's block on this host (when Springfield removes the worktree); how many were released. */
export function releaseWorktreePorts(store: Store, worktree: string, env: NodeJS.ProcessEnv): Promise<number> {
  return store.releasePorts(hostId(env), worktree);
}
