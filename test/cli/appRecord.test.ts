// An app's record (src/core/orchestrate/apps.ts) is rewritten once its commands have started (their
// process groups added). A reader in another process, as the editor's snapshot is, must never find
// it missing or half written meanwhile: such a reader saw no app, and nothing told it to look again.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { recordApp, runningApp } from '../../src/core/orchestrate/apps.ts';
import { makeRepo, PROJECT_ROOT } from '../helpers/gitRepo.ts';

const READER = `
import { runningApp } from ${JSON.stringify(join(PROJECT_ROOT, 'src/core/orchestrate/apps.ts'))};
const [worktree, stop] = process.argv.slice(1);
const { existsSync } = await import('node:fs');
let reads = 0, missed = 0;
while (!existsSync(stop)) {
  reads++;
  if (runningApp(worktree) === null) missed++;
  if (reads === 1) console.log('reading');
}
console.log(JSON.stringify({ reads, missed }));
`;

test('a rewritten app record is never missing to a reader in another process', { timeout: 120_000 }, async (t) => {
  const repo = makeRepo();
  const worktree = join(repo.root, 'wt', 'app');
  const stop = join(repo.root, 'wt', 'stop');
  t.after(() => repo.cleanup());
  execFileSync('git', ['worktree', 'add', '-q', '-b', 'app', worktree], { cwd: repo.root });
  const record = (groups: number[]) => ({
    epic_id: 'sf-0001',
    worktree,
    pid: process.pid,
    groups,
    port: null,
    url: null,
    started_at: new Date().toISOString(),
  });
  recordApp(record([]));
  assert.equal(runningApp(worktree)?.pid, process.pid);
  const reader = spawn(process.execPath, ['--input-type=module', '-e', READER, worktree, stop], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  reader.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const ended = new Promise((r) => reader.on('close', r));
  // The rewrites start once the reader reads, however long its start-up takes.
  for (const deadline = Date.now() + 60_000; !out.includes('reading') && Date.now() < deadline;)
    await new Promise((r) => setTimeout(r, 20));
  assert.ok(out.includes('reading'), 'the reader started');
  // Rewrites while the reader reads, until it has read a good many times.
  for (let i = 0; i < 3000; i++) {
    recordApp(record([i]));
    if (i % 100 === 0) await new Promise((r) => setImmediate(r));
  }
  writeFileSync(stop, '');
  await ended;
  const { reads, missed } = JSON.parse(out.trim().split('\n').at(-1) ?? '') as { reads: number; missed: number };
  assert.ok(reads > 0, 'the reader read the record');
  assert.equal(missed, 0, `the reader found no app ${missed} times in ${reads} reads`);
});
