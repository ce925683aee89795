import { randomBytes } from 'node:crypto';
import { lstatSync, renameSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EnvironmentError, RefusedError } from '../errors.ts';

/** lstat that refuses a symbolic link (a planted link could point a write anywhere); undefined when absent. */
export function statNoLink(path: string, what: string): Stats | undefined {
  let stat;
  try {
    stat = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unwritable(path, err);
  }
  if (stat.isSymbolicLink()) throw new RefusedError('symlink_refused', `${path}: ${what} is a symbolic link; refusing to write through it`);
  return stat;
}

/** Creates `path` exclusively (O_EXCL: never through a link or over a file that appeared meanwhile). */
export function createExclusively(path: string, content: string): void {
  try {
    writeFileSync(path, content, { flag: 'wx', mode: 0o644 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new RefusedError('file_appeared', `${path}: appeared while writing; run the command again`);
    throw unwritable(path, err);
  }
}

/** Replaces an existing regular file through a fresh, exclusively created file beside it and a rename. */
export function replaceFile(path: string, content: string, mode: number): void {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, content, { flag: 'wx', mode: mode & 0o777 });
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw unwritable(path, err);
  }
}

export function unwritable(path: string, err: unknown): EnvironmentError {
  return new EnvironmentError('unwritable', `${path}: cannot write (${err instanceof Error ? err.message : String(err)})`);
}
