import { existsSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { Watch } from '../store.ts';

/** How soon after the folder changes the counter is read (a burst of WAL writes is one look). */
const SETTLE_MS = 40;
/** The safety net when the folder watch misses something (or cannot be set up). */
const POLL_MS = 2000;

/**
 * Notices writes by other connections within a fraction of a second: a watch on the database's
 * folder (WAL writes land there), confirmed by `PRAGMA data_version`, with a slow timer as a safety
 * net; no busy polling. The timer never keeps a process alive.
 */
export function watchDatabase(path: string, version: () => number, listener: () => void, onDispose: () => void): Watch {
  let last = safe(version);
  let pending: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  const look = (): void => {
    const v = safe(version);
    if (v === undefined || v === last) return;
    last = v;
    listener();
  };
  const dir = dirname(path);
  if (path !== ':memory:' && existsSync(dir)) {
    try {
      watcher = watch(dir, () => {
        pending ??= setTimeout(() => {
          pending = undefined;
          look();
        }, SETTLE_MS);
      });
      watcher.on('error', () => undefined);
    } catch {
      watcher = undefined;
    }
  }
  const timer = setInterval(look, POLL_MS);
  timer.unref();
  return {
    dispose: () => {
      clearInterval(timer);
      if (pending) clearTimeout(pending);
      watcher?.close();
      onDispose();
    },
  };
}

/** The counter, or undefined once the connection is closed. */
function safe(version: () => number): number | undefined {
  try {
    return version();
  } catch {
    return undefined;
  }
}
