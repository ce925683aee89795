// `npm test`'s runner (scripts/runTests.ts) on a small project of its own: every tier runs even when a
// check or a tier before it failed, the summary counts each tier's tests from node's test runner, the
// last line is `tests: N passed, M failed`, a failed build leaves the tiers unrun, saying so, and a
// tier marked `beside` runs at the same time as the one before it, its output printed whole after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../helpers/gitRepo.ts';
import type { TierRun } from '../../scripts/runTests.ts';

const RUNNER = join(PROJECT_ROOT, 'scripts', 'runTests.ts');

function project(t: { after: (fn: () => void) => void }, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'springfield-run-tests-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

interface FakeCheck {
  name: string;
  exit: number;
  gate?: boolean;
  forTiers?: boolean;
  /** Node code run before the exit (default: prints `out of <name>`). */
  code?: string;
}

const RUNS: TierRun[] = [
  { folders: ['unit', 'cli'], concurrency: 2 },
  { folders: ['faults'], concurrency: 1 },
];

/** Runs runTests(dir, checks, runs) in a process of its own; checks are node one-liners exiting with a code. */
function runner(dir: string, checks: FakeCheck[], runs: TierRun[] = RUNS) {
  const script = `
    import { runTests } from ${JSON.stringify(RUNNER)};
    const checks = ${JSON.stringify(checks)}.map((c) => ({
      ...c,
      argv: [process.execPath, '-e', (c.code ?? 'console.log("out of ' + c.name + '")') + '; process.exit(' + c.exit + ')'],
    }));
    process.exitCode = await runTests(${JSON.stringify(dir)}, checks, ${JSON.stringify(runs)});`;
  // Without the outer test run's context, whose children report to it instead of printing.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env });
  return { code: r.status, out: r.stdout, lines: r.stdout.trimEnd().split('\n') };
}

const PASS = "import { test } from 'node:test';\ntest('passes', () => {});\n";

test('every tier runs after a failed check and a failed tier; the summary counts each and ends with the totals', (t) => {
  const dir = project(t, {
    'test/unit/a.test.ts': `${PASS}test('also passes', () => {});\n`,
    'test/cli/b.test.ts': `${PASS}test('fails', () => { throw new Error('red'); });\n`,
    'test/faults/c.test.ts': `${PASS}test('skipped', { skip: true }, () => {});\n`,
  });

  const r = runner(dir, [
    { name: 'build', exit: 0, gate: true },
    { name: 'lint', exit: 1 },
  ]);

  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /=== build ===\nout of build\n/, "a check's output follows its heading whole");
  assert.match(r.out, /=== lint ===\nout of lint\n/);
  assert.match(r.out, /=== tests: faults \(1 at a time\) ===/, 'the faults tier ran after the failed one');
  const row = (name: string) => r.lines.find((l) => l.startsWith(`${name} `))?.split(/\s{2,}/) ?? [];
  assert.deepEqual(row('build').slice(0, 2), ['build', 'ok']);
  assert.deepEqual(row('lint').slice(0, 2), ['lint', 'FAILED']);
  assert.deepEqual(row('unit').slice(0, 3), ['unit', '2', '0']);
  assert.deepEqual(row('CLI').slice(0, 3), ['CLI', '1', '1']);
  assert.deepEqual(row('faults').slice(0, 3), ['faults', '1', '0'], 'a skipped test is neither');
  assert.deepEqual(row('total').slice(0, 3), ['total', '4', '2']);
  assert.equal(r.lines.at(-1), 'tests: 4 passed, 2 failed');
});

