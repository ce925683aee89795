import { execFileSync, spawn } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlanError } from '../../src/core/errors.ts';
import { planFileSource, readSettled, SETTLED_MS, statKey } from '../../src/core/plan/source.ts';

// docs/cli-cost.md, "Unchanged plan files": what a step command knows of its plan file before the store
// is asked, and when the file's stat may vouch for its bytes.

const PLAN = '# Plan: P\n\n## Step 1: One {#one}\n**Tasks:**\n- [ ] Do it\n';

function tempFile(t: { after(fn: () => void): void }, text = PLAN): string {
  const dir = mkdtempSync(join(tmpdir(), 'springfield-source-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'plan.md');
  writeFileSync(file, text);
  return file;
}

test('a missing plan or a folder is refused when the source is made, before any store is asked', (t) => {
  const file = tempFile(t);
  assert.throws(
    () => planFileSource(`${file}.missing`, 'plans/p.md', 'plans/p.md'),
    (err: unknown) => err instanceof PlanError && err.message.includes('plans/p.md: cannot read plan: no such file'),
  );
  const dir = join(file, '..', 'folder.md');
  mkdirSync(dir);
  assert.throws(
    () => planFileSource(dir, 'folder.md', 'folder.md'),
    (err: unknown) => err instanceof PlanError && err.message.includes('is a directory'),
  );
});

test('a regular file is stat-ed at once and read only when asked: readIfChanged reads nothing under the recorded stat', (t) => {
  const file = tempFile(t);
  const source = planFileSource(file, 'plans/p.md', 'plans/p.md');
  const stat = statKey(statSync(file, { bigint: true }));
  assert.equal(source.file?.path, file);
  assert.equal(source.file?.stat, stat);
  unlinkSync(file);
  assert.equal(source.file?.readIfChanged(stat), undefined, 'the recorded stat: nothing read');
  // Had the bytes been read already, these would return them.
  for (const read of [() => source.file?.readIfChanged('another stat'), () => source.bytes(), () => source.plan()])
    assert.throws(
      read,
      (err: unknown) => err instanceof PlanError && err.message.includes('cannot read plan: no such file'),
    );
});

test('the bytes are read once and parsed once, whichever is asked first', (t) => {
  const file = tempFile(t);
  const source = planFileSource(file, 'plans/p.md', 'plans/p.md');
  const plan = source.plan();
  writeFileSync(file, PLAN.replace('One', 'Uno'));
  assert.equal(plan.steps[0]?.title, 'One');
  assert.equal(source.plan(), plan);
  assert.deepEqual(source.bytes(), Buffer.from(PLAN));
  assert.deepEqual(source.file?.readIfChanged(undefined), { settledStat: undefined }, 'written just now: not settled');
  assert.deepEqual(source.bytes(), Buffer.from(PLAN), 'readIfChanged after a read reads nothing new');
  const proposed = { ...source, body: PLAN };
  assert.equal(proposed.plan(), plan, 'a copy made by spreading (a proposal) keeps the reads');
});

test('a file that is not a regular one is read when the source is made, and has no stat', (t) => {
  const file = tempFile(t);
  const fifo = join(file, '..', 'fifo.md');
  execFileSync('mkfifo', [fifo]);
  const writer = spawn('sh', ['-c', `printf '%s' "$0" > "$1"`, PLAN, fifo]);
  t.after(() => writer.kill());
  const source = planFileSource(fifo, 'plans/p.md', 'plans/p.md');
  assert.equal(source.file, undefined);
  assert.deepEqual(source.bytes(), Buffer.from(PLAN));
  assert.equal(source.plan().steps[0]?.anchor, 'one');
});

test('the stat vouches for the bytes only when the file was left alone SETTLED_MS before the read began', (t) => {
  const file = tempFile(t);
  const fresh = readSettled(file, 'p.md');
  assert.deepEqual(fresh.bytes, readFileSync(file));
  assert.equal(fresh.settled, undefined, 'written just now: a write in the same tick could follow unseen');

  const later = readSettled(file, 'p.md', Date.now() + SETTLED_MS + 1000);
  assert.equal(later.settled, statKey(statSync(file, { bigint: true })));

  // One second short of settled (the change time is now): not vouched.
  const almost = readSettled(file, 'p.md', Date.now() + SETTLED_MS - 1000);
  assert.equal(almost.settled, undefined);
});

test('the stat key changes when a same-size edit puts the modification time back: the change time moves', (t) => {
  const file = tempFile(t);
  utimesSync(file, 1_700_000_000, 1_700_000_000);
  const before = statSync(file, { bigint: true });
  writeFileSync(file, PLAN.replace('One', 'Uno'));
  utimesSync(file, 1_700_000_000, 1_700_000_000);
  const after = statSync(file, { bigint: true });
  assert.deepEqual(
    [after.dev, after.ino, after.size, after.mtimeNs],
    [before.dev, before.ino, before.size, before.mtimeNs],
    'device, inode, size and modification time are all kept',
  );
  assert.notEqual(after.ctimeNs, before.ctimeNs);
  assert.notEqual(statKey(after), statKey(before));
});
