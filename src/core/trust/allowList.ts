import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { replaceFile } from '../safeFiles.ts';
import { ensureStateDir, stateDirIsOurs, userStateDir } from './stateDir.ts';

/** One allowed content of one repository's config file. */
export interface AllowEntry {
  readonly config_path: string;
  readonly hash: string;
  readonly allowed_at: string;
}

interface AllowRecord {
  readonly repository: string;
  readonly entries: AllowEntry[];
}

/** Allowed contents kept per repository (the newest first); older ones beyond this are forgotten. */
const KEEP = 20;

/** The record file of a repository: keyed by its real common git dir, so every worktree shares it. */
export function allowFile(env: NodeJS.ProcessEnv, repository: string): string {
  return join(userStateDir(env), `allowed-${createHash('sha256').update(repository).digest('hex').slice(0, 32)}.json`);
}

/** What the user allowed for `repository`; nothing when there is no record or it is not the user's own file. */
export function readAllowed(env: NodeJS.ProcessEnv, repository: string): AllowEntry[] {
  if (!stateDirIsOurs(env)) return [];
  let fd: number;
  try {
    fd = openSync(allowFile(env, repository), constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return [];
  }
  try {
    const uid = process.getuid?.();
    if (uid !== undefined && fstatSync(fd).uid !== uid) return [];
    const record = JSON.parse(readFileSync(fd, 'utf8')) as Partial<AllowRecord>;
    if (record.repository !== repository || !Array.isArray(record.entries)) return [];
    return record.entries.filter(
      (e): e is AllowEntry =>
        typeof e?.hash === 'string' && typeof e.config_path === 'string' && typeof e.allowed_at === 'string',
    );
  } catch {
    return [];
  } finally {
    closeSync(fd);
  }
}

/** Records that `hash` of `configPath` may run; the file is written new and renamed into place. Returns the record file. */
export function recordAllowed(env: NodeJS.ProcessEnv, repository: string, entry: AllowEntry): string {
  ensureStateDir(env);
  const others = readAllowed(env, repository).filter(
    (e) => !(e.hash === entry.hash && e.config_path === entry.config_path),
  );
  const record: AllowRecord = { repository, entries: [entry, ...others].slice(0, KEEP) };
  const file = allowFile(env, repository);
  replaceFile(file, JSON.stringify(record, null, 2) + '\n');
  return file;
}

/** Forgets everything allowed for `repository`; returns whether there was anything. */
export function forgetAllowed(env: NodeJS.ProcessEnv, repository: string): boolean {
  ensureStateDir(env);
  const had = readAllowed(env, repository).length > 0;
  rmSync(allowFile(env, repository), { force: true });
  return had;
}
