/**
 * node:module as the step commands' bundle sees it (esbuild.mjs points core's imports here): loaded on
 * first call; only a better-sqlite3 found away from the bundle needs it (docs/cli-cost.md).
 */
export function createRequire(path: string | URL): NodeJS.Require {
  return process.getBuiltinModule('node:module').createRequire(path);
}
