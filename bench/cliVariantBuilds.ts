// The fast path built as it is (`today`) and once without each start-up trick, for bench/cliVariants.ts:
// each a folder beside dist/ holding cli.cjs and springfield.cjs, built by esbuild from fastPathBuilds
// (src/cli/fastPath/builds.ts) with the options esbuild.mjs uses, changed by a build option or by an
// edit of a source file's text as the bundle reads it. An edit whose text is not found exactly once
// fails the build: a variant never silently measures today's code.
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { BUNDLE_WRAPPER } from '../src/cli/fastPath/codeCache.ts';
import { fastPathBuilds } from '../src/cli/fastPath/builds.ts';
import { common, ownModulesArePure, postgresApart, versionDefine } from '../scripts/buildParts.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** A source file (its path under src/) and its text replacements. */
type Edits = Readonly<Record<string, readonly (readonly [string, string])[]>>;

interface Variant {
  readonly name: string;
  /** What the build is without (empty for today's). */
  readonly without: string;
  readonly edits?: Edits;
  /** Changes to the step bundle's build options. */
  readonly bundle?: (options: BuildOptions) => BuildOptions;
}

const NO_WRAPPER = (o: BuildOptions): BuildOptions => {
  const banner = o.banner?.js ?? '';
  if (!banner.startsWith(BUNDLE_WRAPPER)) throw new Error('the step bundle no longer starts with BUNDLE_WRAPPER');
  return { ...o, banner: { js: banner.slice(BUNDLE_WRAPPER.length) }, footer: {} };
};
const NO_STAT: Edits = {
  'core/store/sqlite/rows.ts': [['const file = source.file;', 'const file: typeof source.file = undefined;']],
};

export const VARIANTS: readonly Variant[] = [
  { name: 'today', without: '' },
  {
    name: 'compile-cache',
    without:
      "the V8 code cache taken at exit and the bundle as a function expression: a plain CommonJS bundle required under Node's module.enableCompileCache()",
    bundle: NO_WRAPPER,
    edits: {
      'cli/fastPath/launcher.ts': [
        [
          "runWithCodeCache(join(__dirname, 'springfield.cjs'), isStepCommand(word) ? word : 'version', require);",
          "{ const dir = privateCacheDir(process.env); if (dir !== undefined) process.getBuiltinModule('node:module').enableCompileCache(dirname(dir)); require(join(__dirname, 'springfield.cjs')); }",
        ],
      ],
    },
  },
  {
    name: 'wrapped-at-run-time',
    without: 'the bundle written as a function expression: wrapped in one as it is read (a copy of its text)',
    bundle: NO_WRAPPER,
    edits: {
      'cli/fastPath/codeCache.ts': [
        [
          'if (!source.startsWith(BUNDLE_WRAPPER)) throw new Error(`${file}: not a bundle written as a function expression`);',
          'source = `${BUNDLE_WRAPPER}${source}\\n});`;',
        ],
      ],
    },
  },
  { name: 'not-minified', without: 'minifying the step bundle', bundle: (o) => ({ ...o, minify: false }) },
  {
    name: 'eager-builtins',
    without: 'the lazy node:crypto, node:child_process, node:os and node:module',
    bundle: (o) => ({ ...o, plugins: (o.plugins ?? []).filter((p) => p.name !== 'lazy-builtins') }),
  },
  {
    name: 'stream-output',
    without: 'output by writeSync: through process.stdout and process.stderr',
    edits: {
      'cli/fastPath/stdio.ts': [
        [
          'stdout: (t) => write(1, t), stderr: (t) => write(2, t)',
          'stdout: (t) => void process.stdout.write(t), stderr: (t) => void process.stderr.write(t)',
        ],
      ],
    },
  },
  {
    name: 'better-sqlite3',
    without: "Node's built-in SQLite: better-sqlite3's native module",
    edits: {
      'cli/fastPath/stepBundle.ts': [['openStepStore(settings, { builtinSqlite: true })', 'openStepStore(settings)']],
    },
  },
  {
    name: 'full-store',
    without: 'the store of the step operations only: the whole SqliteStore',
    edits: {
      'core/store/index.ts': [
        ['return sqliteStepStore(settings.location, {', 'return sqliteStore(settings.location, {'],
      ],
    },
  },
  {
    name: 'git-process',
    without: '.git read from disk: git asked (a process)',
    edits: {
      'core/git/repo.ts': [['findRepoOnDisk(cwd, env) ?? askGitForRepo(cwd, env)', 'askGitForRepo(cwd, env)']],
    },
  },
  { name: 'no-stat-record', without: 'the plan file stat record: the file read on every call', edits: NO_STAT },
  {
    name: 'no-stat-no-bytes',
    without: 'the stat record and the recorded bytes: the file read and parsed on every call',
    edits: {
      ...NO_STAT,
      'core/store/sqlite/rows.ts': [
        ...(NO_STAT['core/store/sqlite/rows.ts'] ?? []),
        ['const read = source.bytes();', 'const read: Uint8Array | undefined = undefined;'],
      ],
    },
  },
];

export interface Built {
  readonly name: string;
  readonly without: string;
  readonly cli: string;
}

/** Builds the named variants (today's always, first) into folders beside dist/; `remove` deletes them. */
export async function buildVariants(names: readonly string[]): Promise<{ builds: Built[]; remove: () => void }> {
  const chosen = VARIANTS.filter((v) => v.name === 'today' || names.includes(v.name));
  // Beside dist/, so the bundles find node_modules/ as dist/'s do.
  const top = mkdtempSync(join(ROOT, '.bench-variants-'));
  const remove = (): void => rmSync(top, { recursive: true, force: true });
  try {
    const builds: Built[] = [];
    for (const v of chosen) {
      const dir = join(top, v.name);
      const [bundle, launcher] = fastPathBuilds(common, [postgresApart, ownModulesArePure], versionDefine(ROOT));
      if (!bundle || !launcher) throw new Error('fastPathBuilds no longer makes the step bundle and the launcher');
      const edit = editing(v.edits ?? {});
      const into = (o: BuildOptions): BuildOptions => ({
        ...o,
        absWorkingDir: ROOT,
        outfile: join(dir, basename(o.outfile ?? '')),
        logLevel: 'error',
        plugins: [edit, ...(o.plugins ?? [])],
      });
      await Promise.all([build(into((v.bundle ?? ((o) => o))(bundle))), build(into(launcher))]);
      for (const other of ['full', 'postgres.cjs']) symlinkSync(join(ROOT, 'dist', other), join(dir, other));
      builds.push({ name: v.name, without: v.without, cli: join(dir, 'cli.cjs') });
    }
    return { builds, remove };
  } catch (err) {
    remove();
    throw err;
  }
}

/** A plugin that loads the edited files with their replacements made, each found exactly once. */
function editing(edits: Edits): Plugin {
  return {
    name: 'variant-edits',
    setup(b) {
      b.onLoad({ filter: /\/src\/.*\.ts$/ }, (args) => {
        const key = Object.keys(edits).find((k) => args.path.endsWith(`/src/${k}`));
        if (key === undefined) return undefined;
        let text = readFileSync(args.path, 'utf8');
        for (const [from, to] of edits[key] ?? []) {
          const parts = text.split(from);
          if (parts.length !== 2) throw new Error(`${key}: '${from}' found ${parts.length - 1} times, not once`);
          text = parts.join(to);
        }
        return { contents: text, loader: 'ts' };
      });
    },
  };
}
