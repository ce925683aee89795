import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import type { PortBlock } from '../store/portTypes.ts';

export type { PortBlock };

/**
 * Ports for worktrees (docs/worktrees.md, "Ports"): each worktree Springfield makes gets a block of
 * `count` ports, reserved in the store so no two live worktrees on one host share one, and free on
 * the machine when reserved. Blocks are aligned (`first` is a multiple of `count` from the range's
 * start), so a block is found by its index and two reservations can only collide on the same key.
 */
export const PORT_RANGE = { first: 20_000, last: 29_999 } as const;

/**
 * What the reservation needs from the store: the blocks held on this host, an insert that fails
 * (false) when a block on the host already starts at its first port or the worktree already has one,
 * and a release of a worktree's block.
 */
export interface PortLedger {
  blocks(host: string): Promise<readonly PortBlock[]>;
  insert(block: PortBlock): Promise<boolean>;
  release(host: string, worktree: string): Promise<number>;
}

/** The first ports of the aligned blocks of `count` in the range that no held block overlaps, lowest first. */
export function freeStarts(
  held: readonly Pick<PortBlock, 'first' | 'count'>[],
  count: number,
  range: { first: number; last: number } = PORT_RANGE,
): number[] {
  const out: number[] = [];
  for (let first = range.first; first + count - 1 <= range.last; first += count) {
    const last = first + count - 1;
    if (!held.some((b) => b.first <= last && first <= b.first + b.count - 1)) out.push(first);
  }
  return out;
}

/** True when nothing listens on `port` on the loopback and the wildcard addresses (IPv4, and IPv6 where the machine has it). */
export async function portFree(port: number): Promise<boolean> {
  for (const host of ['127.0.0.1', '0.0.0.0', '::']) {
    const r = await tryListen(port, host);
    if (r === 'taken') return false;
  }
  return true;
}

function tryListen(port: number, host: string): Promise<'free' | 'taken' | 'unsupported'> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', (err: NodeJS.ErrnoException) => {
      resolve(err.code === 'EADDRINUSE' || err.code === 'EACCES' ? 'taken' : 'unsupported');
    });
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve('free')));
  });
}

/** True when every port of the block is free on the machine. */
export async function blockFree(
  first: number,
  count: number,
  isFree: (port: number) => Promise<boolean> = portFree,
): Promise<boolean> {
  for (let p = first; p < first + count; p++) if (!(await isFree(p))) return false;
  return true;
}

/**
 * Reserves a block for a worktree: its existing one if it has one, else the lowest block that is free
 * both in the store and on the machine. A block whose worktree no longer exists is released first. An
 * insert that loses a race to another scheduler (same first port, same host) moves on to the next
 * block. Throws when the range is used up.
 */
export interface PortProbe {
  /** Whether a port is free on the machine (default: try to listen on it). */
  readonly isFree?: (port: number) => Promise<boolean>;
  /** Whether a worktree still exists (default: its folder exists). */
  readonly exists?: (worktree: string) => boolean;
  readonly range?: { readonly first: number; readonly last: number };
}

export async function reservePorts(
  ledger: PortLedger,
  want: Omit<PortBlock, 'first'>,
  probe: PortProbe = {},
): Promise<PortBlock> {
  const { isFree = portFree, exists = existsSync, range = PORT_RANGE } = probe;
  let held = await ledger.blocks(want.host);
  const own = held.find((b) => b.worktree === want.worktree);
  if (own) return own;
  // A block whose worktree is gone (removed by hand, a crash before its release) is free again.
  const stale = held.filter((b) => !exists(b.worktree));
  for (const b of stale) await ledger.release(b.host, b.worktree);
  if (stale.length > 0) held = held.filter((b) => !stale.includes(b));
  for (const first of freeStarts(held, want.count, range)) {
    if (!(await blockFree(first, want.count, isFree))) continue;
    const block = { ...want, first };
    if (await ledger.insert(block)) return block;
  }
  throw new Error(`no block of ${want.count} free ports left between ${range.first} and ${range.last} on ${want.host}`);
}

/** The variables a worktree's commands get for its block: the first port, and the range as `first-last`. */
export function portVariables(block: Pick<PortBlock, 'first' | 'count'> | null): Record<string, string> {
  if (!block || block.count === 0) return {};
  return {
    SPRINGFIELD_PORT: String(block.first),
    SPRINGFIELD_PORTS: `${block.first}-${block.first + block.count - 1}`,
  };
}
