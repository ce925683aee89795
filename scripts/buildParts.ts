// What every bundle esbuild.mjs makes shares, and what bench/cliVariantBuilds.ts builds the fast path with.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BuildOptions, Plugin } from 'esbuild';

/**
 * Springfield's own modules run nothing when imported, so one whose exports go unused is left out of a bundle:
 * src/cli and src/extension import the one public core API (src/core/index.ts; docs/architecture.md) without
 * linking all of core into the step commands' bundle.
 */
export const ownModulesArePure: Plugin = {
  name: 'own-modules-are-pure',
  setup(build) {
    build.onResolve({ filter: /^\.{1,2}\/.*\.ts$/ }, (args) =>
      args.importer.includes('/src/') ? { path: resolve(args.resolveDir, args.path), sideEffects: false } : undefined,
    );
  },
};

export const common: BuildOptions = {
  bundle: true,
  logLevel: 'warning',
  sourcemap: false,
  legalComments: 'none',
  plugins: [ownModulesArePure],
};

/**
 * The PostgreSQL backend (with node-postgres) is its own bundle, dist/postgres.cjs, required from the
 * CommonJS bundles beside it only when a postgres:// URL is used (docs/postgres.md, "The driver: pg (node-postgres)").
 */
export const postgresApart: Plugin = {
  name: 'postgres-apart',
  setup(build) {
    build.onResolve({ filter: /entry\.ts$/ }, (args) =>
      resolve(args.resolveDir, args.path).endsWith('/src/core/store/postgres/entry.ts')
        ? { path: 'postgres-bundle', namespace: 'sf-postgres' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'sf-postgres' }, () => ({
      contents: 'module.exports = require(require("node:path").join(__dirname, "postgres.cjs"));',
      loader: 'js',
    }));
  },
};

/** `springfield --version` and the MCP server's version: package.json's, never a copy (src/cli/help.ts). */
export function versionDefine(root = '.'): Record<string, string> {
  const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { version: string };
  return { __SF_VERSION__: JSON.stringify(pkg.version) };
}
