import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import type { PlanView } from '../../src/core/store/types.ts';
import {
  assertOk,
  CLI_PATH,
  cleanEnv,
  ensureCli,
  makeRepo,
  PROJECT_ROOT,
  runCli,
  type Repo,
} from '../helpers/gitRepo.ts';

/** 400 steps with long item texts: `show --json` is far larger than a pipe's 64 KiB buffer. */
const PLAN = [
  '# Plan: Big output',
  '',
  ...Array.from({ length: 400 }, (_, i) =>
    [
      `## Step ${i + 1}: Step number ${i + 1} {#s${i + 1}}`,
      '**Tasks:**',
      `- [ ] ${'a task with a long description '.repeat(6)}${i}`,
      '',
    ].join('\n'),
  ),
].join('\n');

let repo: Repo;
before(() => {
  ensureCli();
  repo = makeRepo({ files: { 'plans/big.md': PLAN } });
  assertOk(runCli(repo.root, ['init', 'plans/big.md', '--json']));
});
after(() => repo.cleanup());

test('an output many times a pipe buffer arrives whole, as one JSON document', () => {
  const r = runCli(repo.root, ['show', '--json']);
  const doc = assertOk<{ plans: PlanView[] }>(r);

  assert.ok(r.stdout.length > 4 * 65_536, `output of ${r.stdout.length} bytes`);
  assert.equal(doc.plans[0]?.steps.length, 400);
});

test('a reader that stops early (show | head) ends the output quietly: exit 0, nothing on stderr', () => {
  const script = `set -o pipefail; "$0" "$1" show --json 2>"$2" | head -c 100 >/dev/null; echo "\${PIPESTATUS[0]}"`;
  const errFile = `${repo.tmp}/stderr.txt`;
  const r = spawnSync('bash', ['-c', script, process.execPath, CLI_PATH, errFile], {
    cwd: repo.root,
    env: cleanEnv(),
    encoding: 'utf8',
  });

  assert.equal(r.stdout.trim(), '0');
  assert.equal(spawnSync('cat', [errFile], { encoding: 'utf8' }).stdout, '');
});

test('a non-blocking stdout that fills up (EAGAIN) still gets the whole output before the process exits', async () => {
  // The FIFO is opened read-write and non-blocking, so the CLI inherits a descriptor that refuses
  // writes once 64 KiB wait unread; its reader starts only after a pause.
  const fifo = join(repo.tmp, 'out.fifo');
  const outFile = join(repo.tmp, 'fifo-out.json');
  execFileSync('mkfifo', [fifo]);
  const reader = spawn('bash', ['-c', 'sleep 0.5; cat "$0" > "$1"', fifo, outFile], { stdio: 'ignore' });
  const readerDone = once(reader, 'close'); // listen now: it may finish before the CLI's close is seen
  const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
  const cli = spawn(process.execPath, [CLI_PATH, 'show', '--json'], {
    cwd: repo.root,
    env: cleanEnv(),
    stdio: ['ignore', fd, 'pipe'],
  });
  closeSync(fd);
  let stderr = '';
  cli.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const [code] = (await once(cli, 'close')) as [number | null];
  await readerDone;

  assert.equal(code, 0, stderr);
  assert.equal(stderr, '');
  const doc = JSON.parse(readFileSync(outFile, 'utf8')) as { plans: PlanView[] };
  assert.equal(doc.plans[0]?.steps.length, 400);
});

test("springfield --version is package.json's version, in the built CLI and from source alike", async () => {
  const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
  for (const flag of ['--version', '-V']) {
    const r = spawnSync(process.execPath, [CLI_PATH, flag], { cwd: repo.root, env: cleanEnv(), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${version}\n`);
  }
  assert.equal((await import('../../src/cli/help.ts')).VERSION, version);
});
