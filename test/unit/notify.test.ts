// `"notify": { "command": [...] }`: a real process gets each item that enters the person's list once,
// as JSON on stdin, run without a shell; a failing command is logged, never thrown.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Notifier } from '../../src/core/orchestrate/notify.ts';

const until = async (ok: () => boolean) => {
  while (!ok()) await new Promise((r) => setTimeout(r, 20));
};

test('each item that waits for a person is told once, as JSON on stdin, with no shell', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-notify-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'told.jsonl');
  // A shell would expand $HOME and run the `; touch` — an argument vector passes both through as text.
  const script = `require('fs').appendFileSync(process.argv[1], require('fs').readFileSync(0, 'utf8'))`;
  const lines: string[] = [];
  const n = new Notifier([process.execPath, '-e', script, out, '$HOME; touch pwned'], dir, (l) => lines.push(l));
  const item = { epic_id: 'sf-1', message: "a plan version is waiting for a person's approval" };
  assert.equal(n.update([item]).length, 1);
  assert.equal(n.update([item]).length, 0, 'the same item again is not told again');
  await until(() => existsSync(out) && readFileSync(out, 'utf8').includes('\n'));
  assert.deepEqual(
    readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown),
    [{ ...item, repository: dir }],
  );
  assert.equal(existsSync(join(dir, 'pwned')), false);
  n.update([]);
  n.update([item]);
  await until(() => readFileSync(out, 'utf8').trim().split('\n').length === 2);
  assert.equal(lines.length, 0, lines.join('\n'));

  const failing = new Notifier(
    [process.execPath, '-e', 'console.error("no route to ntfy.sh"); process.exit(3)'],
    dir,
    (l) => lines.push(l),
  );
  failing.update([item]);
  await until(() => lines.length > 0);
  assert.match(lines[0] ?? '', /^notify .* for sf-1 exited 3: no route to ntfy\.sh$/);
});
