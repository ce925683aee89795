// The README's pictures come from the real-editor tests (scripts/screenshots.ts): each is a PNG in
// media/, linked from the README, and named by a screenshot its test really takes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { PICTURES } from '../../scripts/screenshots.ts';

const root = join(import.meta.dirname, '..', '..');

test('every picture the README shows is one a real-editor test takes, and every such picture is shown', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const shown = [...readme.matchAll(/\]\(media\/(screenshot-[\w-]+\.png)\)/g)].map((m) => m[1]);
  assert.deepEqual([...shown].sort(), PICTURES.map((p) => p.file).sort());
  for (const p of PICTURES) {
    const png = readFileSync(join(root, 'media', p.file));
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG', `${p.file} is a PNG`);
    assert.ok(png.readUInt32BE(16) >= 1000 && png.readUInt32BE(20) >= 600, `${p.file} is a whole editor window`);
    const source = readFileSync(join(root, p.test), 'utf8');
    const name = p.from.replace(/\.png$/, '');
    assert.ok(source.includes(`'${name}'`), `${p.test} takes the screenshot ${name}`);
  }
});
