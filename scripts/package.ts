// `npm run package`: the universal VSIX (springfield.vsix, every platform's better-sqlite3 build) and
// one VSIX per platform better-sqlite3 has a prebuild for (dist-vsix/springfield-<target>.vsix, made
// with `vsce package --target`, carrying only that platform's build). Each platform package is made
// with .vscodeignore in which the line shipping every prebuild names its own alone (vsce applies
// negations after exclusions, so an exclusion added below it would not take the others out).
// vsce packages a staged copy of the repository (stageProject below; docs/development.md, "Packages").
//   node scripts/package.ts [--out DIR] [--target T …]   (T: universal or a VS Code target; default all)
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

/** What never ships and is never read by vsce: the repository's history, caches, test output, packages. */
const NEVER_SHIPS = /^(\.git|\.cache|node_modules|test-results|dist-vsix|\.springfield|\.bench-variants-.*|.*\.vsix)$/;

/**
 * A copy of the repository for vsce to package: everything but NEVER_SHIPS, and of node_modules the
 * production dependencies npm lists (the folders vsce itself would read). vsce walks the whole folder
 * it packages and matches each file against each ignore pattern; in the repository, with `.cache`'s
 * code-server and agent CLIs (12,000 files), that was half of its 7 CPU-s per package.
 */
function stageProject(stage: string): void {
  mkdirSync(join(stage, 'node_modules'), { recursive: true });
  for (const entry of readdirSync(projectRoot)) {
    if (!NEVER_SHIPS.test(entry)) cpSync(join(projectRoot, entry), join(stage, entry), { recursive: true });
  }
  let listed: string;
  try {
    listed = execFileSync('npm', ['list', '--production', '--parseable', '--depth=99999', '--loglevel=error'], {
      cwd: projectRoot,
      stdio: 'pipe',
      encoding: 'utf8',
    });
  } catch (err) {
    const e = err as { stderr?: string };
    throw new PackageError(`npm list --production failed: ${(e.stderr?.split('\n')[0] || messageOf(err)).trim()}`);
  }
  for (const dir of listed.split('\n').filter(Boolean)) {
    const inRoot = relative(projectRoot, dir);
    if (inRoot.startsWith('node_modules')) cpSync(dir, join(stage, inRoot), { recursive: true });
  }
}

function runVsce(stage: string, args: string[]): void {
  try {
    execFileSync(process.execPath, [vsce, 'package', ...args], { cwd: stage, stdio: 'pipe', encoding: 'utf8' });
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
  const platforms = VSIX_TARGETS.filter((t) => targets.includes(t.target));
  if (!targets.includes('universal') && platforms.length === 0) return made;
  const scratch = mkdtempSync(join(tmpdir(), 'sf-vsix-'));
  try {
    const stage = join(scratch, 'project');
    stageProject(stage);
    if (targets.includes('universal')) {
      const file = join(outDir, UNIVERSAL_VSIX);
      runVsce(stage, ['-o', file]);
      check(file, undefined);
    }
    const vscodeignore = readFileSync(join(projectRoot, '.vscodeignore'), 'utf8');
    for (const platform of platforms) {
      const ignoreFile = join(scratch, `${platform.target}.vscodeignore`);
      writeFileSync(ignoreFile, platformIgnore(vscodeignore, platform), { flag: 'wx' });
      const file = platformVsix(outDir, platform.target);
      mkdirSync(dirname(file), { recursive: true });
      runVsce(stage, ['--target', platform.target, '--ignoreFile', ignoreFile, '-o', file]);
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
