// A Unix-socket proxy in front of a throwaway PostgreSQL that can cut one connection at a chosen moment:
// a real connection loss as the client sees it (the socket closes; the server's backend sees EOF).
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Cut = 'before-send' | 'after-reply';

export interface PgProxy {
  /** The server's URL with its socket directory replaced by the proxy's. */
  readonly url: string;
  /**
   * Cuts the next connection whose client sends text containing `marker`: `before-send` drops that
   * message unsent; `after-reply` lets it through and drops the server's whole reply (up to its
   * ReadyForQuery, so after the implicit COMMIT). With `then: 'down'` the proxy also goes away at
   * that moment (see down()), before the client can reconnect. Resolves when the cut happened.
   */
  arm(marker: string, when: Cut, then?: 'down'): Promise<void>;
  /** The server goes away as a client sees it: the socket file is removed (connecting fails with ENOENT), every connection closed. */
  down(): void;
  /** Comes back on the same socket path. */
  up(): Promise<void>;
  close(): void;
}

/** ReadyForQuery: 'Z', length 5, then the transaction status. */
const READY = Buffer.from([0x5a, 0, 0, 0, 5]);

export function startPgProxy(url: string): Promise<PgProxy> {
  const socketDir = /[?&]host=([^&]+)/.exec(url)?.[1] ?? '';
  const port = /[?&]port=(\d+)/.exec(url)?.[1] ?? '5432';
  const dir = mkdtempSync(join(tmpdir(), 'sf-pgproxy-'));
  let armed: { marker: string; when: Cut; then: 'down' | undefined; done: () => void } | undefined;
  let listening = false;
  const path = join(dir, `.s.PGSQL.${port}`);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection(join(socketDir, `.s.PGSQL.${port}`));
    sockets.add(client);
    sockets.add(upstream);
    let cutting: { reply: Buffer[]; then: 'down' | undefined; done: () => void } | undefined;
    const cut = (then: 'down' | undefined, done: () => void): void => {
      // Away first: the client must not get back in between the cut and the proxy going away.
      if (then === 'down') down();
      client.destroy();
      upstream.destroy();
      done();
    };
    client.on('data', (chunk) => {
      const hit = armed && chunk.includes(armed.marker);
      if (hit && armed) {
        const { when, then, done } = armed;
        armed = undefined;
        if (when === 'before-send') return cut(then, done);
        cutting = { reply: [], then, done };
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!cutting) {
        client.write(chunk);
        return;
      }
      cutting.reply.push(chunk);
      if (Buffer.concat(cutting.reply).includes(READY)) cut(cutting.then, cutting.done);
    });
    for (const s of [client, upstream]) {
      s.on('error', () => undefined);
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(s);
      });
    }
  });
  function down(): void {
    if (listening) server.close();
    listening = false;
    for (const s of sockets) s.destroy();
  }
  const up = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        listening = true;
        resolve();
      });
    });
  return up().then(() => ({
    url: url.replace(`host=${socketDir}`, `host=${dir}`),
    arm: (marker, when, then) =>
      new Promise<void>((done) => {
        armed = { marker, when, then, done };
      }),
    down,
    up,
    close: () => {
      down();
      rmSync(dir, { recursive: true, force: true });
    },
  }));
}
