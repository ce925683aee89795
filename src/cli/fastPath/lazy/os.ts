/**
 * node:os as the step commands' bundle sees it (esbuild.mjs points core's imports here): loaded on
 * first use, so a step command that never asks the host's name does not pay for loading it (docs/cli-cost.md).
 */
import type * as os from 'node:os';

const real = (): typeof os => process.getBuiltinModule('node:os');

export function hostname(): string {
  return real().hostname();
}

// Named so core's every import of node:os resolves here (the step commands import core through
// src/core/index.ts); none of these is used by a step command.
export function homedir(): string {
  return real().homedir();
}

export function availableParallelism(): number {
  return real().availableParallelism();
}

export function freemem(): number {
  return real().freemem();
}

export function loadavg(): number[] {
  return real().loadavg();
}

export const constants: typeof os.constants = new Proxy({} as typeof os.constants, {
  get: (_target, key) => real().constants[key as keyof typeof os.constants],
});

export function tmpdir(): string {
  return real().tmpdir();
}
