import { closeSync, fstatSync, openSync, readFileSync, statSync, type BigIntStats } from 'node:fs';
import { resolve } from 'node:path';
import { parsePlanBytes, planReadError, readPlanBytes } from './parse.ts';
import type { Plan, PlanSource } from './types.ts';

/** Reads the plan keyed `planPath` from a worktree (each worktree has its own checkout of it). */
export function loadPlanSource(worktreeRoot: string, planPath: string): PlanSource {
  const bytes = readPlanBytes(resolve(worktreeRoot, planPath), planPath);
  return { planPath, bytes, plan: parsePlanBytes(bytes, planPath) };
}

/**
 * How long a plan file must have been left alone before its stat vouches for its bytes: longer than
 * any file system's time resolution (FAT's two seconds; ext4's clock tick), so a write in the same
 * tick as the read cannot leave the same stat behind (docs/cli-cost.md, "Unchanged plan files").
 */
export const SETTLED_MS = 2000;

/**
 * The plan file for a command that checks it against the store: stat'ed now (a missing file is
 * refused before any write), read only when the store has not seen it unchanged since its bytes last
 * matched, and parsed only when the store has not seen these exact bytes (docs/cli-cost.md). Errors
 * name `displayPath`.
 */
export function lazyPlanSource(absPath: string, planPath: string, displayPath: string): PlanSource {
  let st: BigIntStats;
  try {
    st = statSync(absPath, { bigint: true });
  } catch (err) {
    throw planReadError(displayPath, err);
  }
  let parsed: Plan | undefined;
  const parse = (bytes: Buffer): Plan => (parsed ??= parsePlanBytes(bytes, displayPath));
  if (!st.isFile()) {
    // Not a regular file: read now, so it fails (or not) as it always did, and nothing is remembered.
    const bytes = readPlanBytes(absPath, displayPath);
    return {
      planPath,
      bytes,
      get plan() {
        return parse(bytes);
      },
    };
  }
  let read: SettledRead | undefined;
  const readOnce = (): SettledRead => (read ??= readSettled(absPath, displayPath));
  return {
    planPath,
    get bytes() {
      return readOnce().bytes;
    },
    get plan() {
      return parse(readOnce().bytes);
    },
    file: { path: absPath, stat: statKey(st), settledStat: () => readOnce().settled },
  };
}

/** What identifies a file's content as git's index does: device, inode, size, and modification and change times in ns. */
export function statKey(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

interface SettledRead {
  readonly bytes: Buffer;
  /** The file's stat after the read, when nothing can have changed it since `SETTLED_MS` before the read began. */
  readonly settled: string | undefined;
}

/**
 * Reads the file through one descriptor and stats that descriptor after the read. Its times are
 * trusted only if both are older than the read's start by `SETTLED_MS`: then no write happened during
 * the read, and none can follow in the same time tick unseen (git's "racy clean" rule).
 */
export function readSettled(absPath: string, displayPath: string, startedMs = Date.now()): SettledRead {
  let fd: number;
  try {
    fd = openSync(absPath, 'r');
  } catch (err) {
    throw planReadError(displayPath, err);
  }
  try {
    const bytes = readFileSync(fd);
    const st = fstatSync(fd, { bigint: true });
    const limit = BigInt(startedMs - SETTLED_MS) * 1_000_000n;
    return { bytes, settled: st.mtimeNs < limit && st.ctimeNs < limit ? statKey(st) : undefined };
  } catch (err) {
    throw planReadError(displayPath, err);
  } finally {
    closeSync(fd);
  }
}
