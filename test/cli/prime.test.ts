// `springfield prime`: the protocol on stdout, or a marked section in AGENTS.md / CLAUDE.md that is
// created exclusively, updated in place, idempotent, and never touches text outside its markers.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { PRIME_BEGIN, PRIME_END, writePrimeSection } from '../../src/core/agents/prime.ts';
import { assertFails, assertOk, makeRepo } from '../helpers/gitRepo.ts';
import { runCli, runJson } from '../helpers/cliInProcess.ts';

test('prime prints the protocol with the commands an agent needs', async (t) => {
  const repo = makeRepo();
  t.after(() => repo.cleanup());
  const r = await runCli(repo.root, ['prime']);
  assert.equal(r.code, 0, r.stderr);
  for (const cmd of [
    'springfield context',
    'springfield claim <plan.md>',
    'springfield update <plan.md> <step> --task N completed',
    'springfield commit -m',
    'springfield plan propose <epic> <plan.md>',
    'springfield signal <epic> --type pass|',
    'claude mcp add springfield -- springfield mcp',
  ]) {
    assert.ok(r.stdout.includes(cmd), `prime mentions ${cmd}`);
  }
});

test('prime --write creates the file, then updates only its section, idempotently', async (t) => {
  const repo = makeRepo();
  t.after(() => repo.cleanup());
  const file = join(repo.root, 'AGENTS.md');
  const created = assertOk<{ action: string }>(await runJson(repo.root, ['prime', '--write', 'AGENTS.md']));
  assert.equal(created.action, 'created');
  const first = readFileSync(file, 'utf8');
  assert.ok(first.startsWith(PRIME_BEGIN) && first.trimEnd().endsWith(PRIME_END));
  assert.equal(
    assertOk<{ action: string }>(await runJson(repo.root, ['prime', '--write', 'AGENTS.md'])).action,
    'unchanged',
  );
  assert.equal(readFileSync(file, 'utf8'), first, 'running it again changes nothing');

  const mine = '# Our agents\n\nUse tabs.\n';
  const tail = '\n## Also\nKeep this line, byte for byte.  \n';
  writeFileSync(file, mine + '\n' + first.replace('springfield context', 'an old version') + tail);
  assert.equal(
    assertOk<{ action: string }>(await runJson(repo.root, ['prime', '--write', 'AGENTS.md'])).action,
    'updated',
  );
  const updated = readFileSync(file, 'utf8');
  assert.equal(updated, mine + '\n' + first + tail, 'the section is current again and the text around it is untouched');
  assert.equal(
    assertOk<{ action: string }>(await runJson(repo.root, ['prime', '--write', 'AGENTS.md'])).action,
    'unchanged',
  );

  const claude = join(repo.root, 'CLAUDE.md');
  writeFileSync(claude, '# Project notes\nNo trailing newline');
  assert.equal(
    assertOk<{ action: string }>(await runJson(repo.root, ['prime', '--write', 'CLAUDE.md'])).action,
    'added',
  );
  const added = readFileSync(claude, 'utf8');
  assert.ok(added.startsWith('# Project notes\nNo trailing newline\n\n' + PRIME_BEGIN), 'appended after a blank line');
  assert.equal(writePrimeSection(claude).action, 'unchanged');
});

test('prime --write refuses links, broken markers and files that are not markdown', async (t) => {
  const repo = makeRepo();
  t.after(() => repo.cleanup());
  const target = join(repo.tmp, 'elsewhere.md');
  symlinkSync(target, join(repo.root, 'AGENTS.md'));
  assertFails(await runJson(repo.root, ['prime', '--write', 'AGENTS.md']), 1, 'symlink_refused');
  assert.equal(existsSync(target), false, 'nothing written through the link');

  const broken = `# Mine\n${PRIME_BEGIN}\nhalf a section\n`;
  writeFileSync(join(repo.root, 'CLAUDE.md'), broken);
  assertFails(await runJson(repo.root, ['prime', '--write', 'CLAUDE.md']), 1, 'markers_broken');
  assert.equal(readFileSync(join(repo.root, 'CLAUDE.md'), 'utf8'), broken, 'left as it was');
  writeFileSync(join(repo.root, 'CLAUDE.md'), `${PRIME_END}\n${PRIME_BEGIN}\n`);
  assertFails(await runJson(repo.root, ['prime', '--write', 'CLAUDE.md']), 1, 'markers_broken');

  assertFails(await runJson(repo.root, ['prime', '--write', 'package.json']), 2, 'bad_option');
});
