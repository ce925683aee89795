import { chmodSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureOwnDirectory } from '../safeFiles.ts';

/**
 * A folder holding a `springfield` command that runs this same CLI with this same runtime, put first
 * on an agent's PATH: real agent CLIs find commands on PATH and nowhere else (docs/agents.md, "The
 * agent's environment"). Made fresh for one run (a new directory of this user's, its files created
 * exclusively, never through a planted link) and removed when the run ends.
 *
 * `cli` is the argv prefix that runs the CLI (runtime first); `electron` says the runtime is an
 * editor's Electron, which runs as Node only with ELECTRON_RUN_AS_NODE=1 (an agent's environment never
 * carries it, so the command sets it for itself).
 */
export function makeCliShim(parent: string, name: string, cli: readonly string[], electron: boolean): string {
  ensureOwnDirectory(parent);
  const dir = join(parent, name);
  ensureOwnDirectory(dir, { private: true });
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const posix = `#!/bin/sh\n${electron ? 'ELECTRON_RUN_AS_NODE=1 ' : ''}exec ${cli.map(q).join(' ')} "$@"\n`;
  writeFileSync(join(dir, 'springfield'), posix, { flag: 'wx', mode: 0o700 });
  chmodSync(join(dir, 'springfield'), 0o700);
  if (process.platform === 'win32') {
    const cmd = `@echo off\r\n${electron ? 'set ELECTRON_RUN_AS_NODE=1\r\n' : ''}${cli.map((a) => `"${a}"`).join(' ')} %*\r\n`;
    writeFileSync(join(dir, 'springfield.cmd'), cmd, { flag: 'wx', mode: 0o700 });
  }
  return dir;
}

/** Removes a shim folder made by makeCliShim; a failure leaves only a small folder behind. */
export function removeCliShim(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // nothing to do: the next run makes its own
  }
}

/**
 * Removes the shim folders under `parent` of runs that are over: a `springfield run` killed with
 * SIGKILL cannot remove its own. `live` holds the ids of runs whose supervisor is alive; a folder
 * of another name is not ours and stays. Returns the names removed.
 */
export function sweepCliShims(parent: string, live: ReadonlySet<number>): string[] {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const id = /^(\d+)-[0-9a-f]{8}$/.exec(name)?.[1];
    if (id === undefined || live.has(Number(id))) continue;
    removeCliShim(join(parent, name));
    removed.push(name);
  }
  return removed;
}

/** `PATH` with `dir` first (the platform's separator). */
export function pathWith(dir: string, path: string | undefined, delimiter: string): string {
  return path ? `${dir}${delimiter}${path}` : dir;
}
