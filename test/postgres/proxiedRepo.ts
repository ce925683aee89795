// A repository whose CLI reaches a throwaway PostgreSQL through the cutting proxy (test/helpers/pgProxy.ts),
// with a store of the test's own connected directly: what the lost-reply tests (pending.json, the agents'
// tools) set up before they cut a reply.
import { join } from 'node:path';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { ensureCli, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import type { PostgresServer } from '../helpers/postgres.ts';
import { startPgProxy, type PgProxy } from '../helpers/pgProxy.ts';

export interface ProxiedRepo {
  readonly repo: Repo;
  readonly proxy: PgProxy;
  /** The same database without the proxy, as host-a: for checking what the server holds. */
  readonly direct: Store;
  /** The CLI's environment: the proxy's URL, this repository id, host-a, agent-a, a 1 s retry window. */
  readonly env: Record<string, string>;
  /** Where the CLI hands a lost operation's id over. */
  readonly pending: string;
  /** Something to close before the rest, after the test. */
  closeFirst(c: { close(): Promise<unknown> | unknown }): void;
}

/**
 * A new database `db` on `server`, a proxy in front of it, and a git repository holding `files`; all
 * closed after the test, after what the caller gave `closeFirst` (started on top of them: an MCP server).
 */
export async function proxiedRepo(
  t: { after(fn: () => unknown): void },
  server: PostgresServer,
  db: string,
  repoId: string,
  files: Record<string, string>,
): Promise<ProxiedRepo> {
  let first: { close(): Promise<unknown> | unknown } | null = null;
  ensureCli();
  const url = server.createDatabase(db);
  const proxy = await startPgProxy(url);
  const repo = makeRepo({ files });
  const direct = openStore({ location: url, repository: { id: repoId, source: 'configured' }, host: 'host-a' });
  t.after(async () => {
    await first?.close();
    await direct.close();
    proxy.close();
    repo.cleanup();
  });
  const env = {
    SPRINGFIELD_DATABASE_URL: proxy.url,
    SPRINGFIELD_REPO_ID: repoId,
    SPRINGFIELD_HOST: 'host-a',
    SPRINGFIELD_AGENT: 'agent-a',
    SPRINGFIELD_PG_CONNECT_TIMEOUT: '1',
  };
  return {
    repo,
    proxy,
    direct,
    env,
    pending: join(repo.root, '.git', 'springfield', 'pending.json'),
    closeFirst: (c) => {
      first = c;
    },
  };
}
