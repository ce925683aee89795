// The store's contract tests run once per backend (docs/postgres.md, "Tests and the throwaway server"): a factory opens a
// fresh, empty store through openStore, the way the CLI does — a temp SQLite file, or a new database on
// this file's throwaway PostgreSQL server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Clock } from '../../src/core/clock.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import type { PostgresServer } from '../helpers/postgres.ts';

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
      t.after(async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); });
      return store;
    },
  };
}

export function postgresBackend(server: () => PostgresServer): Backend {
  return {
    name: 'postgres',
    open(t, clock, options = {}) {
      const url = options.shareWith ? urls.get(options.shareWith) ?? '' : server().createDatabase(`contract_${process.pid}_${++databases}`);
      const store = openStore({ location: url, repository: { id: 'contract-repo', source: 'configured' }, host: options.host ?? 'host-a', clock });
      urls.set(store, url);
      t.after(() => store.close());
      return store;
    },
  };
}