test('a failed build leaves the tiers unrun and says so; all green exits 0', (t) => {
  const dir = project(t, { 'test/unit/a.test.ts': PASS, 'test/cli/b.test.ts': PASS, 'test/faults/c.test.ts': PASS });

  const red = runner(dir, [
    { name: 'build', exit: 2, gate: true },
    { name: 'lint', exit: 0 },
    { name: 'prepare', exit: 0, forTiers: true },
  ]);
  const green = runner(dir, [{ name: 'build', exit: 0, gate: true }]);

  assert.equal(red.code, 1, red.out);
  assert.doesNotMatch(red.out, /=== tests:/);
  assert.match(red.out, /^unit +not run: the build failed$/m);
  assert.match(red.out, /^faults +not run: the build failed$/m);
  assert.match(red.out, /^prepare +not run: the build failed$/m);
  assert.doesNotMatch(red.out, /out of prepare/);
  assert.equal(red.lines.at(-1), 'tests: 0 passed, 1 failed');
  assert.equal(green.code, 0, green.out);
  assert.equal(green.lines.at(-1), 'tests: 3 passed, 0 failed');
});

test('the checks run side by side: each waits for a file the other writes', (t) => {
  const dir = project(t, { 'test/unit/a.test.ts': PASS });
  // Each writes its own file, then waits (up to a generous limit) for the other's: run one after the
  // other, the first would never see the second's file and would fail.
  const meets = (mine: string, theirs: string) =>
    `const fs = require("node:fs"); fs.writeFileSync(${JSON.stringify(join(dir, mine))}, ""); ` +
    `const until = Date.now() + 120000; while (!fs.existsSync(${JSON.stringify(join(dir, theirs))})) ` +
    `{ if (Date.now() > until) process.exit(1); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20); }`;

  const r = runner(dir, [
    { name: 'typecheck', exit: 0, gate: true, code: meets('typecheck', 'lint') },
    { name: 'lint', exit: 0, code: meets('lint', 'typecheck') },
  ]);

  assert.equal(r.code, 0, r.out);
  assert.equal(r.lines.at(-1), 'tests: 1 passed, 0 failed');
});

test('a tier beside another runs at the same time, its output whole after the streamed one', (t) => {
  // Each tier's test writes its own file, then waits (up to a generous limit) for the other's: run one
  // after the other, the first would never see the second's file and would fail.
  const meets = (mine: string, theirs: string) =>
    "import { test } from 'node:test';\nimport fs from 'node:fs';\n" +
    `test('meets ${theirs}', () => { fs.writeFileSync(${JSON.stringify(mine)}, ''); ` +
    `const until = Date.now() + 120000; while (!fs.existsSync(${JSON.stringify(theirs)})) ` +
    `{ if (Date.now() > until) throw new Error('never met'); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20); } });\n`;
  const dir = project(t, {});
  for (const [path, text] of Object.entries({
    'test/unit/a.test.ts': meets(join(dir, 'unit-here'), join(dir, 'editor-here')),
    'test/integration/b.test.ts': meets(join(dir, 'editor-here'), join(dir, 'unit-here')),
  })) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }

  const r = runner(
    dir,
    [{ name: 'build', exit: 0, gate: true }],
    [
      { folders: ['unit'], concurrency: 1 },
      { folders: ['integration'], concurrency: 1, beside: true },
    ],
  );

  assert.equal(r.code, 0, r.out);
  assert.match(
    r.out,
    /=== tests: unit \(1 at a time\); beside it tests: integration \(1 at a time\), its output after ===/,
  );
  assert.match(r.out, /\(tests: integration \(1 at a time\): ended, 1 passed, 0 failed; its output comes after\)/);
  const streamed = r.out.indexOf('/editor-here');
  const besideHeading = r.out.indexOf('=== tests: integration (1 at a time), run beside the above ===');
  assert.ok(streamed > 0 && besideHeading > streamed, `the beside tier's output comes after: ${r.out}`);
  assert.ok(r.out.indexOf('/unit-here') > besideHeading, "the beside tier's own output follows its heading");
  const row = (name: string) => r.lines.find((l) => l.startsWith(`${name} `))?.split(/\s{2,}/) ?? [];
  assert.deepEqual(row('unit').slice(0, 3), ['unit', '1', '0']);
  assert.deepEqual(row('integration').slice(0, 3), ['integration', '1', '0']);
  assert.equal(r.lines.at(-1), 'tests: 2 passed, 0 failed');
});
