// Finds Debian's PostgreSQL server binaries (installing the `postgresql` package when missing and
// allowed) and the OS user that runs them: initdb and pg_ctl refuse to run as root.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { ensureAptPackages } from './systemDeps.ts';

/** The major version the tests and benchmarks are written against (Debian 12's `postgresql`). */
export const PREFERRED_MAJOR = 15;

export interface PostgresInstall {
  /** Directory holding initdb, pg_ctl, postgres and psql (real path). */
  readonly binDir: string;
  /** `postgres --version`'s number, e.g. 15.18. */
  readonly version: string;
  readonly major: number;
}

/** Where the server would run as: the `postgres` user when we are root, else ourselves (null). */
export interface OsUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

const tools = ['initdb', 'pg_ctl', 'postgres', 'psql'] as const;

function complete(dir: string | undefined): dir is string {
  return dir !== undefined && tools.every((t) => existsSync(join(dir, t)));
}

/**
 * Candidate directories, best first: $SPRINGFIELD_PG_BINDIR, Debian's /usr/lib/postgresql/15/bin,
 * `pg_config --bindir`, other versions under /usr/lib/postgresql (newest first), then initdb on PATH
 * (here /usr/local/bin/initdb is a symlink into Debian's 15/bin; the real path is what counts).
 */
function candidates(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  if (env.SPRINGFIELD_PG_BINDIR) out.push(env.SPRINGFIELD_PG_BINDIR);
  out.push(`/usr/lib/postgresql/${PREFERRED_MAJOR}/bin`);
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (pgConfig.status === 0 && pgConfig.stdout.trim()) out.push(pgConfig.stdout.trim());
  if (existsSync('/usr/lib/postgresql')) {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    out.push(...versions.map((v) => `/usr/lib/postgresql/${v}/bin`));
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    const initdb = join(dir, 'initdb');
    if (dir && existsSync(initdb)) out.push(dirname(realpathSync(initdb)));
  }
  return out;
}

function search(env: NodeJS.ProcessEnv): PostgresInstall | undefined {
  const binDir = candidates(env).find(complete);
  if (!binDir) return undefined;
  const real = realpathSync(binDir);
  const r = spawnSync(join(real, 'postgres'), ['--version'], { encoding: 'utf8' });
  const version = /(\d+(?:\.\d+)?)/.exec(r.stdout ?? '')?.[1];
  if (r.status !== 0 || !version)
    throw new Error(`${join(real, 'postgres')} --version failed: ${(r.stderr ?? '').trim() || `exit ${r.status}`}`);
  return { binDir: real, version, major: Number(version.split('.')[0]) };
}

/** The server binaries when they are installed here (nothing is installed): what decides whether tests can start a server. */
export function installedPostgres(env: NodeJS.ProcessEnv = process.env): PostgresInstall | undefined {
  try {
    return search(env);
  } catch {
    return undefined;
  }
}

/**
 * The server binaries. When none are found, installs Debian's `postgresql` (as root, through the same
 * path as the other test packages) and looks again; otherwise one line says what to install.
 */
export function findPostgres(env: NodeJS.ProcessEnv = process.env): PostgresInstall {
  const found = search(env) ?? (ensureAptPackages(['postgresql']), search(env));
  if (!found) {
    throw new Error(
      "PostgreSQL server binaries not found (initdb, pg_ctl, postgres, psql): install Debian's postgresql package (apt-get install postgresql) or set SPRINGFIELD_PG_BINDIR",
    );
  }
  return found;
}

/** The user that owns the data directory and runs the server: `postgres` when root, else the caller. */
export function serverUser(): OsUser | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string): number => {
    const r = spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
    if (r.status !== 0)
      throw new Error(
        "running as root, but there is no 'postgres' user for initdb and pg_ctl (which refuse root): install Debian's postgresql package, or run as another user",
      );
    return Number(r.stdout.trim());
  };
  return { name: 'postgres', uid: id('-u'), gid: id('-g') };
}
