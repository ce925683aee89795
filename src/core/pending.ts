import { closeSync, constants, fstatSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EnvironmentError } from './errors.ts';
import { ensureOwnDirectory } from './safeFiles.ts';
import { messageOf } from '../shared/errorMessage.ts';

/**
 * The hand-over of a write whose reply was lost to the next run of the same command
 * (docs/postgres-design.md, "Failures, retries, idempotence", "Retrying from a new process"): one file per worktree,
 * `<worktree's git dir>/springfield/pending.json`, created exclusively (O_EXCL|O_NOFOLLOW, 0600) and
 * read without following a link. Nothing in it is run; its operation id is only looked up, scoped to
 * this repository and holder.
 */
export interface PendingOperation {
  readonly v: 1;
  /** The operation id (events.op_id) of the write whose outcome is unknown. */
  readonly op: string;
  /** The command that sent it, as its name (`claim`, `epic create`). */
  readonly command: string;
  readonly plan_path: string | null;
  /** The epic it was for (`signal`, `plan propose`); absent in files that name none. */
  readonly epic_id: string | null;
  readonly holder: { readonly host: string; readonly worktree: string; readonly agent: string | null };
  /** When the process gave up, ISO-8601 UTC. */
  readonly at: string;
}

export type PendingRead =
  | { readonly state: 'absent' }
  | { readonly state: 'unusable'; readonly why: string }
  | { readonly state: 'found'; readonly pending: PendingOperation };

const MAX_BYTES = 64 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** Where a worktree's hand-over lives. */
export function pendingPath(gitDir: string): string {
  return join(gitDir, 'springfield', 'pending.json');
}

/** The hand-over at `path`: absent, unusable (a link, not a file, unreadable, not one of ours: why), or found. */
export function readPending(path: string): PendingRead {
  let text: string;
  try {
    text = readNoFollow(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { state: 'absent' };
    if (code === 'ELOOP' || code === 'EMLINK') return { state: 'unusable', why: 'it is a symbolic link' };
    return { state: 'unusable', why: messageOf(err).split('\n')[0] ?? String(code) };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { state: 'unusable', why: 'not JSON' };
  }
  const pending = asPending(data);
  return pending
    ? { state: 'found', pending }
    : { state: 'unusable', why: 'not a pending operation Springfield wrote' };
}

/**
 * Writes the hand-over: the directory is made (a real directory of this user's, never a link) and the
 * file created exclusively, 0600; an existing file or link at `path` is left alone and reported.
 */
export function writePending(path: string, pending: PendingOperation): void {
  const dir = dirname(path);
  ensureOwnDirectory(dir);
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EEXIST' ? 'a file or link is already there' : messageOf(err);
    throw new EnvironmentError('pending_unwritable', `${path}: cannot record the pending operation (${why})`);
  }
  try {
    writeSync(fd, JSON.stringify(pending, null, 2) + '\n');
  } finally {
    closeSync(fd);
  }
}

/** Removes the hand-over of operation `op` (a file now holding another id, or a link, is left alone). */
export function removePending(path: string, op: string): void {
  const now = readPending(path);
  if (now.state !== 'found' || now.pending.op !== op) return;
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new EnvironmentError(
        'pending_unwritable',
        `${path}: cannot remove the pending operation (${messageOf(err)})`,
      );
  }
}

function readNoFollow(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | NOFOLLOW | (constants.O_NONBLOCK ?? 0));
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTFILE' });
    if (st.size > MAX_BYTES) throw Object.assign(new Error(`larger than ${MAX_BYTES} bytes`), { code: 'EFBIG' });
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function asPending(data: unknown): PendingOperation | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const d = data as Record<string, unknown>;
  const h = d.holder as Record<string, unknown> | null | undefined;
  const text = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 4096;
  if (d.v !== 1 || typeof d.op !== 'string' || !UUID.test(d.op) || !text(d.command) || !text(d.at)) return undefined;
  if (d.plan_path !== null && !text(d.plan_path)) return undefined;
  const epic = d.epic_id === undefined || d.epic_id === null ? null : text(d.epic_id) ? d.epic_id : undefined;
  if (epic === undefined) return undefined;
  if (typeof h !== 'object' || h === null || !text(h.host) || !text(h.worktree) || (h.agent !== null && !text(h.agent)))
    return undefined;
  return {
    v: 1,
    op: d.op,
    command: d.command,
    plan_path: d.plan_path,
    epic_id: epic,
    holder: { host: h.host, worktree: h.worktree, agent: h.agent },
    at: d.at,
  };
}
