// `npm run pack:cli`: the npm package of the `springfield` CLI, as `npm pack` makes it, from a folder
// staged with only what the CLI runs. The repository's own package.json is the VS Code extension's
// manifest (vsce wants an unscoped name and refuses a `files` list beside .vscodeignore), and the
// name `springfield` on the npm registry belongs to another project, so the CLI is published as
// CLI_PACKAGE (README, "Install"); its manifest is made here from the repository's, so the version,
// licence and run-time dependencies have one source.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_PACKAGE } from '../src/shared/cliPackage.ts';
import { cleanEnv, node24, npmCli } from './codeServer.ts';
import { messageOf } from '../src/shared/errorMessage.ts';

export { CLI_PACKAGE };

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * What the CLI loads at run time, all under dist/ (esbuild.mjs): the executable, the step commands'
 * bundle, the full CLI's ES module chunks (the MCP SDK and zod linked in), the PostgreSQL backend
 * with node-postgres, and the demo agents' stand-in (`springfield agents use demo`). better-sqlite3
 * is the one package left outside the bundles (a native module). The extension's bundle and the
 * webviews are not the CLI's.
 */
export const CLI_FILES: readonly string[] = [
  'dist/cli.cjs',
  'dist/springfield.cjs',
  'dist/postgres.cjs',
  'dist/standInAgent.cjs',
  'dist/full/',
];

interface RootManifest {
  version: string;
  description: string;
  license: string;
  keywords?: string[];
  repository?: unknown;
  homepage?: string;
  bugs?: unknown;
  engines: { node: string };
  dependencies: Record<string, string>;
}

/** The published package's manifest, made from the repository's. */
export function cliManifest(root = projectRoot): Record<string, unknown> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as RootManifest;
  return {
    name: CLI_PACKAGE,
    version: pkg.version,
    // Where npm shows a package before it is installed (npm view, search, the registry's page); at
    // install, npm warns against engines on an older Node.
    description: `${pkg.description} Needs Node.js ${pkg.engines.node.replace(/^>=\s*/, '')} or later.`,
    license: pkg.license,
    keywords: pkg.keywords ?? [],
    ...(pkg.repository ? { repository: pkg.repository } : {}),
    ...(pkg.homepage ? { homepage: pkg.homepage } : {}),
    ...(pkg.bugs ? { bugs: pkg.bugs } : {}),
    // dist/full/*.js are ES modules.
    type: 'module',
    bin: { springfield: 'dist/cli.cjs' },
    files: [...CLI_FILES],
    engines: { node: pkg.engines.node },
    // The repository's run-time dependencies are better-sqlite3 alone (the rest is bundled), which the extension needs too.
    dependencies: pkg.dependencies,
  };
}

export interface PackedCli {
  /** The tarball's path. */
  tarball: string;
  /** Its size in bytes. */
  size: number;
  /** The paths inside it, as npm lists them (without the leading `package/`). */
  files: string[];
}

/** Stages the package in a temporary folder and runs `npm pack` there, writing the tarball into `outDir`. */
export function packCli(outDir: string, root = projectRoot): PackedCli {
  for (const file of CLI_FILES) {
    if (!existsSync(join(root, file))) throw new Error(`${join(root, file)} is missing: build first (npm run build)`);
  }
  const stage = mkdtempSync(join(tmpdir(), 'springfield-pack-'));
  try {
    for (const file of CLI_FILES) {
      mkdirSync(dirname(join(stage, file)), { recursive: true });
      cpSync(join(root, file), join(stage, file), { recursive: true });
    }
    chmodSync(join(stage, 'dist', 'cli.cjs'), 0o755);
    for (const file of ['README.md', 'LICENSE']) copyFileSync(join(root, file), join(stage, file));
    writeFileSync(join(stage, 'package.json'), JSON.stringify(cliManifest(root), null, 2) + '\n');
    mkdirSync(outDir, { recursive: true });
    const node = node24();
    const out = execFileSync(
      node,
      [npmCli(), 'pack', '--json', '--ignore-scripts', '--pack-destination', resolve(outDir)],
      {
        cwd: stage,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: cleanEnv({
          PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`,
          npm_config_update_notifier: 'false',
        }),
      },
    );
    const [packed] = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
    if (!packed) throw new Error(`npm pack printed no package: ${out}`);
    const tarball = join(resolve(outDir), packed.filename);
    return { tarball, size: statSync(tarball).size, files: packed.files.map((f) => f.path).sort() };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--out');
  const outDir = at > 0 ? process.argv[at + 1] : projectRoot;
  try {
    if (!outDir) throw new Error('--out needs a folder');
    const { tarball, size, files } = packCli(outDir);
    process.stdout.write(
      `${tarball} (${(size / 1024).toFixed(0)} KiB, ${files.length} files)\ninstall it with: npm install -g ${tarball}\n`,
    );
  } catch (err) {
    process.stderr.write(`pack:cli: ${messageOf(err)}\n`);
    process.exitCode = 1;
  }
}
