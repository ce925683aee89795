// The README is the front door and docs/ holds the rest: every relative link in them (README.md,
// CHANGELOG.md, docs/*.md) names a file that exists and, with a #fragment, a heading of that file
// as GitHub (and the Marketplace) make anchors of headings.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The anchors of a markdown file's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(file: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCode(readFileSync(file, 'utf8')).split('\n')) {
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

function withoutCode(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

test('every relative link of the README, the changelog and docs/ reaches a file and a heading', () => {
  const files = [
    'README.md',
    'CHANGELOG.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const broken: string[] = [];
  for (const file of files) {
    const text = withoutCode(readFileSync(join(ROOT, file), 'utf8')).replace(/`[^`\n]*`/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1] ?? '';
      if (/^[a-z]+:/i.test(target)) continue;
      const [path = '', fragment] = target.split('#');
      const resolved = path ? normalize(join(ROOT, dirname(file), path)) : join(ROOT, file);
      if (!existsSync(resolved)) broken.push(`${file}: ${target} (no ${relative(ROOT, resolved)})`);
      else if (fragment && resolved.endsWith('.md') && !anchors(resolved).has(fragment))
        broken.push(`${file}: ${target} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

test('the README opens with the quick start and stays a front door (at most 12 KB)', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  assert.ok(Buffer.byteLength(readme) <= 12 * 1024, `README.md is ${Buffer.byteLength(readme)} bytes`);
  const headings = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  assert.equal(headings[0], 'Quick start');
  assert.match(readme, /```sh\nnpm install && npm run demo .*\nnpm install && npm test .*\n```/);
});

test('docs/ stays at most 200 KB in all: each page says how the code is, not how it got there', () => {
  const sizes = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => ({ file: f, bytes: Buffer.byteLength(readFileSync(join(ROOT, 'docs', f))) }));
  const total = sizes.reduce((sum, s) => sum + s.bytes, 0);
  const limit = 200 * 1024;
  const largest = [...sizes].sort((a, b) => b.bytes - a.bytes).slice(0, 3);
  assert.ok(
    total <= limit,
    `docs/*.md is ${total} bytes, over ${limit}; the largest: ${largest.map((s) => `${s.file} ${s.bytes}`).join(', ')}`,
  );
});
