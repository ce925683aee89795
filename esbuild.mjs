// Bundles: the CLI (node, ESM, shebang). The extension and webview bundles join here later.
import { build } from 'esbuild';
import { chmodSync } from 'node:fs';

await build({
  entryPoints: ['src/cli/bin.ts'],
  outfile: 'dist/cli.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  external: ['better-sqlite3'],
  banner: { js: '#!/usr/bin/env node\nimport { createRequire as __sfCreateRequire } from "node:module"; const require = __sfCreateRequire(import.meta.url);' },
  sourcemap: false,
  logLevel: 'warning',
});
chmodSync('dist/cli.js', 0o755);
