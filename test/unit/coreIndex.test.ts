// src/core/index.ts exports, by name, exactly what src/cli, src/extension, scripts, bench and test
// import from it (docs/architecture.md): a name nothing imports any more is dropped from it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');
const INDEX = join(ROOT, 'src', 'core', 'index.ts');
const NAMED = /\b(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'([^']+)'/g;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'fixtures' ? [] : files(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The names a list of import or export specifiers brings in (`a as b` brings in `a`). */
function names(list: string): string[] {
  return list
    .split(',')
    .map(
      (s) =>
        s
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)[0] ?? '',
    )
    .filter((s) => s !== '');
}

test('core/index.ts exports exactly the names imported from it outside src/core', () => {
  const exported = [...readFileSync(INDEX, 'utf8').matchAll(NAMED)].flatMap((m) => names(m[1] ?? '')).sort();
  assert.equal(new Set(exported).size, exported.length, 'a name exported twice');
  const outside = ['src/cli', 'src/extension', 'scripts', 'bench', 'test'].flatMap((d) => files(join(ROOT, d)));
  const imported = new Set(
    outside.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(NAMED)]
        .filter((m) => resolve(dirname(file), m[2] ?? '') === INDEX)
        .flatMap((m) => names(m[1] ?? '')),
    ),
  );
  assert.ok(imported.size > 100);
  assert.deepEqual(
    exported.filter((n) => !imported.has(n)),
    [],
    'exported from core/index.ts, imported by nothing outside core',
  );
});
