import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { EnvironmentError, OutcomeUnknownError } from '../../errors.ts';
import { redactDatabaseUrl } from '../databaseUrl.ts';
import { isConnectionLost, isRetryable, isUnreachable, mapPgError, unreachableError } from './connection.ts';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION } from './migrations.ts';
import { commitAndNotify, rowsOf } from './notify.ts';

/** One transaction's view: its queries (every one scoped by the caller to `repo`), its time and who acts. */
export interface Tx {
  /** Rows of one statement. */
  q<R = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<R[]>;
  /** The transaction's time: the server's `now()`, or the test clock's. ISO-8601 UTC. */
  readonly now: string;
  readonly repo: string;
  readonly host: string;
  /** This operation's id, stored in its events so a lost reply can be looked up (docs/postgres-design.md, "Failures, retries, idempotence"). */
  readonly op: string;
  /**
   * Runs `statements` and COMMIT in one round trip (the simple query protocol, values inlined with
   * `lit`) and returns each statement's rows: a write whose last statements lock a hot row holds that
   * lock for no client round trip. An error in any statement rolls the whole transaction back.
   * `afterCommit` runs after the COMMIT, in a transaction of its own (not in a preview that rolls
   * back); its rows follow the statements'.
   */
  finish(statements: readonly string[], afterCommit?: readonly string[]): Promise<Record<string, unknown>[][]>;
  /** A value as an SQL literal, for `finish` (null → NULL; objects as JSON). */
  lit(value: unknown): string;
}

/**
 * One operation sent as a single statement (or a batch of statements in one simple query, which the
 * server runs as one implicit transaction) without BEGIN: one round trip (docs/postgres-design.md, "Concurrency").
 */
export interface Direct {
  /**
   * `EXECUTE name(values…)` for `batch`, `text` prepared as `name` with parameter `types` once per
   * connection (the plan of a long statement costs more than a round trip on a local socket).
   */
  execute(name: string, types: readonly string[], text: string, values: readonly unknown[]): Promise<string>;
  /**
   * Statements with inlined values (`lit`), one round trip, one transaction; each statement's rows,
   * then those of `afterCommit`, run after the COMMIT in a transaction of their own (as Tx.finish).
   */
  batch(statements: readonly string[], afterCommit?: readonly string[]): Promise<Record<string, unknown>[][]>;
  lit(value: unknown): string;
  /** The test clock's time (ISO-8601), or null: the statement uses the server's `now()`. */
  readonly now: string | null;
  readonly repo: string;
  readonly host: string;
  readonly op: string;
}

export interface SessionOptions {
  readonly url: string;
  readonly repo: { readonly id: string; readonly source: 'root_commit' | 'configured' };
  readonly host: string;
  readonly clock?: Clock;
  /** How long to keep trying to connect before failing with database_unreachable (default 10 s). */
  readonly connectRetryMs?: number;
}

/**
 * Runs operations as READ COMMITTED transactions (reads: REPEATABLE READ READ ONLY, one snapshot) on
 * clients of one pool, running an operation again after a deadlock or serialization failure.
 * Migrates the schema once per process, under an advisory lock; refuses a newer one untouched.
 */
export class Session {
  readonly options: SessionOptions;
  private readonly pool: pg.Pool;
  private ready: Promise<void> | undefined;

  constructor(pool: pg.Pool, options: SessionOptions) {
    this.pool = pool;
    this.options = options;
  }

  get place(): string {
    return redactDatabaseUrl(this.options.url);
  }

  /** A write; with `commit` false it is rolled back (a preview that refuses exactly as the write would). */
  write<T>(doing: string, fn: (tx: Tx) => Promise<T>, commit = true): Promise<T> {
    return this.run(doing, 'BEGIN', fn, commit ? 'notify' : 'rollback');
  }

  read<T>(doing: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.run(doing, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn, 'commit');
  }

