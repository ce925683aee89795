import pg from 'pg';
import type { Watch } from '../store.ts';
import { connectionConfig } from './connection.ts';
import { channelOf } from './notify.ts';

/**
 * Calls `listener` when any process commits events of this repository (LISTEN/NOTIFY; docs/postgres-design.md,
 * "Live updates"). One connection outside the pool; when it drops it reconnects with backoff (0.5 s doubling
 * to 5 s) and then calls `listener` once, since notifications sent meanwhile are lost. A writer sends
 * its notification after its commit, so one that dies in between sends none: every `safetyMs` the
 * connection also asks for the repository's newest event transaction and calls `listener` when it
 * moved without a notification.
 */
export function watchRepository(
  url: string,
  repoId: string,
  listener: () => void,
  onDispose: () => void,
  safetyMs = 5000,
): Watch {
  let disposed = false;
  let client: pg.Client | undefined;
  let listening = false;
  let timer: NodeJS.Timeout | undefined;
  let wait = 500;
  /** The newest event transaction the last safety check saw (undefined: none yet on this connection). */
  let newest: string | null | undefined;
  let heard = false;
  const channel = channelOf(repoId);
  const connect = (afterDrop: boolean): void => {
    if (disposed) return;
    const c = new pg.Client(connectionConfig(url));
    client = c;
    const retry = (): void => {
      listening = false;
      c.removeAllListeners();
      void c.end().catch(() => undefined);
      if (disposed) return;
      timer = setTimeout(() => connect(true), wait);
      timer.unref();
      wait = Math.min(wait * 2, 5000);
    };
    c.on('error', retry);
    c.on('notification', (n) => {
      if (n.channel !== channel) return;
      heard = true;
      listener();
    });
    c.connect()
      .then(() => c.query(`LISTEN ${channel}`))
      .then(() => {
        wait = 500;
        listening = true;
        newest = undefined;
        if (afterDrop) listener();
      }, retry);
  };
  const check = (): void => {
    const c = client;
    if (disposed || !listening || !c) return;
    c.query<{ x: string | null }>('SELECT max(xid)::text AS x FROM springfield.events WHERE repo_id = $1', [
      repoId,
    ]).then(
      (r) => {
        const x = r.rows[0]?.x ?? null;
        if (newest !== undefined && x !== newest && !heard && !disposed) listener();
        newest = x;
        heard = false;
      },
      () => undefined,
    );
  };
  const safety = setInterval(check, safetyMs);
  safety.unref();
  connect(false);
  return {
    dispose(): void {
      if (disposed) return;
      disposed = true;
      clearInterval(safety);
      if (timer) clearTimeout(timer);
      void client?.end().catch(() => undefined);
      onDispose();
    },
  };
}
