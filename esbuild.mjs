// Bundles: the CLI (a CommonJS executable for the step commands + ES module chunks for the rest), the extension (node CJS; vscode and better-sqlite3 external),
// the demo agents' stand-in (dist/standInAgent.cjs)
// and the webviews (browser IIFE + CSS into media/dist). `--watch` rebuilds on change.
import { context } from 'esbuild';
import { chmodSync, readdirSync, readFileSync, rmSync } from 'node:fs';
// The executable and the step commands' bundle: the fast path, one folder (docs/cli-cost.md).
import { fastPathBuilds } from './src/cli/fastPath/builds.ts';
// The options and plugins every bundle shares (bench/cliVariantBuilds.ts builds the fast path with them too).
import {
  common,
  ownModulesArePure,
  postgresApart,
  versionDefine as versionOf,
  zodMiniApart,
} from './scripts/buildParts.ts';

const watch = process.argv.includes('--watch');
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
const versionDefine = versionOf();

const builds = [
  ...fastPathBuilds(common, [postgresApart, ownModulesArePure], versionDefine),
  {
    // Every other command: ES modules split per command, loaded by the executable when named.
    ...common,
    entryPoints: { main: 'src/cli/main.ts' },
    plugins: [ownModulesArePure, zodMiniApart],
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
    // zod asks `typeof navigator` once (is this Cloudflare?); in the extension host that global is a
    // getter that logs an error for every extension touching it. Nothing here needs a browser's navigator.
    define: { 'import.meta.url': '__sfImportMeta.url', navigator: 'undefined', ...promptsDefine, ...versionDefine },
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
