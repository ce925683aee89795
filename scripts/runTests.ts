// `npm test`: build, typecheck and lint side by side (each one's output printed whole when it ends),
// then prepare, then every tier, each run even when one before it failed: the real editor's beside
// the others, whose output is streamed as it comes, its own printed whole after; then one summary
// (tier, passed, failed, time) and, last, `tests: N passed, M failed`. Exits non-zero when anything
// failed. A failed build or typecheck leaves nothing meaningful to test: the tiers are then not run,
// and the summary says so.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FileTally } from './testTally.ts';

const here = dirname(fileURLToPath(import.meta.url));

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const node = process.execPath;

export interface Check {
  readonly name: string;
  readonly argv: readonly string[];
  /** A failure leaves the tiers nothing meaningful to test (build, typecheck). */
  readonly gate?: boolean;
  /** Needed only by the tiers: run after the others, and not when the tiers are not. */
  readonly forTiers?: boolean;
}

export interface TierRun {
  /** Folders under test/, run together by one `node --test`. */
  readonly folders: readonly string[];
  readonly concurrency: number;
  /** Runs beside the run before it, not after; its output comes whole once both have ended. */
  readonly beside?: boolean;
}

export const CHECKS: readonly Check[] = [
  { name: 'build', argv: [npm, 'run', '-s', 'build'], gate: true },
  { name: 'typecheck', argv: [npm, 'run', '-s', 'typecheck'], gate: true },
  { name: 'lint', argv: [npm, 'run', '-s', 'lint'] },
  { name: 'prepare', argv: [node, 'scripts/prepareTests.ts'], forTiers: true },
];

/**
 * The tiers: all but the real editor in one run, two files at a time (the longest folders first, the
 * many short unit files last, so no core idles at the end); beside it the editor, two at a time (each
 * editor session has its own code-server, port, profile and repository). The editor's tier alone keeps
 * both cores busy (Chromium and code-server), the first 1.6 of them: side by side, neither leaves a
 * core idle at its end (docs/development.md, "`npm test` and the tiers").
 */
export const RUNS: readonly TierRun[] = [
  { folders: ['stress', 'postgres', 'cli', 'faults', 'unit'], concurrency: 2 },
  { folders: ['integration'], concurrency: 2, beside: true },
];

const NAMES: Readonly<Record<string, string>> = { cli: 'CLI', postgres: 'PostgreSQL' };
const tierName = (folder: string) => NAMES[folder] ?? folder;

interface Row {
  readonly name: string;
  pass: number | null;
  fail: number;
  ms: number;
  note: string;
}

let interrupted = false;

/** Runs `argv` in `root`; its output goes to this process's, or, with `captured`, is collected there. */
function run(root: string, argv: readonly string[], captured?: Buffer[]): Promise<{ code: number; ms: number }> {
  const started = Date.now();
  return new Promise((done) => {
    const [command = '', ...args] = argv;
    const child = spawn(command, args, { cwd: root, stdio: captured ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    child.stdout?.on('data', (d: Buffer) => captured?.push(d));
    child.stderr?.on('data', (d: Buffer) => captured?.push(d));
    child.on('error', (error) => {
      captured?.push(Buffer.from(`${command}: ${error.message}\n`));
      if (!captured) process.stderr.write(`${command}: ${error.message}\n`);
      done({ code: 127, ms: Date.now() - started });
    });
    child.on('close', (code, signal) => done({ code: code ?? (signal ? 128 : 1), ms: Date.now() - started }));
  });
}

function readTally(path: string): Record<string, FileTally> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, FileTally>;
  } catch {
    return {};
  }
}