  /**
   * Runs `fn`'s single-statement operation on a pooled client outside any explicit transaction, again
   * after a deadlock or serialization failure (the statement's writes were rolled back with it). Errors
   * `fn` lets through are mapped as a transaction's are.
   */
  async direct<T>(
    doing: string,
    fn: (d: Direct) => Promise<T>,
    recover?: (tx: Tx, op: string) => Promise<T | null>,
  ): Promise<T> {
    await (this.ready ??= this.migrate().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    }));
    const op = randomUUID();
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect(doing);
      let broken = false;
      let released = false;
      try {
        return await fn({
          execute: async (name, types, text, values) => {
            let names = prepared.get(client);
            if (!names) prepared.set(client, (names = new Set()));
            if (!names.has(name)) {
              await client.query(`PREPARE ${name} (${types.join(', ')}) AS ${text}`);
              names.add(name);
            }
            return `EXECUTE ${name}(${values.map((v) => literal(client, v)).join(', ')})`;
          },
          batch: async (statements, afterCommit = []) => {
            // The operation id leads the text, so a lost reply's backend can be found in pg_stat_activity.
            const ending = commitAndNotify(
              this.options.repo.id,
              this.options.host,
              (v) => literal(client, v),
              afterCommit,
            );
            const results = await queryAll(client, `/* sf op ${op} */ ${[...statements, ...ending].join(';\n')}`);
            return rowsOf(
              results.map((r) => r.rows as Record<string, unknown>[]),
              statements.length,
              afterCommit.length,
            );
          },
          lit: (v) => literal(client, v),
          now: this.options.clock ? this.options.clock.now().toISOString() : null,
          repo: this.options.repo.id,
          host: this.options.host,
          op,
        });
      } catch (err) {
        broken = isConnectionLost(err);
        if (broken && recover && attempt < 5) {
          // The reply was lost: did the operation commit? (docs/postgres-design.md, "Failures, retries, idempotence")
          released = true;
          client.release(true);
          const found = await this.lookUp(doing, processOf(client), op, recover).catch(() => {
            throw mapPgError(err, this.options.url, doing, op);
          });
          if (found !== null) return found;
          continue;
        }
        if (attempt < 5 && isRetryable(err)) {
          await sleep(10 + Math.random() * 90);
          continue;
        }
        throw mapPgError(err, this.options.url, doing, op);
      } finally {
        if (!released) client.release(broken);
      }
    }
  }

  /**
   * Whether operation `op`, whose reply was lost, committed: its backend (which may still be running
   * it) is ended first, so that what the events say is final; then `recover` rebuilds the result from
   * the rows the operation wrote, or says null (nothing committed: the caller runs it again).
   */
  private async lookUp<T>(
    doing: string,
    pid: number | null,
    op: string,
    recover: (tx: Tx, op: string) => Promise<T | null>,
  ): Promise<T | null> {
    const client = await this.connect(doing);
    try {
      await client.query(
        `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE pid = $1 AND query LIKE $2`,
        [pid ?? 0, `/* sf op ${op} */%`],
      );
    } finally {
      client.release();
    }
    return this.read(doing, (tx) => recover(tx, op));
  }

  /**
   * The same lookup for an operation an earlier process sent and lost (its id handed over in
   * pending.json: docs/postgres-design.md, "Failures, retries, idempotence"): a backend still running it — found by the id that
   * leads its text, whatever its pid — is ended first, then `recover` reads what it committed
   * (null: nothing). When the server cannot be reached the outcome stays unknown, with the same id.
   */
  async settle<T>(doing: string, op: string, recover: (tx: Tx, op: string) => Promise<T | null>): Promise<T | null> {
    try {
      await (this.ready ??= this.migrate().catch((err: unknown) => {
        this.ready = undefined;
        throw err;
      }));
      const client = await this.connect(doing);
      try {
        await client.query(
          `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE $1`,
          [`/* sf op ${op} */%`],
        );
      } finally {
        client.release();
      }
      return await this.read(doing, (tx) => recover(tx, op));
    } catch (err) {
      if (err instanceof EnvironmentError && err.code === 'database_unreachable') {
        throw new OutcomeUnknownError(
          op,
          `PostgreSQL at ${this.place} is unreachable while ${doing}; its outcome is still unknown: run the same command again (it picks up where this one stopped)`,
        );
      }
      throw err;
    }
  }

  /** The schema version on the server (0: none yet), without changing anything. */
  async schemaVersion(): Promise<number> {
    const client = await this.connect('reading the schema version');
    try {
      return await versionOf(client);
    } finally {
      client.release();
    }
  }

  /** `end`: how the transaction ends — committed and the repository notified (a write), committed (a read), or rolled back. */
  private async run<T>(
    doing: string,
    begin: string,
    fn: (tx: Tx) => Promise<T>,
    end: 'notify' | 'commit' | 'rollback',
  ): Promise<T> {
    await (this.ready ??= this.migrate().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    }));
    const op = randomUUID();
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect(doing);
      let broken = false;
      let begun = false;
      try {
        // BEGIN and the server's clock in one round trip (a simple query with two statements).
        const now = this.options.clock
          ? (await client.query(begin), this.options.clock.now().toISOString())
          : String((await queryAll(client, `${begin}; SELECT now() AS now`))[1]?.rows[0]?.now ?? '');
        begun = true;
        let finished = false;
        const mark = end === 'notify' ? `/* sf op ${op} */ ` : '';
        const ending = (after: readonly string[] = []): string[] =>
          end === 'notify'
            ? commitAndNotify(this.options.repo.id, this.options.host, (v) => literal(client, v), after)
            : [end === 'commit' ? 'COMMIT' : 'ROLLBACK'];
        const tx: Tx = {
          q: async <R>(text: string, values: readonly unknown[] = []) =>
            (await client.query(text, values as unknown[])).rows as R[],
          now,
          repo: this.options.repo.id,
          host: this.options.host,
          op,
          lit: (v) => literal(client, v),
          finish: async (statements, afterCommit = []) => {
            finished = true;
            // A preview runs afterCommit before its ROLLBACK: it shows what the write would do.
            const before = end === 'notify' ? statements : [...statements, ...afterCommit];
            const after = end === 'notify' ? afterCommit : [];
            // A write's text leads with its operation id, as in direct(): a later lookup can end the backend still running it.
            const results = await queryAll(client, `${mark}${[...before, ...ending(after)].join(';\n')}`);
            return rowsOf(
              results.map((r) => r.rows as Record<string, unknown>[]),
              before.length,
              after.length,
            );
          },
        };
        const result = await fn(tx);
        if (!finished) await client.query(`${mark}${ending().join(';\n')}`);
        return result;
      } catch (err) {
        broken = isConnectionLost(err);
        if (!broken)
          await client.query('ROLLBACK').catch(() => {
            broken = true;
          });
        // A pooled connection whose server restarted fails at its BEGIN: nothing of the operation was sent.
        if (attempt < 5 && (isRetryable(err) || (broken && !begun))) {
          await sleep(10 + Math.random() * 90);
          continue;
        }
        // A write's COMMIT may have happened with its reply lost: the error carries the id (docs/postgres-design.md, "Failures, retries, idempotence").
        throw mapPgError(err, this.options.url, doing, end === 'notify' ? op : undefined);
      } finally {
        client.release(broken);
      }
    }
  }

  /**
   * A client, trying again while the server cannot be reached for up to connectRetryMs (or until
   * `deadline`): refused, starting up, or the connection lost while it was being made (a restart) —
   * nothing was sent yet, so the failure is reported as unreachable when the time is up.
   */
  private async connect(doing: string, deadline = Date.now() + this.retryMs): Promise<pg.PoolClient> {
    for (let wait = 100; ; wait = Math.min(wait * 2, 1000)) {
      try {
        const client = await this.pool.connect();
        // A checked-out client whose server goes away emits 'error' besides failing its query: without a
        // listener that event would end the process. The failing query is what reports it.
        if (!guarded.has(client)) {
          guarded.add(client);
          client.on('error', () => undefined);
        }
        return client;
      } catch (err) {
        if (!isUnreachable(err) && !isConnectionLost(err)) throw mapPgError(err, this.options.url, doing);
        if (Date.now() + wait > deadline) throw unreachableError(err, this.options.url);
        await sleep(wait);
      }
    }
  }

  private get retryMs(): number {
    return this.options.connectRetryMs ?? 10_000;
  }

  /**
   * Migrates the schema and registers the repository, again while the server cannot be reached or the
   * connection is lost (a restart): every step of it may run twice (a migration is one transaction
   * that checks the version under a lock; the repository's row is inserted if missing), and the
   * command's own operation has not been sent yet.
   */
  private async migrate(): Promise<void> {
    const deadline = Date.now() + this.retryMs;
    for (let wait = 100; ; wait = Math.min(wait * 2, 1000)) {
      try {
        return await this.migrateOnce(deadline);
      } catch (err) {
        if (!isConnectionLost(err) && !isUnreachable(err)) throw mapPgError(err, this.options.url, 'opening the store');
        if (Date.now() + wait > deadline) throw unreachableError(err, this.options.url);
        await sleep(wait);
      }
    }
  }

  private async migrateOnce(deadline: number): Promise<void> {
    const client = await this.connect('opening the store', deadline);
    let broken = false;
    try {
      let version = await versionOf(client);
      if (version > PG_SCHEMA_VERSION) throw tooNew(this.place, version);
      if (version < PG_SCHEMA_VERSION) {
        await client.query('BEGIN');
        try {
          // Sixteen agents starting at once migrate once: the others wait here, then find it done.
          await client.query('SELECT pg_advisory_xact_lock(1397096448, 0)');
          await client.query('CREATE SCHEMA IF NOT EXISTS springfield');
          await client.query(
            'CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now(), applied_by text)',
          );
          version = await versionOf(client);
          if (version > PG_SCHEMA_VERSION) throw tooNew(this.place, version);
          for (let v = version; v < PG_SCHEMA_VERSION; v++) {
            await client.query(PG_MIGRATIONS[v] ?? '');
            await client.query('INSERT INTO schema_version (version, applied_by) VALUES ($1, $2)', [
              v + 1,
              this.options.host,
            ]);
          }
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }
      await client.query('INSERT INTO repositories (repo_id, source) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
        this.options.repo.id,
        this.options.repo.source,
      ]);
    } catch (err) {
      broken = isConnectionLost(err);
      throw err;
    } finally {
      client.release(broken);
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** A simple query of several statements: pg answers one result per statement (its types name only one). */
async function queryAll(client: pg.PoolClient, text: string): Promise<pg.QueryResult[]> {
  const results: pg.QueryResult | pg.QueryResult[] = await client.query(text);
  return Array.isArray(results) ? results : [results];
}

/** The server process serving `client` (pg sets it when it connects; its published types leave it out). */
function processOf(client: pg.PoolClient): number | null {
  return 'processID' in client && typeof client.processID === 'number' ? client.processID : null;
}

const guarded = new WeakSet<pg.PoolClient>();
/** The statements prepared on each connection (Direct.execute). */
const prepared = new WeakMap<pg.PoolClient, Set<string>>();

function literal(client: pg.PoolClient, v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'NULL';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return client.escapeLiteral(typeof v === 'string' ? v : JSON.stringify(v));
}

async function versionOf(client: pg.PoolClient): Promise<number> {
  const exists = (
    await client.query<{ t: string | null }>(`SELECT to_regclass('springfield.schema_version')::text AS t`)
  ).rows[0]?.t;
  if (!exists) return 0;
  return (
    (await client.query<{ v: number | null }>('SELECT max(version) AS v FROM springfield.schema_version')).rows[0]?.v ??
    0
  );
}

function tooNew(place: string, version: number): EnvironmentError {
  return new EnvironmentError(
    'schema_too_new',
    `PostgreSQL at ${place}: schema version ${version} is newer than this Springfield supports (${PG_SCHEMA_VERSION}); upgrade Springfield — the database was not modified`,
  );
}
