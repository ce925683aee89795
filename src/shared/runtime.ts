/**
 * What Springfield needs of its runtime: Node-API 10 (better-sqlite3 13's native module), which
 * Node.js has from 22.14. On an older runtime that module crashes the process instead of failing, so
 * the CLI's executable (src/cli/fastPath/launcher.ts) and the store (core/store/sqlite/sqlite.ts) check first.
 */
export const MIN_NODE_API = 10;

/** The one line saying this runtime is too old, or undefined when it will do (`napi` is process.versions.napi). */
export function runtimeTooOld(nodeVersion: string, napi: string | undefined): string | undefined {
  const level = Number(napi ?? 0);
  if (level >= MIN_NODE_API) return undefined;
  return `Springfield needs Node.js >= 22.14 (Node-API ${MIN_NODE_API}); this is Node.js ${nodeVersion} with Node-API ${level || 'unknown'}`;
}
