// Started detached by scripts/postgres.ts with a pipe on stdin. When the pipe closes (the starting
// process stopped the server itself, or died in any way, SIGKILL included) it stops whatever server
// still runs on the data directory (immediate mode: nothing in it is worth a checkpoint) and removes
// the temp directory. Alone in its own session, so a terminal's Ctrl+C does not reach it.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';

interface Config {
  readonly pgCtl: string;
  readonly dataDir: string;
  readonly base: string;
  readonly uid: number | null;
  readonly gid: number | null;
}

const config = JSON.parse(process.argv[2] ?? '{}') as Config;
for (const signal of ['SIGINT', 'SIGHUP', 'SIGPIPE'] as const) process.on(signal, () => undefined);

let reaped = false;
function reap(): void {
  if (reaped) return;
  reaped = true;
  if (existsSync(join(config.dataDir, 'postmaster.pid'))) {
    spawnSync(config.pgCtl, ['-D', config.dataDir, 'stop', '-m', 'immediate', '-w', '-t', '60', '-s'], {
      stdio: 'ignore',
      cwd: '/',
      ...(config.uid !== null && config.gid !== null ? { uid: config.uid, gid: config.gid } : {}),
    });
  }
  rmSync(config.base, { recursive: true, force: true });
  process.exit(0);
}

process.stdin.on('data', () => undefined);
process.stdin.on('end', reap);
process.stdin.on('close', reap);
process.stdin.on('error', reap);
