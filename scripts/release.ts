// `npm run release`: publishes the platform packages `npm run package` made
// (dist-vsix/springfield-<target>.vsix) to the Visual Studio Marketplace (`vsce publish
// --packagePath`) and to Open VSX (`ovsx publish --packagePath`), which Cursor, Windsurf and VSCodium
// install from. Both registries file a package under the TargetPlatform its own manifest names (vsce
// refuses --target beside --packagePath; ovsx ignores it for a built package), so every package is
// checked first: it exists, names this extension, this version and its platform, and carries that
// platform's better-sqlite3 build alone. The universal springfield.vsix is not published: every
// platform it runs on has a package of its own.
//   node scripts/release.ts [--dry-run] [--from DIR]
// The tokens come from the environment, as both tools read them (VSCE_PAT, OVSX_PAT), never from
// the command line. --dry-run needs none: it checks the packages and prints the commands it would
// run. Each command is run as its argument list, never through a shell.
import { execFileSync } from 'node:child_process';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { node24, npmCli } from './codeServer.ts';
import { checkVsix, expectedIdentity } from './vsixCheck.ts';
import { platformVsix, VSIX_TARGETS } from './vsixTargets.ts';
import { messageOf } from '../src/shared/errorMessage.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The Open VSX CLI, run with npx at this exact version rather than kept as a devDependency
 * (docs/architecture.md, "Release tools").
 */
export const OVSX = 'ovsx@1.4.0';

export interface Command {
  registry: 'Marketplace' | 'Open VSX';
  argv: string[];
}

/** The commands that publish the platform packages under `fromDir`: the Marketplace's, then Open VSX's. */
export function releaseCommands(fromDir: string): Command[] {
  const files = VSIX_TARGETS.map((t) => platformVsix(fromDir, t.target));
  const node = node24();
  const vsce = join(projectRoot, 'node_modules', '@vscode', 'vsce', 'vsce');
  const npx = join(dirname(npmCli()), 'npx-cli.js');
  return [
    ...files.map((f): Command => ({ registry: 'Marketplace', argv: [node, vsce, 'publish', '--packagePath', f] })),
    ...files.map((f): Command => ({
      registry: 'Open VSX',
      argv: [node, npx, '--yes', OVSX, 'publish', '--packagePath', f],
    })),
  ];
}

/** An argument list as a person reads it: words plain, anything else single-quoted. */
export function shown(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** Every problem with the packages under `fromDir`, one line each. */
export function checkPackages(fromDir: string): string[] {
  const identity = expectedIdentity(projectRoot);
  return VSIX_TARGETS.flatMap((t) => checkVsix(platformVsix(fromDir, t.target), t.target, identity));
}

function main(argv: readonly string[]): number {
  let values: { 'dry-run'?: boolean | undefined; from?: string | undefined };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { 'dry-run': { type: 'boolean' }, from: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    console.error(`release: ${messageOf(err)}`);
    return 2;
  }
  const dryRun = values['dry-run'] === true;
  const missing = ['VSCE_PAT', 'OVSX_PAT'].filter((name) => !process.env[name]);
  if (!dryRun && missing.length > 0) {
    console.error(
      `release: ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set (the Marketplace's and Open VSX's publishing tokens); nothing was published (--dry-run shows what would be)`,
    );
    return 2;
  }
  const fromDir = resolve(values.from ?? projectRoot);
  const problems = checkPackages(fromDir);
  if (problems.length > 0) {
    for (const problem of problems) console.error(`release: ${problem}`);
    console.error('release: nothing was published');
    return 1;
  }
  const commands = releaseCommands(fromDir);
  if (dryRun) {
    for (const command of commands) console.log(shown(command.argv));
    return 0;
  }
  // ovsx runs under the Node that runs this (npx starts it through `node` on the PATH).
  const env = { ...process.env, PATH: `${dirname(node24())}${delimiter}${process.env.PATH ?? ''}` };
  for (const {
    registry,
    argv: [file = '', ...args],
  } of commands) {
    console.log(`release: ${registry}: ${shown(args.slice(-1))}`);
    try {
      execFileSync(file, args, { stdio: 'inherit', env });
    } catch {
      console.error(`release: ${registry} refused ${args.at(-1) ?? ''}; the packages before it are published`);
      return 1;
    }
  }
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
