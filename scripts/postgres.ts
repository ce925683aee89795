// A throwaway PostgreSQL server for tests and benchmarks: a copy of a cluster initdb made once
// (clusterTemplate) in a fresh temp directory, listening on a Unix socket in that directory only (no
// TCP), one role and database, stopped and removed at the end — by stop(), on exit, on
// SIGINT/SIGTERM/SIGHUP, and by a watchdog process if this one is killed.
// `node scripts/postgres.ts [--fast]` starts one, prints its URL and waits for Ctrl+C. See docs/postgres.md.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  appendFileSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findPostgres, serverUser, type OsUser, type PostgresInstall } from './postgresInstall.ts';
import { messageOf } from '../src/shared/errorMessage.ts';

export interface PostgresOptions {
  /**
   * `durable` (default): fsync and full-page writes on, as a production server; what the crash and
   * restart tests and the benchmarks use. `fast`: fsync and full-page writes off (and initdb
   * --no-sync); acknowledged commits still survive the server being killed or restarted
   * (synchronous_commit stays on), not the machine losing power. For tests that only need SQL.
   */
  readonly durability?: 'durable' | 'fast';
  /** Role and database created for the caller (default `springfield` for both). */
  readonly role?: string;
  readonly database?: string;
  /** Socket port number: names the socket file `.s.PGSQL.<port>` (no TCP listener either way). */
  readonly port?: number;
}

export type StopMode = 'smart' | 'fast' | 'immediate';

export interface PostgresServer {
  /** `postgres://role:password@/database?host=<socket dir>&port=<port>`: what node-postgres and libpq take. */
  readonly url: string;
  /** The same for the bootstrap superuser `postgres`, on database `postgres`. */
  readonly superuserUrl: string;
  readonly socketDir: string;
  readonly dataDir: string;
  readonly port: number;
  readonly install: PostgresInstall;
  /** The watchdog process that cleans up if this process dies without stop(). */
  readonly watchdogPid: number | null;
  /** The postmaster's pid while it runs (a new one after each restart), else null. */
  pid(): number | null;
  /** Stops the server, keeping its data: clients fail until up(). `immediate` is a crash (recovery on start). */
  down(mode?: StopMode): void;
  up(): void;
  /** down(mode) then up(): the "server restart in the middle of a run". */
  restart(mode?: StopMode): void;
  /** A new empty database owned by the role; returns its URL. */
  createDatabase(name: string): string;
  /** Runs SQL as the superuser through psql (for setup and checks, not for the code under test). */
  psql(sql: string, database?: string): string;
  /** Stops the server and removes every file; idempotent. */
  stop(): void;
  /** The server's log (useful in a failure message). */
  log(): string;
}

const NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const WATCHDOG = join(dirname(fileURLToPath(import.meta.url)), 'postgresWatchdog.ts');
const live = new Set<PostgresServer>();

