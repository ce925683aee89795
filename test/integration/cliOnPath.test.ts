// "Install 'springfield' command in PATH" in a real VS Code (code-server): runs
// test/integration/suite/cliOnPath.suite.ts inside the extension host, with a fresh HOME whose
// ~/.profile puts ~/.local/bin on PATH (VS Code gives extensions the login shell's environment).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { cleanEnv, ensureCodeServer } from '../../scripts/codeServer.ts';
import { runExtensionSuite } from './harness.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('the springfield command installed on PATH from the editor (real VS Code via code-server)', () => {
  let base: string;
  let suitePath: string;
  let repo: string;
  let home: string;

  before(
    async () => {
      assert.ok(
        existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(join(root, 'dist', 'cli.cjs')),
        'build first: node esbuild.mjs',
      );
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-cli-on-path-')));
      repo = join(base, 'repo');
      home = join(base, 'home');
      mkdirSync(repo);
      mkdirSync(home);
      writeFileSync(join(home, '.profile'), `export PATH="$HOME/.local/bin:${process.env.PATH ?? '/usr/bin:/bin'}"\n`);
      execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo, env: cleanEnv() });
      const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
      suitePath = join(base, 'cliOnPath.suite.cjs');
      await build({
        entryPoints: [join(root, 'test', 'integration', 'suite', 'cliOnPath.suite.ts')],
        outfile: suitePath,
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        external: ['vscode'],
        define: { SUITE_FIXTURE: JSON.stringify(JSON.stringify({ home, version })) },
        logLevel: 'silent',
      });
      await ensureCodeServer();
    },
    { timeout: 15 * 60_000 },
  );

  after(() => {
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test(
    'install links the command into ~/.local/bin, it runs springfield --version, uninstall removes it',
    { timeout: 600_000 },
    async () => {
      const started = Date.now();
      const result = await runExtensionSuite({
        extensionPath: root,
        suitePath,
        workspace: repo,
        env: { HOME: home, SHELL: existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh' },
      });
      const lines = result.logs.filter((l) => l.includes('springfield-cli-on-path'));
      if (result.code !== 0)
        process.stderr.write(
          `extension host logs:\n${result.logs.filter((l) => !l.startsWith('[workbench.trace]')).join('\n')}\n`,
        );
      assert.equal(result.code, 0, 'the suite passed inside the extension host (logs above)');
      assert.ok(
        lines.some((l) => l.includes('springfield-cli-on-path finished')),
        `the suite ran to its end:\n${lines.join('\n')}`,
      );
      process.stderr.write(`${lines.join('\n')}\nsuite took ${Date.now() - started} ms\n`);
    },
  );
});