/** Runs one tier; with `captured`, its output is collected there instead of streamed. */
async function runTier(root: string, tier: TierRun, scratch: string, captured?: Buffer[]): Promise<Row[]> {
  const { folders } = tier;
  const tallyFile = join(scratch, `${folders.join('-')}.json`);
  const { code, ms } = await run(
    root,
    [
      node,
      '--test',
      `--test-concurrency=${tier.concurrency}`,
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${join(here, 'testTally.ts')}`,
      `--test-reporter-destination=${tallyFile}`,
      ...folders.map((f) => `test/${f}/**/*.test.ts`),
    ],
    captured,
  );
  const shared = folders.length > 1;
  const rows: Row[] = folders.map((f) => ({ name: tierName(f), pass: 0, fail: 0, ms: shared ? 0 : ms, note: '' }));
  for (const [file, t] of Object.entries(readTally(tallyFile))) {
    const row = rows[folders.indexOf(relative(root, file).split(/[\\/]/)[1] ?? '')] ?? rows[0];
    if (!row) continue;
    row.pass = (row.pass ?? 0) + t.pass;
    row.fail += t.fail;
    if (shared) row.ms += t.ms;
  }
  if (shared) for (const row of rows) row.note = `summed over its files (${folders.map(tierName).join(', ')}: one run)`;
  if (code !== 0 && rows.every((r) => r.fail === 0) && rows[0]) {
    rows[0].fail = 1;
    rows[0].note = `exit code ${code} with no failed test counted`;
  }
  return rows;
}

/** The tests the rows passed and failed, a failed check counting as one failure. */
function counted(rows: readonly Row[]): { passed: number; failed: number } {
  return { passed: rows.reduce((n, r) => n + (r.pass ?? 0), 0), failed: rows.reduce((n, r) => n + r.fail, 0) };
}

/** The runs grouped: each with the runs marked `beside` that follow it. */
function besideGroups(runs: readonly TierRun[]): TierRun[][] {
  const groups: TierRun[][] = [];
  for (const tier of runs) {
    const last = groups.at(-1);
    if (tier.beside && last) last.push(tier);
    else groups.push([tier]);
  }
  return groups;
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

function table(rows: readonly Row[]): string {
  const cells = rows.map((r) => [
    r.name,
    r.pass === null ? '' : String(r.pass),
    r.pass !== null ? String(r.fail) : r.fail ? 'FAILED' : r.note ? '' : 'ok',
    r.note.startsWith('not run') ? '' : duration(r.ms),
    r.note,
  ]);
  const head = ['', 'passed', 'failed', 'time', ''];
  const width = head.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: readonly string[]) =>
    c
      .map((x, i) => (i === 0 || i === 4 ? x.padEnd(width[i] ?? 0) : x.padStart(width[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(head), ...cells.map(line)].join('\n');
}

/** Runs the checks and the tiers in `root`, prints the summary; the exit code to use. */
export async function runTests(root: string, checks: readonly Check[], runs: readonly TierRun[]): Promise<number> {
  const started = Date.now();
  const rows: Row[] = [];
  let gateFailed: string | null = null;
  const notRun = (name: string) =>
    rows.push({
      name,
      pass: null,
      fail: 0,
      ms: 0,
      note: gateFailed ? `not run: the ${gateFailed} failed` : 'not run: interrupted',
    });
  const runCheck = async (check: Check): Promise<Row> => {
    const output: Buffer[] = [];
    const { code, ms } = await run(root, check.argv, output);
    process.stdout.write(`\n=== ${check.name} ===\n`);
    process.stdout.write(Buffer.concat(output));
    if (code !== 0 && check.gate) gateFailed ??= check.name;
    return { name: check.name, pass: null, fail: code === 0 ? 0 : 1, ms, note: '' };
  };
  // Independent of each other, so side by side; what is only for the tiers waits for the gates.
  rows.push(...(await Promise.all(checks.filter((c) => !c.forTiers).map(runCheck))));
  for (const check of checks.filter((c) => c.forTiers)) {
    if (interrupted || gateFailed) notRun(check.name);
    else rows.push(await runCheck(check));
  }
  const scratch = mkdtempSync(join(tmpdir(), 'springfield-test-tally-'));
  const heading = (tier: TierRun) => `tests: ${tier.folders.map(tierName).join(', ')} (${tier.concurrency} at a time)`;
  try {
    // Each run with those beside it: the first streams its output, the others' comes whole after.
    for (const group of besideGroups(runs)) {
      if (gateFailed || interrupted) {
        for (const tier of group) for (const f of tier.folders) notRun(tierName(f));
        continue;
      }
      const [first, ...beside] = group;
      if (!first) continue;
      const outputs = beside.map((): Buffer[] => []);
      process.stdout.write(
        `\n=== ${heading(first)}${beside.map((b) => `; beside it ${heading(b)}, its output after`).join('')} ===\n`,
      );
      const ran = await Promise.all([
        runTier(root, first, scratch),
        ...beside.map(async (tier, i) => {
          const done = await runTier(root, tier, scratch, outputs[i]);
          const { passed, failed } = counted(done);
          process.stdout.write(
            `\n(${heading(tier)}: ended, ${passed} passed, ${failed} failed; its output comes after)\n`,
          );
          return done;
        }),
      ]);
      for (const [i, tier] of beside.entries()) {
        process.stdout.write(`\n=== ${heading(tier)}, run beside the above ===\n`);
        process.stdout.write(Buffer.concat(outputs[i] ?? []));
      }
      rows.push(...ran.flat());
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const { passed, failed } = counted(rows);
  rows.push({ name: 'total', pass: passed, fail: failed, ms: Date.now() - started, note: '' });
  process.stdout.write(`\n${table(rows)}\n`);
  if (rows.some((r) => r.pass === null && r.fail > 0)) process.stdout.write('(a failed check counts as one failure)\n');
  process.stdout.write(`tests: ${passed} passed, ${failed} failed\n`);
  return failed > 0 || gateFailed || interrupted ? 1 : 0;
}

if (import.meta.main) {
  process.on('SIGINT', () => (interrupted = true)); // the child has it too; the summary still comes
  const root = resolve(here, '..');
  // Every Node process the run starts shares Node's compile cache: a test file's process then reads the
  // TypeScript it imports stripped and compiled already (docs/development.md, "`npm test` and the tiers").
  process.env.NODE_COMPILE_CACHE ??= join(root, '.cache', 'node-compile-cache');
  process.exitCode = await runTests(root, CHECKS, RUNS);
}
