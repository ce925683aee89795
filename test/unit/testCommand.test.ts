// Configure agents… proposes the repository's own test command as verification: found by looking at
// the files (nothing runs), and written into config.json only when the person confirms it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configuredVerification, writeRoleCommands } from '../../src/core/agents/roleConfig.ts';
import { detectTestCommand } from '../../src/core/runs/testCommand.ts';

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'sf-testcmd-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  return root;
}

test("the repository's obvious test command, by the files that say so", (t) => {
  const cases: [Record<string, string>, string[] | null, string | null][] = [
    [
      { 'package.json': JSON.stringify({ scripts: { test: 'node --test' } }) },
      ['npm', 'test'],
      "package.json's test script",
    ],
    [
      { 'package.json': JSON.stringify({ scripts: { test: 'vitest' } }), 'pnpm-lock.yaml': '' },
      ['pnpm', 'test'],
      "package.json's test script",
    ],
    [
      { 'package.json': JSON.stringify({ scripts: { test: 'jest' } }), 'yarn.lock': '' },
      ['yarn', 'test'],
      "package.json's test script",
    ],
    [
      { 'package.json': JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1' } }) },
      null,
      null,
    ],
    [
      { 'package.json': '{ not json', Makefile: 'build:\n\tcc x.c\n\ntest: build\n\t./run-tests\n' },
      ['make', 'test'],
      "the Makefile's test target",
    ],
    [{ Makefile: 'test := nothing\nall:\n\ttrue\n' }, null, null],
    [{ 'Cargo.toml': '[package]\nname = "x"\n' }, ['cargo', 'test'], 'Cargo.toml'],
    [{ 'go.mod': 'module example.com/x\n' }, ['go', 'test', './...'], 'go.mod'],
    [{ 'pyproject.toml': '[tool.pytest.ini_options]\naddopts = "-q"\n' }, ['pytest'], 'the pytest configuration'],
    [{ 'pyproject.toml': '[project]\nname = "x"\n' }, null, null],
    [{ 'README.md': '# nothing to test\n' }, null, null],
  ];
  for (const [files, argv, source] of cases) {
    const root = repo(files);
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const found = detectTestCommand(root);
    assert.deepEqual(found ? [found.argv, found.source] : null, argv ? [argv, source] : null, JSON.stringify(files));
  }
});

test('a confirmed verification is written with the roles; without one the file keeps its own', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'sf-testcmd-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, '.springfield'));
  const config = join(root, '.springfield', 'config.json');
  assert.deepEqual(configuredVerification(config), [], 'no file: none');
  writeRoleCommands(config, { ralph: ['claude', '-p'] }, {}, [['npm', 'test']]);
  assert.deepEqual(configuredVerification(config), [['npm', 'test']]);
  writeRoleCommands(config, { bart: ['claude', '-p'] });
  const written = JSON.parse(readFileSync(config, 'utf8')) as {
    roles: Record<string, string[]>;
    verification: string[][];
  };
  assert.deepEqual(written.verification, [['npm', 'test']], 'kept when not given');
  assert.deepEqual(Object.keys(written.roles), ['ralph', 'bart']);
});
