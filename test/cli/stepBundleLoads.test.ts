import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE_WRAPPER } from '../../src/cli/fastPath/codeCache.ts';
import {
  assertClaimed,
  assertOk,
  CLI_PATH,
  ensureCli,
  makeRepo,
  runCli,
  runJson,
  type Repo,
} from '../helpers/gitRepo.ts';

// docs/cli-cost.md: in the step commands' bundle, core's node:crypto, node:child_process and node:os
// imports load on first call (src/cli/fastPath/lazy/), so a claim or a show loads none of them; and the bundle
// links only the step commands' store (StepStore), not the whole one.

const P = 'plans/p.md';
const PLAN =
  '# Plan: Loads\n\n## Step 1: One {#step-1}\n**Tasks:**\n- [ ] Do it\n\n## Step 2: Two {#step-2}\n**Tasks:**\n- [ ] Do it\n';

let repo: Repo;
let dir: string;
let hook: string;

before(() => {
  ensureCli();
  repo = makeRepo({ files: { [P]: PLAN } });
  dir = mkdtempSync(join(tmpdir(), 'springfield-loads-'));
  hook = join(dir, 'hook.cjs');
  // At exit, the Node builtins this process loaded that the test watches for, one per line.
  writeFileSync(
    hook,
    `process.on('exit', () => require('node:fs').writeFileSync(process.env.SF_TEST_LOADED, process.moduleLoadList.filter((m) => /^NativeModule (crypto|child_process|os)$/.test(m)).join('\\n')));\n`,
  );
});
after(() => {
  repo.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** The watched builtins `springfield args` loaded. */
function loaded(args: string[]): { out: ReturnType<typeof runCli>; modules: string[] } {
  const file = join(dir, 'loaded.txt');
  writeFileSync(file, 'not written');
  const out = runCli(repo.root, args, { NODE_OPTIONS: `--require ${hook}`, SF_TEST_LOADED: file });
  const text = readFileSync(file, 'utf8');
  return { out, modules: text === '' ? [] : text.split('\n') };
}

test('init hashes the plan, so it loads node:crypto (the watch sees it)', () => {
  const r = loaded(['init', P, '--json']);
  assertOk(r.out);
  assert.deepEqual(r.modules, ['NativeModule crypto']);
});

test('claim, show --step and ready load none of node:crypto, node:child_process and node:os', () => {
  const claim = loaded(['claim', P, '--json']);
  assertClaimed(claim.out);
  assert.deepEqual(claim.modules, []);
  for (const args of [
    ['show', P, '--step', 'step-1', '--json'],
    ['ready', P, '--json'],
  ]) {
    const r = loaded(args);
    assertOk(r.out);
    assert.deepEqual(r.modules, [], args.join(' '));
  }
});

test("the step commands' bundle links none of zod: its schemas are for the other commands and the editor", () => {
  // Seen: a build option that dropped the pure-modules plugin linked zod in (157 KB became 619 KB).
  const bundle = readFileSync(join(CLI_PATH, '..', 'springfield.cjs'), 'utf8');
  assert.equal(/ZodError|\$ZodType/.test(bundle), false, 'dist/springfield.cjs contains zod');
});

test("the step commands' bundle links only the step commands' store: no epic, run or plan-version SQL", () => {
  // Seen: one store class for every caller linked all 80 operations into this bundle (202 KB); the
  // step commands' store (StepOperations over StepPort) links what they run (docs/cli-cost.md, "The step store").
  const bundle = readFileSync(join(CLI_PATH, '..', 'springfield.cjs'), 'utf8');
  for (const sql of ['INSERT INTO epics', 'INSERT INTO runs', 'INSERT INTO plan_versions'])
    assert.equal(bundle.includes(sql), false, `dist/springfield.cjs contains ${sql}`);
  // The same SQL is in the whole CLI's chunks: the check looks for text that exists.
  const whole = readdirSync(join(CLI_PATH, '..', 'full', 'chunks'))
    .map((f) => readFileSync(join(CLI_PATH, '..', 'full', 'chunks', f), 'utf8'))
    .join('\n');
  for (const sql of ['INSERT INTO epics', 'INSERT INTO runs', 'INSERT INTO plan_versions'])
    assert.equal(whole.includes(sql), true, `the whole CLI lacks ${sql}`);
});

test("the step commands' bundle is the function expression the launcher compiles as read (no copy of its text)", () => {
  // docs/cli-cost.md, "The young generation": wrapped at run time, its 130 KB were copied into a new
  // string in every process. A bundle that is not wrapped is refused by the launcher, not run half-way.
  const bundle = readFileSync(join(CLI_PATH, '..', 'springfield.cjs'), 'utf8');
  assert.ok(bundle.startsWith(BUNDLE_WRAPPER), bundle.slice(0, 80));
  assert.ok(bundle.trimEnd().endsWith('});'), bundle.slice(-40));
  assertOk(runJson(repo.root, ['ready', P]));
});

test("the step commands open the database through the runtime's own SQLite: better-sqlite3 is neither loaded nor mapped", () => {
  // docs/cli-cost.md, "The built-in SQLite". The watch itself is shown to see better-sqlite3 where it
  // is used: the whole CLI's `doctor` opens the database through it.
  const watch = join(dir, 'driver.cjs');
  writeFileSync(
    watch,
    `process.on('exit', () => require('node:fs').writeFileSync(process.env.SF_TEST_DRIVER, JSON.stringify({
      js: Object.keys(require.cache).some((f) => f.includes('better-sqlite3')),
      mapped: require('node:fs').readFileSync('/proc/self/maps', 'utf8').includes('better-sqlite3'),
      builtin: process.moduleLoadList.includes('NativeModule sqlite') || process.moduleLoadList.includes('Internal Binding sqlite'),
    })));\n`,
  );
  const seen = (args: string[], options = ''): { js: boolean; mapped: boolean; builtin: boolean } => {
    const file = join(dir, 'driver.json');
    writeFileSync(file, '{}');
    assertOk(runCli(repo.root, args, { NODE_OPTIONS: `--require ${watch} ${options}`, SF_TEST_DRIVER: file }));
    return JSON.parse(readFileSync(file, 'utf8')) as { js: boolean; mapped: boolean; builtin: boolean };
  };
  const claimed = assertClaimed(runJson(repo.root, ['claim', P]));
  for (const args of [
    ['heartbeat', P, claimed.step_anchor, '--json'],
    ['show', P, '--step', claimed.step_anchor, '--json'],
    ['ready', P, '--json'],
    ['update', P, claimed.step_anchor, '--all', 'completed', '--json'],
  ])
    assert.deepEqual(seen(args), { js: false, mapped: false, builtin: true }, args.join(' '));
  assert.deepEqual(seen(['doctor', '--json']), { js: true, mapped: true, builtin: false });
  // A runtime without node:sqlite (as Node 22 before 22.16 is, for this adapter): better-sqlite3, found from the bundle.
  assert.deepEqual(seen(['ready', P, '--json'], '--no-experimental-sqlite'), {
    js: true,
    mapped: true,
    builtin: false,
  });
});
