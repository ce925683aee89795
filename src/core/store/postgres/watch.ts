import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Watch } from '../store.ts';

/** The repository's notification channel: `sf_` and 40 hex digits of sha256(repo_id), as the events trigger computes it. */
export function channelOf(repoId: string): string {
  return `sf_${createHash('sha256').update(repoId, 'utf8').digest('hex').slice(0, 40)}`;
}

/**
 * Calls `listener` when any process commits events of this repository (LISTEN/NOTIFY; docs/postgres.md,
 * section 8). One connection outside the pool; when it drops it reconnects with backoff (0.5 s doubling
 * to 5 s) and then calls `listener` once, since notifications sent meanwhile are lost.
 */
export function watchRepository(url: string, repoId: string, listener: () => void, onDispose: () => void): Watch {
  let disposed = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let wait = 500;
  const channel = channelOf(repoId);
  const connect = (afterDrop: boolean): void => {
    if (disposed) return;
    const c = new pg.Client({ connectionString: url });
    client = c;
    const retry = (): void => {
      c.removeAllListeners();
      void c.end().catch(() => undefined);
      if (disposed) return;
      timer = setTimeout(() => connect(true), wait);
      timer.unref();
      wait = Math.min(wait * 2, 5000);
    };
    c.on('error', retry);
    c.on('notification', (n) => { if (n.channel === channel) listener(); });
    c.connect().then(() => c.query(`LISTEN ${channel}`)).then(() => {
      wait = 500;
      if (afterDrop) listener();
    }, retry);
  };
  connect(false);
  return {
    dispose(): void {
      if (disposed) return;
      disposed = true;
      if (timer) clearTimeout(timer);
      void client?.end().catch(() => undefined);
      onDispose();
    },
  };
}
