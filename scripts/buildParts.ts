// What every bundle esbuild.mjs makes shares, and what bench/cliVariantBuilds.ts builds the fast path with.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
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

/**
 * zod/mini (the run config's schemas) with a zod core of its own in the CLI's split bundle: the MCP
 * server's SDK needs the full zod, and a core shared with it would be a chunk of about 650 KB that
 * every command loads (docs/cli-cost.md). zod keeps its settings on globalThis, so two copies agree.
 */
export const zodMiniApart: Plugin = {
  name: 'zod-mini-apart',
  setup(build) {
    const inZodMini = { namespace: 'zod-mini', sideEffects: false } as const;
    build.onResolve({ filter: /^zod\/(mini|v4\/locales\/en\.js)$/ }, async (args) => {
      if (args.pluginData === 'zod-mini') return undefined;
      const found = await build.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        pluginData: 'zod-mini',
      });
      return { path: found.path, ...inZodMini };
    });
    build.onResolve({ filter: /.*/, namespace: 'zod-mini' }, (args) => ({
      path: resolve(args.resolveDir, args.path),
      ...inZodMini,
    }));
    build.onLoad({ filter: /.*/, namespace: 'zod-mini' }, (args) => ({
      contents: readFileSync(args.path, 'utf8'),
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};
