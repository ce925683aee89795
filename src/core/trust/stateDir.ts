import { lstatSync, chmodSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { ensureOwnDirectory } from '../safeFiles.ts';

/**
 * The user's own Springfield state, outside every repository: `$XDG_STATE_HOME/springfield`, else
 * `~/.local/state/springfield` (`%LOCALAPPDATA%\springfield` on Windows). What the user allowed is
 * kept here, so nothing a repository contains can allow itself (docs/trust.md).
 */
export function userStateDir(env: NodeJS.ProcessEnv): string {
  if (env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME)) return join(env.XDG_STATE_HOME, 'springfield');
  if (process.platform === 'win32' && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, 'springfield');
  return join(env.HOME || homedir(), '.local', 'state', 'springfield');
}

/**
 * Makes the state directory 0700 (and checks the one there: a real directory, this user's) before
 * anything is read from or written to it. Loose permissions on our own directory are tightened.
 */
export function ensureStateDir(env: NodeJS.ProcessEnv): string {
  const dir = userStateDir(env);
  ensureOwnDirectory(dir);
  if (process.platform !== 'win32' && (lstatSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  ensureOwnDirectory(dir, { private: true });
  return dir;
}

/** Whether the state directory is there and safe to believe: a real directory, this user's, private. */
export function stateDirIsOurs(env: NodeJS.ProcessEnv): boolean {
  try {
    const st = lstatSync(userStateDir(env));
    const uid = process.getuid?.();
    return (
      st.isDirectory() &&
      (uid === undefined || st.uid === uid) &&
      (process.platform === 'win32' || (st.mode & 0o077) === 0)
    );
  } catch {
    return false;
  }
}
