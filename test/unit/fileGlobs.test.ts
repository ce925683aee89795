// The overlap of two file-glob sets (docs/files.md, "Overlap"): `**`, `*`, `?` and literal paths,
// a pattern covering what lies below it, and the answer "overlaps" whenever some path could match both.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { globsOverlap, normalizeGlob, sharedFile } from '../../src/core/scheduler/fileGlobs.ts';

const CASES: readonly [string, string, boolean, string][] = [
  ['src/db/user.ts', 'src/db/user.ts', true, 'the same path'],
  ['src/db/user.ts', 'src/db/users.ts', false, 'two different paths'],
  ['src/db/user.ts', 'src/db/*.ts', true, '* within a folder'],
  ['src/db/sub/user.ts', 'src/db/*.ts', false, '* stops at a slash'],
  ['src/db/sub/user.ts', 'src/db/**', true, '** across folders'],
  ['src/db', 'src/db/**', true, '** matches no folder too'],
  ['src/db/user.ts', 'src/**/user.ts', true, '** in the middle, one folder'],
  ['src/user.ts', 'src/**/user.ts', true, '** in the middle, no folder'],
  ['src/a/b/c/user.ts', 'src/**/user.ts', true, '** in the middle, several folders'],
  ['src/a/b/c/user.js', 'src/**/user.ts', false, '** with a different name after it'],
  ['src/db/user.ts', 'src/db/use?.ts', true, '? one character'],
  ['src/db/usr.ts', 'src/db/use?.ts', false, '? needs a character'],
  ['src/auth', 'src/auth/login.ts', true, 'a folder covers what is below it'],
  ['src/auth/login.ts', 'src/auth', true, 'the same, either way round'],
  ['src/auth', 'src/authz/login.ts', false, 'a folder is not a prefix of a longer name'],
  ['src/*', 'src/auth/login.ts', true, 'a * that may be a folder covers below it'],
  ['src/user.ts', 'src/**/index.ts', false, 'a name with an extension is a file: nothing below it'],
  ['Makefile', '**/rules.mk', true, 'a name without an extension may be a folder'],
  ['src/*.ts', 'src/a*', true, 'two globs meet (src/a.ts)'],
  ['src/*.ts', 'src/*.js', false, 'two globs that cannot meet'],
  ['src/**/*.ts', 'lib/**', false, 'different roots'],
  ['**/*.md', 'docs/files.md', true, 'a leading **'],
  ['**', 'anything/at/all', true, '** alone'],
  ['src/*/index.ts', 'src/**/x/index.ts', true, '* against ** and a literal'],
  ['src/.env', 'src/*', true, 'dotfiles are names like any other'],
  ['./src//db/', 'src/db/user.ts', true, 'normalised: ./, doubled and trailing slashes'],
  ['src/a[b].ts', 'src/a[b].ts', true, 'brackets are literal'],
  ['src/ab.ts', 'src/a[b].ts', false, 'brackets are no character class'],
  ['SRC/a.ts', 'src/a.ts', false, 'case matters, as in git'],
];

for (const [a, b, expected, why] of CASES) {
  test(`${a} and ${b}: ${expected ? 'overlap' : 'no overlap'} (${why})`, () => {
    assert.equal(globsOverlap(a, b), expected);
    assert.equal(globsOverlap(b, a), expected, 'symmetric');
  });
}

test('sharedFile names the concrete path of an overlapping pair, or the more specific glob', () => {
  assert.equal(sharedFile(['src/db/**'], ['docs/x.md', 'src/db/user.ts']), 'src/db/user.ts');
  assert.equal(sharedFile(['src/db/user.ts'], ['src/**']), 'src/db/user.ts');
  assert.equal(sharedFile(['src/**'], ['src/db/*.ts']), 'src/db/*.ts');
  assert.equal(sharedFile(['src/a.ts', 'src/b.ts'], ['lib/**']), null);
  assert.equal(sharedFile([], ['src/**']), null);
});

test('normalizeGlob keeps the pattern and drops ./ and empty segments', () => {
  assert.equal(normalizeGlob('./src//db/'), 'src/db');
  assert.equal(normalizeGlob('src/**/x?.ts'), 'src/**/x?.ts');
});

test('long patterns stay fast: the walk is memoised, not exponential', () => {
  const a = `${'**/'.repeat(30)}x`;
  const b = `${'*a'.repeat(30)}/${'a/'.repeat(30)}y`;
  assert.equal(globsOverlap(a, b), true, 'x may sit below y, a folder');
  assert.equal(
    globsOverlap(`${'**/'.repeat(30)}x.ts`, `${'*a'.repeat(30)}/${'a/'.repeat(30)}y.ts`),
    false,
    'y.ts is a file: nothing below it',
  );
  assert.equal(globsOverlap(`src/${'*'.repeat(40)}b`, `src/${'a'.repeat(40)}c`), false);
});
