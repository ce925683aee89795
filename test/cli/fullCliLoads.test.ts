// docs/cli-cost.md, "The full CLI": a command of the whole CLI (dist/full/main.js and the chunks it
// imports) loads zod/mini for the run config, never the full zod, which only `springfield mcp` needs;
// and zod/mini still speaks the full zod's English.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { assertFails, ensureCli, makeRepo, PROJECT_ROOT, runCli } from '../helpers/gitRepo.ts';

const FULL = join(PROJECT_ROOT, 'dist', 'full');
/** esbuild names each source file it bundles in a comment above its code (by its real path: a linked node_modules shows as `// ../…/node_modules/…`). */
const FULL_ZOD = 'node_modules/zod/v4/classic/schemas.js';

/** `file` and every file it imports statically, transitively (`from "./…"`). */
function staticClosure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const [, path] of readFileSync(file, 'utf8').matchAll(/\bfrom\s*"(\.\/[^"]+)"/g))
    staticClosure(join(dirname(file), path ?? ''), seen);
  return seen;
}

const withFullZod = (files: Set<string>) =>
  [...files].filter((f) => readFileSync(f, 'utf8').includes(FULL_ZOD)).map((f) => f.slice(FULL.length + 1));

before(() => ensureCli());

test('a command of the whole CLI loads no chunk holding the full zod; the MCP server does', () => {
  assert.deepEqual(withFullZod(staticClosure(join(FULL, 'main.js'))), []);
  const mcp = readdirSync(join(FULL, 'chunks')).find((f) => f.startsWith('mcpServer-'));
  assert.ok(mcp, 'the MCP server is a chunk of its own');
  assert.notDeepEqual(
    withFullZod(staticClosure(join(FULL, 'chunks', mcp))),
    [],
    'the check finds the full zod where it is',
  );
});

test("a bad run config is refused in zod's English words by the built CLI", (t) => {
  const repo = makeRepo();
  t.after(() => repo.cleanup());
  mkdirSync(join(repo.root, '.springfield'), { recursive: true });
  const config = join(repo.root, '.springfield', 'config.json');
  const said = (value: unknown) => {
    writeFileSync(config, JSON.stringify(value));
    return assertFails(runCli(repo.root, ['agents', 'use', 'claude', '--json']), 2, 'invalid_config').message;
  };
  assert.equal(said({ leaseSeconds: 0 }), `${config}: leaseSeconds: Too small: expected number to be >=1`);
  assert.equal(said({ bogus: 1 }), `${config}: (top level): Unrecognized key: "bogus"`);
  assert.equal(said({ merge: 'rebase' }), `${config}: merge: Invalid option: expected one of "squash"|"pr"`);
});
