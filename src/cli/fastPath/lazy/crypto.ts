/**
 * node:crypto as the step commands' bundle sees it (esbuild.mjs points core's imports here): loaded
 * on first call, so a command that never hashes does not pay for loading it (docs/cli-cost.md).
 */
import type * as crypto from 'node:crypto';

const real = (): typeof crypto => process.getBuiltinModule('node:crypto');

export function createHash(algorithm: string, options?: crypto.HashOptions): crypto.Hash {
  return real().createHash(algorithm, options);
}

export function randomBytes(size: number): Buffer {
  return real().randomBytes(size);
}

// Named so core's every import of node:crypto resolves here (the step commands import core through
// src/core/index.ts); the scheduler's launch ids never run in a step command.
export function randomUUID(): `${string}-${string}-${string}-${string}-${string}` {
  return real().randomUUID();
}
