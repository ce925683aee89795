// Bundles: the CLI (a CommonJS executable for the step commands + ES module chunks for the rest), the extension (node CJS; vscode and better-sqlite3 external),
// the demo agents' stand-in (dist/standInAgent.cjs)
// and the webviews (browser IIFE + CSS into media/dist). `--watch` rebuilds on change.
import { context } from 'esbuild';
import { chmodSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
// The head of the function expression the step bundle is written as: the launcher compiles it as read.
import { BUNDLE_WRAPPER } from './src/cli/codeCache.ts';

const watch = process.argv.includes('--watch');
// Springfield's own modules run nothing when imported, so one whose exports go unused is left out of a bundle:
// src/cli and src/extension import the one public core API (src/core/index.ts; docs/architecture.md) without
// linking all of core into the step commands' bundle.
const ownModulesArePure = {
  name: 'own-modules-are-pure',
  setup(build) {
    build.onResolve({ filter: /^\.{1,2}\/.*\.ts$/ }, (args) =>
      args.importer.includes('/src/') ? { path: resolve(args.resolveDir, args.path), sideEffects: false } : undefined,
    );
  },
};
const common = {
  bundle: true,
  logLevel: 'warning',
  sourcemap: false,
  legalComments: 'none',
  plugins: [ownModulesArePure],
};
// The PostgreSQL backend (with node-postgres) is its own bundle, dist/postgres.cjs, required from the
// CommonJS bundles beside it only when a postgres:// URL is used (docs/postgres.md, "The driver: pg (node-postgres)").
const postgresApart = {
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
const apart = { ...common, plugins: [postgresApart, ownModulesArePure] };
// The role prompts (src/core/agents/prompts/*.md, named by src/shared/roles.ts) are bundled as text: see src/core/agents/rolePrompt.ts.
const PROMPTS = 'src/core/agents/prompts';
const prompts = Object.fromEntries(
  readdirSync(PROMPTS)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => [f.slice(0, -3), readFileSync(`${PROMPTS}/${f}`, 'utf8')]),
);
// A string (parsed where used): an object literal in `define` makes esbuild wrap every module in an init call.
const promptsDefine = { __SF_ROLE_PROMPTS__: JSON.stringify(JSON.stringify(prompts)) };
// `springfield --version` and the MCP server's version: package.json's, never a copy (src/cli/help.ts).
const versionDefine = { __SF_VERSION__: JSON.stringify(JSON.parse(readFileSync('package.json', 'utf8')).version) };

// In the step commands' bundle, core's imports of these builtins go to forwarders that load them on
// first call (src/cli/lazy/, docs/cli-cost.md): most step commands never hash, run git or ask the host's name.
const LAZY_BUILTINS = {
  'node:crypto': 'src/cli/lazy/crypto.ts',
  'node:child_process': 'src/cli/lazy/childProcess.ts',
  'node:os': 'src/cli/lazy/os.ts',
  'node:module': 'src/cli/lazy/module.ts',
};
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(build) {
    build.onResolve({ filter: /^node:(crypto|child_process|os|module)$/ }, (args) => ({
      path: resolve(LAZY_BUILTINS[args.path]),
    }));
  },
};

const builds = [
  {
    // The executable: CommonJS (no ES module loader to start) with the step commands linked in.
    ...apart,
    entryPoints: ['src/cli/bin.ts'],
    outfile: 'dist/springfield.cjs',
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    // The step commands open the database through node:sqlite; better-sqlite3 (on runtimes without it)
    // is required from node_modules on first use, its native module named at run time (see sqlite.ts).
    external: ['*.node'],
    plugins: [postgresApart, ownModulesArePure, lazyBuiltins],
    // Read, compiled and run on every call: minified, it starts ~0.6 ms sooner. (Messages are ours and
    // unaffected; a stack under SPRINGFIELD_DEBUG names minified functions.)
    minify: true,
    define: { 'import.meta.url': '__sfImportMeta.url', ...versionDefine },
    // Written as the function expression Node's loader would wrap it in (src/cli/codeCache.ts compiles
    // it as is: wrapping it at run time would copy its 130 KB of text into a new string in every process).
    // Worked out only if read (sqlite.ts reads __dirname instead): a URL is not free to build.
    banner: {
      js: `${BUNDLE_WRAPPER}const __sfImportMeta = { get url() { return require("node:url").pathToFileURL(__filename).href; } };`,
    },
    footer: { js: '\n});' },
  },
  {
    // The executable itself: runs dist/springfield.cjs (step commands) with a code cache, or the full CLI.
    ...common,
    entryPoints: ['src/cli/launcher.ts'],
    outfile: 'dist/cli.cjs',
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    // Every other command: ES modules split per command, loaded by the executable when named.
    ...common,
    entryPoints: { main: 'src/cli/main.ts' },
    outdir: 'dist/full',
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    platform: 'node',
    format: 'esm',
    target: 'node22',
    external: ['better-sqlite3'],
    define: { ...promptsDefine, ...versionDefine },
    banner: {
      js: 'import { createRequire as __sfCreateRequire } from "node:module"; const require = __sfCreateRequire(import.meta.url);',
    },
  },
  {
    // The PostgreSQL backend and node-postgres, loaded by the bundles above when a URL is set.
    ...common,
    entryPoints: ['src/core/store/postgres/entry.ts'],
    outfile: 'dist/postgres.cjs',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: true,
  },
  {
    ...apart,
    entryPoints: ['src/extension/extension.ts'],
    outfile: 'dist/extension.cjs',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', 'better-sqlite3'],
    define: { 'import.meta.url': '__sfImportMeta.url', ...promptsDefine, ...versionDefine },
    banner: {
      js: 'const __sfImportMeta = { get url() { return require("node:url").pathToFileURL(__filename).href; } };',
    },
    minify: true,
  },
  {
    // The demo agents (`springfield agents use demo`, Configure agents… in the editor): the stand-in agent,
    // run by the CLI's or the editor's runtime. scripts/standInAgent.ts stays the source (tests, npm run demo).
    ...common,
    entryPoints: ['scripts/standInAgent.ts'],
    outfile: 'dist/standInAgent.cjs',
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    define: { 'import.meta.url': '__sfImportMeta.url' },
    banner: {
      js: 'const __sfImportMeta = { get url() { return require("node:url").pathToFileURL(__filename).href; } };',
    },
  },
  ...['dashboard', 'approval'].flatMap((name) => [
    {
      ...common,
      entryPoints: [`webview/${name}/main.ts`],
      outfile: `media/dist/${name}.js`,
      platform: 'browser',
      format: 'iife',
      target: 'es2022',
      minify: true,
    },
    { ...common, entryPoints: [`webview/styles/${name}.css`], outfile: `media/dist/${name}.css`, minify: true },
  ]),
];

// Chunk names carry content hashes: drop the previous build's, or they pile up (and into the VSIX).
for (const stale of ['dist/chunks', 'dist/full', 'dist/cli.js', 'dist/cli-min.cjs'])
  rmSync(stale, { recursive: true, force: true });
const contexts = await Promise.all(builds.map((b) => context(b)));
if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
  console.log('watching…');
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
  chmodSync('dist/cli.cjs', 0o755);
}
