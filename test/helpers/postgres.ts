import { readdirSync, readFileSync } from 'node:fs';
import { after, before } from 'node:test';
import { startPostgres, type PostgresOptions, type PostgresServer } from '../../scripts/postgres.ts';

export type { PostgresServer } from '../../scripts/postgres.ts';

/**
 * One throwaway server for the calling test file: started before its first test, stopped and removed
 * after its last (and by the harness's exit hooks and watchdog should the file crash). Tests that only
 * need SQL pass `{ durability: 'fast' }`; crash, restart and benchmark runs keep the durable default.
 */
export function postgresForFile(options: PostgresOptions = {}): { readonly server: PostgresServer } {
  let server: PostgresServer | undefined;
  before(() => {
    server = startPostgres(options);
  });
  after(() => server?.stop());
  return {
    get server(): PostgresServer {
      if (!server) throw new Error('the PostgreSQL server starts in before(): use it inside a test');
      return server;
    },
  };
}

/** Whether a process exists and is not a zombie (an exited postmaster waits for init to reap it). */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The pids of a process's live children, from /proc. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid && fields[0] !== 'Z') out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
