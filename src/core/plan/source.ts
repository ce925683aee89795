import { closeSync, fstatSync, openSync, readFileSync, statSync, type BigIntStats } from 'node:fs';
import { resolve } from 'node:path';
import { parsePlanBytes, planReadError, readPlanBytes } from './parse.ts';
import type { Plan, PlanSource } from './types.ts';

/** A source over a plan already in hand (a stored proposal, a file read whole). */
export function planSourceOf(planPath: string, plan: Plan, bytes?: Uint8Array): PlanSource {
  return { planPath, plan: () => plan, bytes: () => bytes };
}

/** Reads and parses the plan keyed `planPath` from a worktree (each worktree has its own checkout of it). */
export function loadPlanSource(worktreeRoot: string, planPath: string): PlanSource {
  const bytes = readPlanBytes(resolve(worktreeRoot, planPath), planPath);
  return planSourceOf(planPath, parsePlanBytes(bytes, planPath), bytes);
}

/**
 * How long a plan file must have been left alone before its stat vouches for its bytes: longer than
 * any file system's time resolution (FAT's two seconds; ext4's clock tick), so a write in the same
 * tick as the read cannot leave the same stat behind (docs/cli-cost.md, "Unchanged plan files").
 */
export const SETTLED_MS = 2000;

/**
 * The plan file for a command that checks it against the store: stat'ed now (a missing file is
 * refused before any write), then read and parsed only as the store asks (docs/cli-cost.md). A file
 * that is not a regular one is read now, and has no `file`. Errors name `displayPath`.
 */
export function planFileSource(absPath: string, planPath: string, displayPath: string): PlanSource {
  let st: BigIntStats;
  try {
    st = statSync(absPath, { bigint: true });
  } catch (err) {
    throw planReadError(displayPath, err);
  }
  const stat = st.isFile() ? statKey(st) : undefined;
  let read: SettledRead | undefined;
  let parsed: Plan | undefined;
  const readOnce = (): SettledRead => (read ??= readSettled(absPath, displayPath));
  // Not a regular file: read now, so it fails (or not) as it always did, and nothing is remembered.
  if (stat === undefined) readOnce();
  // A plain object (not a class), so a copy made by spreading it keeps its methods.
  return {
    planPath,
    bytes: () => readOnce().bytes,
    plan: () => (parsed ??= parsePlanBytes(readOnce().bytes, displayPath)),
    ...(stat === undefined
      ? {}
      : {
          file: {
            path: absPath,
            stat,
            readIfChanged: (recorded) => (recorded === stat ? undefined : { settledStat: readOnce().settled }),
          },
        }),
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
