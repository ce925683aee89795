// `npm run package`: the universal VSIX (springfield.vsix, every platform's better-sqlite3 build) and
// one VSIX per platform better-sqlite3 has a prebuild for (dist-vsix/springfield-<target>.vsix, made
// with `vsce package --target`, carrying only that platform's build). Each platform package is made
// with .vscodeignore in which the line shipping every prebuild names its own alone (vsce applies
// negations after exclusions, so an exclusion added below it would not take the others out).
//   node scripts/package.ts [--out DIR] [--target T …]   (T: universal or a VS Code target; default all)
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkVsix, expectedIdentity } from './vsixCheck.ts';
import { PREBUILDS_DIR, platformVsix, UNIVERSAL_VSIX, VSIX_TARGETS, type VsixTarget } from './vsixTargets.ts';
import { messageOf } from '../src/shared/errorMessage.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const vsce = join(projectRoot, 'node_modules', '@vscode', 'vsce', 'vsce');
/** The .vscodeignore line that ships every prebuild; a platform package's ignore file narrows it. */
const ALL_PREBUILDS = `!${PREBUILDS_DIR}/**`;

/** A package that cannot be made, said in one line (exit 1). */
export class PackageError extends Error {}
/** A command line that does not say what to make (exit 2). */
export class UsageError extends Error {}

/** Checks that the prebuilds better-sqlite3 ships and the targets the VSIX is built for are the same set. */
export function checkPrebuilds(root = projectRoot): void {
  const shipped = readdirSync(join(root, PREBUILDS_DIR))
    .filter((f) => f.endsWith('.node'))
    .map((f) => f.slice(0, -'.node'.length));
  const known = VSIX_TARGETS.map((t) => t.prebuild);
  const unmapped = shipped.filter((p) => !known.includes(p));
  if (unmapped.length > 0)
    throw new PackageError(
      `${PREBUILDS_DIR} has ${unmapped.join(', ')}, which no VS Code target in scripts/vsixTargets.ts names`,
    );
  const missing = known.filter((p) => !shipped.includes(p));
  if (missing.length > 0) throw new PackageError(`${PREBUILDS_DIR} has no ${missing.join(', ')} build`);
}

/** The ignore file of one platform's package: .vscodeignore with its own prebuild in place of all of them. */
export function platformIgnore(vscodeignore: string, target: VsixTarget): string {
  const lines = vscodeignore.split('\n');
  const at = lines.findIndex((l) => l.trim() === ALL_PREBUILDS);
  if (at < 0) throw new PackageError(`.vscodeignore has no line '${ALL_PREBUILDS}' to narrow to one platform`);
  lines[at] = `!${PREBUILDS_DIR}/${target.prebuild}.node`;
  return lines.join('\n');
}

function runVsce(args: string[]): void {
  try {
    execFileSync(process.execPath, [vsce, 'package', ...args], { cwd: projectRoot, stdio: 'pipe', encoding: 'utf8' });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string };
    const said = `${e.stderr ?? ''}\n${e.stdout ?? ''}`.split('\n').find((l) => /ERROR|error/.test(l));
    throw new PackageError(`vsce package ${args.join(' ')} failed: ${(said ?? messageOf(err)).trim()}`);
  }
}

/** Builds the packages named (`universal` and VS Code targets) under `outDir`; returns their paths. */
export function packageVsix(outDir: string, targets: readonly string[]): string[] {
  checkPrebuilds();
  const identity = expectedIdentity(projectRoot);
  const made: string[] = [];
  const check = (file: string, target: string | undefined): void => {
    const problems = checkVsix(file, target, identity);
    if (problems.length > 0) throw new PackageError(problems[0]);
    made.push(file);
    const shown = relative(process.cwd(), file) || file;
    console.log(`${target ?? 'universal'}: ${shown} (${(statSync(file).size / 1e6).toFixed(1)} MB)`);
  };
  mkdirSync(outDir, { recursive: true });
  if (targets.includes('universal')) {
    const file = join(outDir, UNIVERSAL_VSIX);
    runVsce(['-o', file]);
    check(file, undefined);
  }
  const platforms = VSIX_TARGETS.filter((t) => targets.includes(t.target));
  if (platforms.length === 0) return made;
  const vscodeignore = readFileSync(join(projectRoot, '.vscodeignore'), 'utf8');
  const scratch = mkdtempSync(join(tmpdir(), 'sf-vsixignore-'));
  try {
    for (const platform of platforms) {
      const ignoreFile = join(scratch, `${platform.target}.vscodeignore`);
      writeFileSync(ignoreFile, platformIgnore(vscodeignore, platform), { flag: 'wx' });
      const file = platformVsix(outDir, platform.target);
      mkdirSync(dirname(file), { recursive: true });
      runVsce(['--target', platform.target, '--ignoreFile', ignoreFile, '-o', file]);
      check(file, platform.target);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return made;
}

/** The command line: `--out DIR` (default: the repository) and `--target T`, repeatable. */
export function parseCommandLine(argv: readonly string[]): { outDir: string; targets: string[] } {
  let values: { out?: string | undefined; target?: string[] | undefined };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { out: { type: 'string' }, target: { type: 'string', multiple: true } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(messageOf(err));
  }
  const known = ['universal', ...VSIX_TARGETS.map((t) => t.target)];
  const targets = values.target ?? known;
  const unknown = targets.filter((t) => !known.includes(t));
  if (unknown.length > 0) throw new UsageError(`--target ${unknown.join(', ')} is not one of: ${known.join(', ')}`);
  return { outDir: resolve(values.out ?? projectRoot), targets };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const { outDir, targets } = parseCommandLine(process.argv.slice(2));
    packageVsix(outDir, targets);
  } catch (err) {
    console.error(`package: ${messageOf(err)}`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  }
}
