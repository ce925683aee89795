// The fast path's two builds, for esbuild.mjs: the executable (the launcher) and the step commands'
// bundle it runs under a code cache (docs/cli-cost.md, the ledger of what each trick saves).
import { join } from 'node:path';
import type { BuildOptions, Plugin } from 'esbuild';
import { BUNDLE_WRAPPER } from './codeCache.ts';

/**
 * In the step commands' bundle, core's imports of these builtins go to forwarders that load them on
 * first call (lazy/): most step commands never hash, run git or ask the host's name.
 */
const LAZY_BUILTINS: Readonly<Record<string, string>> = {
  'node:crypto': 'crypto.ts',
  'node:child_process': 'childProcess.ts',
  'node:os': 'os.ts',
  'node:module': 'module.ts',
};

const lazyBuiltins: Plugin = {
  name: 'lazy-builtins',
  setup(build) {
    build.onResolve({ filter: /^node:(crypto|child_process|os|module)$/ }, (args) => ({
      path: join(import.meta.dirname, 'lazy', LAZY_BUILTINS[args.path] as string),
    }));
  },
};

/** `plugins` go before the lazy builtins' in the step bundle; `define` holds the version. */
export function fastPathBuilds(
  common: BuildOptions,
  plugins: readonly Plugin[],
  define: Readonly<Record<string, string>>,
): BuildOptions[] {
  return [
    {
      // The step commands: CommonJS (no ES module loader to start) with only what they use linked in.
      ...common,
      entryPoints: ['src/cli/fastPath/stepBundle.ts'],
      outfile: 'dist/springfield.cjs',
      platform: 'node',
      format: 'cjs',
      target: 'node22',
      // The step commands open the database through node:sqlite; better-sqlite3 (on runtimes without it)
      // is required from node_modules on first use, its native module named at run time (see sqlite.ts).
      external: ['*.node'],
      plugins: [...plugins, lazyBuiltins],
      // Read, compiled and run on every call: minified, it starts sooner. (Messages are ours and
      // unaffected; a stack under SPRINGFIELD_DEBUG names minified functions.)
      minify: true,
      define: { 'import.meta.url': '__sfImportMeta.url', ...define },
      // Written as the function expression Node's loader would wrap it in (codeCache.ts compiles it as
      // is: wrapping it at run time would copy its text into a new string in every process). Worked out
      // only if read (sqlite.ts reads __dirname instead): a URL is not free to build.
      banner: {
        js: `${BUNDLE_WRAPPER}const __sfImportMeta = { get url() { return require("node:url").pathToFileURL(__filename).href; } };`,
      },
      footer: { js: '\n});' },
    },
    {
      // The executable itself: runs dist/springfield.cjs (step commands) with a code cache, or the full CLI.
      ...common,
      entryPoints: ['src/cli/fastPath/launcher.ts'],
      outfile: 'dist/cli.cjs',
      platform: 'node',
      format: 'cjs',
      target: 'node22',
      banner: { js: '#!/usr/bin/env node' },
    },
  ];
}
