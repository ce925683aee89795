// Bundles: the CLI (node ESM + shebang), the extension (node CJS; vscode and better-sqlite3 external)
// and the webviews (browser IIFE + CSS into media/dist). `--watch` rebuilds on change.
import { context } from 'esbuild';
import { chmodSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const common = { bundle: true, logLevel: 'warning', sourcemap: false, legalComments: 'none' };

const builds = [
  {
    ...common,
    entryPoints: { cli: 'src/cli/bin.ts' },
    outdir: 'dist',
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    platform: 'node',
    format: 'esm',
    target: 'node22',
    external: ['better-sqlite3'],
    banner: { js: '#!/usr/bin/env node\nimport { createRequire as __sfCreateRequire } from "node:module"; const require = __sfCreateRequire(import.meta.url);' },
  },
  {
    ...common,
    entryPoints: ['src/extension/extension.ts'],
    outfile: 'dist/extension.cjs',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', 'better-sqlite3'],
    define: { 'import.meta.url': '__sfImportMetaUrl' },
    banner: { js: 'const __sfImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    minify: true,
  },
  ...['dashboard', 'approval'].flatMap((name) => [
    { ...common, entryPoints: [`webview/${name}/main.ts`], outfile: `media/dist/${name}.js`, platform: 'browser', format: 'iife', target: 'es2022', minify: true },
    { ...common, entryPoints: [`webview/styles/${name}.css`], outfile: `media/dist/${name}.css`, minify: true },
  ]),
];

const contexts = await Promise.all(builds.map((b) => context(b)));
if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
  console.log('watching…');
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
  chmodSync('dist/cli.js', 0o755);
}
