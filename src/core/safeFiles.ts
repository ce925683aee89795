import { randomBytes } from 'node:crypto';
import {
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { EnvironmentError, RefusedError } from './errors.ts';
import { messageOf } from '../shared/errorMessage.ts';

/**
 * Files Springfield writes where someone else may have planted links: the repository's own
 * `.springfield/` (a clone brings whatever was committed) and shared temporary directories. A
 * directory is used only if it is a real directory (not a link) of this user's; a file is always
 * created new, under a fresh random name, with O_EXCL, which never follows a link. See docs/trust.md.
 */

/** Makes `dir` (its parent must exist) or checks the one there; refuses a link, another user's, or (`private`) one others may write. */
export function ensureOwnDirectory(dir: string, options: { private?: boolean } = {}): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      mkdirSync(dirname(dir), { recursive: true });
      return ensureOwnDirectory(dir, options);
    }
    if (code !== 'EEXIST')
      throw new EnvironmentError('directory_unusable', `${dir}: cannot create the directory (${messageOf(err)})`);
  }
  const st = lstatSync(dir);
  if (st.isSymbolicLink())
    throw new EnvironmentError(
      'unsafe_directory',
      `${dir} is a link; refusing to write through it (remove it: Springfield makes the directory itself)`,
    );
  if (!st.isDirectory())
    throw new EnvironmentError('unsafe_directory', `${dir} is not a directory; refusing to write into it`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw new EnvironmentError(
      'unsafe_directory',
      `${dir} belongs to another user (uid ${st.uid}); refusing to write into it`,
    );
  if (options.private && process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
    throw new EnvironmentError(
      'unsafe_directory',
      `${dir} may be read or written by other users (mode ${(st.mode & 0o777).toString(8)}); make it private with: chmod 700 ${dir}`,
    );
  }
}

/** A fresh file name `<stem>-<random><ext>` in `dir`, opened for writing with O_EXCL (mode 0600 unless given); returns its path and descriptor. */
export function openExclusive(dir: string, stem: string, ext: string, mode = 0o600): { path: string; fd: number } {
  const path = join(dir, `${stem}-${randomBytes(6).toString('hex')}${ext}`);
  return { path, fd: openSync(path, 'wx', mode & 0o777) };
}

/** Writes `data` to a new file in `dir` (see openExclusive) and returns its path. */
export function writeExclusive(
  dir: string,
  stem: string,
  ext: string,
  data: string | Uint8Array,
  mode = 0o600,
): string {
  const { path, fd } = openExclusive(dir, stem, ext, mode);
  try {
    if (typeof data === 'string') writeSync(fd, data);
    else writeSync(fd, data);
  } finally {
    closeSync(fd);
  }
  return path;
}

/**
 * Replaces `target` atomically: the data goes to a new exclusive file beside it (mode 0600 unless
 * given: pass an existing file's mode to keep it), renamed over it (a link at `target` is replaced,
 * not followed). A failure is an `unwritable` error naming the file.
 */
export function replaceFile(target: string, data: string | Uint8Array, mode = 0o600): void {
  const dir = dirname(target);
  let temp: string | undefined;
  try {
    temp = writeExclusive(dir, `.${target.slice(dir.length + 1)}`, '.tmp', data, mode);
    renameSync(temp, target);
  } catch (err) {
    if (temp) rmSync(temp, { force: true });
    throw unwritable(target, err);
  }
}

/** lstat that refuses a symbolic link (a planted link could point a write anywhere); undefined when absent. */
export function statNoLink(path: string, what: string): Stats | undefined {
  let stat;
  try {
    stat = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unwritable(path, err);
  }
  if (stat.isSymbolicLink())
    throw new RefusedError('symlink_refused', `${path}: ${what} is a symbolic link; refusing to write through it`);
  return stat;
}

/** Creates `path` under its own name, exclusively (O_EXCL: never through a link or over a file that appeared meanwhile). */
export function createExclusively(path: string, content: string): void {
  try {
    writeFileSync(path, content, { flag: 'wx', mode: 0o644 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      throw new RefusedError('file_appeared', `${path}: appeared while writing; run the command again`);
    throw unwritable(path, err);
  }
}

export function unwritable(path: string, err: unknown): EnvironmentError {
  return new EnvironmentError('unwritable', `${path}: cannot write (${messageOf(err)})`);
}
