/**
 * node:child_process as the step commands' bundle sees it (esbuild.mjs points core's imports here):
 * loaded on first call, so a command that never runs git does not pay for loading it (docs/cli-cost.md).
 */
import type * as childProcess from 'node:child_process';

const real = (): typeof childProcess => process.getBuiltinModule('node:child_process');

export const spawnSync = ((...args: unknown[]) =>
  (real().spawnSync as (...a: unknown[]) => unknown)(...args)) as typeof childProcess.spawnSync;

export const spawn = ((...args: unknown[]) =>
  (real().spawn as (...a: unknown[]) => unknown)(...args)) as typeof childProcess.spawn;

export const execFile = ((...args: unknown[]) =>
  (real().execFile as (...a: unknown[]) => unknown)(...args)) as typeof childProcess.execFile;