/** Starts a fresh server (about a second) and returns it running, with its role and database created. */
export function startPostgres(options: PostgresOptions = {}): PostgresServer {
  const role = options.role ?? 'springfield';
  const database = options.database ?? 'springfield';
  for (const name of [role, database])
    if (!NAME.test(name)) throw new Error(`invalid role or database name '${name}' (lower-case letters, digits, _)`);
  const install = findPostgres();
  const user = serverUser();
  const port = options.port ?? 5432;
  const fast = options.durability === 'fast';
  // Unix socket paths are limited to ~107 bytes: keep the directory short.
  const base = mkdtempSync(join(tmpdir().length > 40 ? '/tmp' : tmpdir(), 'sf-pg-'));
  const dataDir = join(base, 'data');
  const socketDir = join(base, 'socket');
  const logFile = join(base, 'server.log');
  mkdirSync(socketDir, { mode: 0o700 });
  if (user) for (const p of [base, socketDir]) chownSync(p, user.uid, user.gid);
  const watchdog = startWatchdog(install, user, dataDir, base);
  const superPassword = randomBytes(18).toString('hex');
  const password = randomBytes(18).toString('hex');
  let running = false;
  let stopped = false;
  const asOwner = (tool: string, args: readonly string[]): string => run(join(install.binDir, tool), args, user, base);
  const ctl = (args: readonly string[]): string => asOwner('pg_ctl', ['-D', dataDir, ...args]);
  const url = (who: string, secret: string, db: string): string =>
    `postgres://${who}:${secret}@/${db}?host=${socketDir}&port=${port}`;
  const psqlAs = (secret: string, sql: string, db = 'postgres'): string =>
    run(
      join(install.binDir, 'psql'),
      [
        '-X',
        '-q',
        '-A',
        '-t',
        '-v',
        'ON_ERROR_STOP=1',
        '-h',
        socketDir,
        '-p',
        String(port),
        '-U',
        'postgres',
        '-d',
        db,
        '-c',
        sql,
      ],
      null,
      base,
      { PGPASSWORD: secret },
    );
  const server: PostgresServer = {
    url: url(role, password, database),
    superuserUrl: url('postgres', superPassword, 'postgres'),
    socketDir,
    dataDir,
    port,
    install,
    watchdogPid: watchdog.pid ?? null,
    pid: () => (running ? postmasterPid(dataDir) : null),
    down(mode = 'fast') {
      if (!running) return;
      ctl(['stop', '-m', mode, '-w', '-t', '60', '-s']);
      running = false;
    },
    up() {
      if (running || stopped) return;
      try {
        ctl(['start', '-w', '-t', '60', '-s', '-l', logFile]);
      } catch (err) {
        throw new Error(`${messageOf(err)}\n--- server log ---\n${server.log().slice(-2000)}`);
      }
      running = true;
    },
    restart(mode = 'fast') {
      server.down(mode);
      server.up();
    },
    createDatabase(name) {
      if (!NAME.test(name)) throw new Error(`invalid database name '${name}'`);
      server.psql(`CREATE DATABASE ${name} OWNER ${role}`);
      return url(role, password, name);
    },
    psql: (sql, db = 'postgres') => psqlAs(superPassword, sql, db),
    stop() {
      if (stopped) return;
      try {
        if (running && existsSync(join(dataDir, 'postmaster.pid')))
          ctl(['stop', '-m', 'immediate', '-w', '-t', '60', '-s']);
      } finally {
        running = false;
        stopped = true;
        live.delete(server);
        rmSync(base, { recursive: true, force: true });
        watchdog.stdin?.destroy(); // the watchdog sees end-of-input, finds nothing left and exits
      }
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
  };
  live.add(server);
  hookExit();
  try {
    // initdb is most of a start (seconds under load); its cluster is the same each time for one
    // install, so it is made once (clusterTemplate) and copied. The superuser's password is the
    // template's until the server runs, then this server's own.
    const template = clusterTemplate(install, user);
    run('cp', ['-a', join(template.dir, 'data'), dataDir], user, base);
    if (!fast) asOwner('initdb', ['--sync-only', '-D', dataDir]);
    appendFileSync(
      join(dataDir, 'postgresql.conf'),
      [
        '',
        '# springfield throwaway server (scripts/postgres.ts)',
        "listen_addresses = ''",
        `unix_socket_directories = '${socketDir}'`,
        `port = ${port}`,
        'max_connections = 200',
        "timezone = 'UTC'",
        "log_timezone = 'UTC'",
        ...(fast
          ? ['fsync = off', 'full_page_writes = off']
          : ['fsync = on', 'full_page_writes = on', 'synchronous_commit = on']),
        '',
      ].join('\n'),
    );
    server.up();
    psqlAs(template.password, `ALTER ROLE postgres PASSWORD '${superPassword}'`);
    server.psql(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    server.psql(`CREATE DATABASE ${database} OWNER ${role}`);
  } catch (err) {
    server.stop();
    throw err;
  }
  return server;
}

/**
 * A cluster made by initdb once for this install and these options, kept in the temp directory
 * (`sf-pg-template-<hash>`, the hash naming the install, the options and the owner) with its superuser's
 * password beside it. Another process's initdb can race this one: each writes into its own new
 * directory and renames it into place; the loser copies from its own and removes it. A template is
 * used only if it is a real directory (not a link) owned by the server's user and closed to others.
 */
function clusterTemplate(install: PostgresInstall, user: OsUser | null): { dir: string; password: string } {
  const owner = user?.uid ?? process.getuid?.() ?? -1;
  const hash = createHash('sha256')
    .update(JSON.stringify([install.binDir, install.version, INITDB_ARGS, owner]))
    .digest('hex')
    .slice(0, 16);
  const dir = join(tmpdir(), `sf-pg-template-${hash}`);
  const ready = usableTemplate(dir, owner);
  if (ready) return ready;
  const staging = mkdtempSync(join(tmpdir(), 'sf-pg-template-new-'));
  if (user) chownSync(staging, user.uid, user.gid);
  const password = randomBytes(18).toString('hex');
  try {
    const pwfile = join(staging, 'pwfile');
    writeFileSync(pwfile, password + '\n', { mode: 0o600, flag: 'wx' });
    if (user) chownSync(pwfile, user.uid, user.gid);
    run(
      join(install.binDir, 'initdb'),
      ['-D', join(staging, 'data'), `--pwfile=${pwfile}`, ...INITDB_ARGS],
      user,
      staging,
    );
    rmSync(pwfile);
    writeFileSync(join(staging, 'password'), password, { mode: 0o600, flag: 'wx' });
    renameSync(staging, dir);
    return { dir, password };
  } catch (err) {
    if (!existsSync(join(staging, 'password'))) {
      rmSync(staging, { recursive: true, force: true });
      throw err;
    }
    // Another process put its template there first: use ours this once.
    process.once('exit', () => rmSync(staging, { recursive: true, force: true }));
    return { dir: staging, password };
  }
}

const INITDB_ARGS = ['-U', 'postgres', '--auth-local=scram-sha-256', '--auth-host=reject', '-E', 'UTF8', '--locale=C'];

function usableTemplate(dir: string, owner: number): { dir: string; password: string } | null {
  const stat = lstatSync(dir, { throwIfNoEntry: false });
  if (!stat?.isDirectory() || stat.uid !== owner || (stat.mode & 0o077) !== 0) return null;
  const secret = lstatSync(join(dir, 'password'), { throwIfNoEntry: false });
  if (!secret?.isFile() || (secret.mode & 0o077) !== 0 || !existsSync(join(dir, 'data', 'PG_VERSION'))) return null;
  return { dir, password: readFileSync(join(dir, 'password'), 'utf8') };
}

/** Runs a PostgreSQL tool (as the server's user when given), throwing its stderr as one message. */
function run(
  file: string,
  args: readonly string[],
  user: OsUser | null,
  cwd: string,
  extraEnv: NodeJS.ProcessEnv = {},
): string {
  const env: NodeJS.ProcessEnv = { LANG: 'C', LC_ALL: 'C' };
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('PG') && !k.startsWith('LC_') && k !== 'LANG') env[k] = v;
  const r = spawnSync(file, args, {
    cwd,
    encoding: 'utf8',
    env: { ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  if (r.error) throw new Error(`${file}: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(
      `${file.split('/').pop()} ${args[0] ?? ''} failed (exit ${r.status}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`,
    );
  return r.stdout.trim();
}

function postmasterPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * A detached process holding the read end of a pipe from this one: when this process ends in any
 * way (even SIGKILL) the pipe closes, and the watchdog stops the server and removes `base`.
 */
function startWatchdog(install: PostgresInstall, user: OsUser | null, dataDir: string, base: string): ChildProcess {
  const config = JSON.stringify({
    pgCtl: join(install.binDir, 'pg_ctl'),
    dataDir,
    base,
    uid: user?.uid ?? null,
    gid: user?.gid ?? null,
  });
  const child = spawn(process.execPath, [WATCHDOG, config], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    cwd: '/',
  });
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return child;
}

let hooked = false;

/** Stops every live server when this process exits or is told to stop, then lets the signal act. */
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  const stopAll = (): void => {
    for (const s of [...live]) {
      try {
        s.stop();
      } catch {
        // the watchdog still removes what is left
      }
    }
  };
  process.on('exit', stopAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      stopAll();
      process.off(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

/** The servers this process started and has not stopped (tests check that none are left). */
export function liveServers(): readonly PostgresServer[] {
  return [...live];
}

if (import.meta.main) {
  const server = startPostgres({ durability: process.argv.includes('--fast') ? 'fast' : 'durable' });
  console.log(
    `PostgreSQL ${server.install.version} (${server.install.binDir}), pid ${server.pid()}, data in ${server.dataDir}`,
  );
  console.log(`SPRINGFIELD_DATABASE_URL='${server.url}'`);
  console.log('Ctrl+C stops it and removes everything.');
  setInterval(() => undefined, 1 << 30);
}
