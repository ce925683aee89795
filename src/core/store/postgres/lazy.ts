import { EnvironmentError, ownError } from '../../errors.ts';
import { redactDatabaseUrl } from '../databaseUrl.ts';
import type { StoreSettings } from '../index.ts';
import type { Store, StoreDescription, Watch } from '../store.ts';

type Loaded = Store & { schemaVersion(): Promise<number> };

/**
 * The PostgreSQL store, loaded on its first operation: node-postgres and the backend are imported
 * only when a URL is set, so the SQLite path's start-up does not pay for them (docs/postgres-design.md, "The driver: pg (node-postgres)").
 */
export function openPostgresLazily(settings: StoreSettings): Loaded {
  if (!settings.repository || !settings.host) {
    throw new EnvironmentError(
      'no_repository_id',
      `${redactDatabaseUrl(settings.location)}: a PostgreSQL store needs the repository id and the host id`,
    );
  }
  const options = {
    url: settings.location,
    repo: settings.repository,
    host: settings.host,
    ...(settings.clock ? { clock: settings.clock } : {}),
    ...(settings.connectRetryMs !== undefined ? { connectRetryMs: settings.connectRetryMs } : {}),
  };
  let loading: Promise<Loaded> | undefined;
  let closed = false;
  const load = (): Promise<Loaded> => (loading ??= import('./entry.ts').then((m) => m.postgresStore(options)));
  const description: StoreDescription = {
    backend: 'postgres',
    place: redactDatabaseUrl(settings.location),
    file: null,
  };
  return new Proxy({} as Loaded, {
    get(_target, name) {
      if (name === 'then') return undefined;
      if (name === 'describe') return () => description;
      if (name === 'close')
        return async () => {
          closed = true;
          if (loading) await (await loading).close();
        };
      if (name === 'watch') {
        return (listener: () => void): Watch => {
          let inner: Watch | undefined;
          let disposed = false;
          void load().then((s) => {
            if (!disposed && !closed) inner = s.watch(listener);
          });
          return {
            dispose: () => {
              disposed = true;
              inner?.dispose();
            },
          };
        };
      }
      return async (...args: unknown[]) => {
        const store = await load();
        try {
          return await (store[name as keyof Loaded] as (...a: unknown[]) => unknown)(...args);
        } catch (err) {
          throw ownError(err);
        }
      };
    },
  });
}
