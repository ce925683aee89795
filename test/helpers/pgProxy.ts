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
   * ReadyForQuery, so after the implicit COMMIT). Resolves when the cut happened.
   */
  arm(marker: string, when: Cut): Promise<void>;
  close(): void;
}

/** ReadyForQuery: 'Z', length 5, then the transaction status. */
const READY = Buffer.from([0x5a, 0, 0, 0, 5]);

export function startPgProxy(url: string): Promise<PgProxy> {
  const socketDir = /[?&]host=([^&]+)/.exec(url)?.[1] ?? '';
  const port = /[?&]port=(\d+)/.exec(url)?.[1] ?? '5432';
  const dir = mkdtempSync(join(tmpdir(), 'sf-pgproxy-'));
  let armed: { marker: string; when: Cut; done: () => void } | undefined;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection(join(socketDir, `.s.PGSQL.${port}`));
    sockets.add(client);
    sockets.add(upstream);
    let cutting: { reply: Buffer[]; done: () => void } | undefined;
    const cut = (done: () => void): void => {
      client.destroy();
      upstream.destroy();
      done();
    };
    client.on('data', (chunk) => {
      const hit = armed && chunk.includes(armed.marker);
      if (hit && armed) {
        const { when, done } = armed;
        armed = undefined;
        if (when === 'before-send') return cut(done);
        cutting = { reply: [], done };
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!cutting) {
        client.write(chunk);
        return;
      }
      cutting.reply.push(chunk);
      if (Buffer.concat(cutting.reply).includes(READY)) cut(cutting.done);
    });
    for (const s of [client, upstream]) {
      s.on('error', () => undefined);
      s.on('close', () => { client.destroy(); upstream.destroy(); sockets.delete(s); });
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(join(dir, `.s.PGSQL.${port}`), () => resolve({
      url: url.replace(`host=${socketDir}`, `host=${dir}`),
      arm: (marker, when) => new Promise<void>((done) => { armed = { marker, when, done }; }),
      close: () => {
        for (const s of sockets) s.destroy();
        server.close();
        rmSync(dir, { recursive: true, force: true });
      },
    }));
  });
}
