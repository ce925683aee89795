// The store's contract tests are written once against the Store interface and run once per backend
// (docs/architecture.md, "The store"): SQLite always; PostgreSQL wherever its server binaries are
// installed, on a throwaway server of the test file's own (SPRINGFIELD_TEST_POSTGRES=0 leaves it out).
// A factory opens a fresh, empty store through openStore, the way the CLI does: a temp SQLite file, or a
// new database on that server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Clock } from '../../src/core/clock.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { installedPostgres } from '../../scripts/postgresInstall.ts';
import { postgresForFile, type PostgresServer } from './postgres.ts';

export interface Backend {
  readonly name: 'sqlite' | 'postgres';
  /** A fresh store; `host` is this store's host id (PostgreSQL names holders by host; SQLite serves one machine). */
  open(t: TestContext, clock: Clock, options?: { host?: string; shareWith?: Store }): Store;
}

let databases = 0;
const urls = new WeakMap<Store, string>();

export function sqliteBackend(): Backend {
  return {
    name: 'sqlite',
    open(t, clock, options = {}) {
      if (options.shareWith) {
        const file = options.shareWith.describe().file ?? '';
        const store = openStore({ location: file, ifMissing: 'create', clock });
        t.after(() => store.close());
        return store;
      }
      const dir = mkdtempSync(join(tmpdir(), 'sf-contract-'));
      const store = openStore({ location: join(dir, 'state.db'), ifMissing: 'create', clock });
      t.after(async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      });
      return store;
    },
  };
}

export function postgresBackend(server: () => PostgresServer): Backend {
  return {
    name: 'postgres',
    open(t, clock, options = {}) {
      const url = options.shareWith
        ? (urls.get(options.shareWith) ?? '')
        : server().createDatabase(`contract_${process.pid}_${++databases}`);
      const store = openStore({
        location: url,
        repository: { id: 'contract-repo', source: 'configured' },
        host: options.host ?? 'host-a',
        clock,
      });
      urls.set(store, url);
      t.after(() => store.close());
      return store;
    },
  };
}

/** Whether this machine can start a throwaway PostgreSQL server for the tests. */
export function postgresAvailable(): boolean {
  return process.env.SPRINGFIELD_TEST_POSTGRES !== '0' && installedPostgres() !== undefined;
}

/**
 * The backends a contract file runs on: SQLite, and PostgreSQL when available, on a server started
 * before the file's first test and removed after its last. Call it once, at the file's top level.
 */
export function contractBackends(): Backend[] {
  if (!postgresAvailable()) {
    process.emitWarning(
      'PostgreSQL server binaries not found (or SPRINGFIELD_TEST_POSTGRES=0): the store contract runs on SQLite only',
    );
    return [sqliteBackend()];
  }
  const pg = postgresForFile({ durability: 'fast' });
  return [sqliteBackend(), postgresBackend(() => pg.server)];
}
