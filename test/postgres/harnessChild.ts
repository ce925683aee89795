// A process that starts a throwaway server in fast mode, reports it (with its durability settings),
// then dies the way argv[2] says: `wait` (for a signal from the test), or `throw` (an uncaught
// exception, as a crashing test file would, once the test sends SIGUSR2).
import { startPostgres } from '../../scripts/postgres.ts';
import { childrenOf } from '../helpers/postgres.ts';

const server = startPostgres({ durability: 'fast' });
const pid = server.pid();
const settings = server.psql(
  `SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings WHERE name IN ('fsync', 'full_page_writes', 'synchronous_commit')`,
);
// `throw` waits for the test's SIGUSR2 (the test first checks the server runs), then crashes;
// the handler is in place before the report, so the signal cannot come first.
if (process.argv[2] === 'throw')
  process.once('SIGUSR2', () =>
    setImmediate(() => {
      throw new Error('deliberate crash of a test file');
    }),
  );
process.stdout.write(
  JSON.stringify({
    pid,
    children: pid ? childrenOf(pid) : [],
    watchdogPid: server.watchdogPid,
    dataDir: server.dataDir,
    settings,
  }) + '\n',
);
setInterval(() => undefined, 1 << 30);
