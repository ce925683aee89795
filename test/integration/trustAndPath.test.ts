// What the editor does to the person's machine, in one extension host (code-server): runs
// test/integration/suite/trustAndPath.suite.ts, which runs two suites in turn.
// - Workspace settings cannot turn the scheduler on or say what it runs (suite/trust.suite.ts), on a
//   repository whose .vscode/settings.json tries both.
// - "Install 'springfield' command in PATH" (suite/cliOnPath.suite.ts), with a fresh HOME whose
//   ~/.profile puts ~/.local/bin on PATH (VS Code gives extensions the login shell's environment).
// One session for both: an editor session costs more than either suite (docs/development.md).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, sf } from '../../scripts/demoRepo.ts';
import { cleanEnv, ensureCodeServer } from '../../scripts/codeServer.ts';
import { bundleSuite, runExtensionSuite, type SuiteResult } from './harness.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PLAN = '# Plan: Quiet\n\n## Step 1: Nothing to see {#step-1}\n**Tasks:**\n- [ ] Wait\n';

describe('workspace settings and the command on PATH (real VS Code via code-server)', () => {
  let base: string;
  let result: SuiteResult;

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-trust-path-')));
      const repo = join(base, 'repo');
      const state = join(base, 'state');
      const home = join(base, 'home');
      const marker = join(base, 'marker');
      const evilLocation = join(base, 'evil-worktrees');
      const leave = (name: string) => [
        process.execPath,
        '-e',
        `require('fs').appendFileSync(${JSON.stringify(marker)}, '${name}\\n')`,
      ];
      mkdirSync(join(repo, 'plans'), { recursive: true });
      mkdirSync(join(repo, '.vscode'));
      mkdirSync(home);
      writeFileSync(join(home, '.profile'), `export PATH="$HOME/.local/bin:${process.env.PATH ?? '/usr/bin:/bin'}"\n`);
      writeFileSync(join(repo, 'plans', 'quiet.md'), PLAN);
      writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
      writeFileSync(
        join(repo, '.vscode', 'settings.json'),
        JSON.stringify(
          {
            'springfield.autoOrchestrate': true,
            'springfield.roles': {
              lisa: leave('lisa'),
              ralph: leave('ralph'),
              bart: leave('bart'),
              lovejoy: leave('lovejoy'),
            },
            'springfield.verification.commands': [leave('verify')],
            'springfield.worktrees.location': evilLocation,
          },
          null,
          2,
        ),
      );
      const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, stdio: 'ignore', env: cleanEnv() });
      git('init', '-q', '-b', 'main');
      git('config', 'user.email', 'marge@example.com');
      git('config', 'user.name', 'Marge');
      git('add', '-A');
      git('commit', '-qm', 'a quiet plan and loud workspace settings');
      const env = { SPRINGFIELD_AGENT: '', XDG_STATE_HOME: state };
      const epic = String(sf(repo, ['epic', 'create', 'Quiet'], env).id);
      sf(repo, ['plan', 'propose', epic, 'plans/quiet.md'], { ...env, SPRINGFIELD_AGENT: 'lisa' });
      sf(repo, ['plan', 'approve', epic], env);
      const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
      // The fields of both suites' fixtures: each reads its own.
      const fixture = {
        node: realpathSync(process.execPath),
        cli: CLI,
        root: repo,
        epic,
        marker,
        evilLocation,
        home,
        version,
      };
      const suitePath = await bundleSuite('trustAndPath', fixture, base);
      await ensureCodeServer();
      result = await runExtensionSuite({
        extensionPath: root,
        suitePath,
        workspace: repo,
        env: { XDG_STATE_HOME: state, HOME: home, SHELL: existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh' },
      });
      if (result.code !== 0)
        process.stderr.write(
          `extension host logs:\n${result.logs.filter((l) => !l.startsWith('[workbench.trace]')).join('\n')}\n`,
        );
    },
    { timeout: 15 * 60_000 },
  );

  after(() => {
    if (base) rmSync(base, { recursive: true, force: true });
  });

  /** Its part's lines; it fails unless the part ran to its end with no failure. */
  function part(name: string): string[] {
    const lines = result.logs.filter((l) => l.includes(name));
    assert.ok(
      !lines.some((l) => l.includes(`${name} failed`)),
      `the part failed inside the extension host:\n${lines.join('\n')}`,
    );
    assert.ok(
      lines.some((l) => l.includes(`${name} finished`)),
      `the part ran to its end:\n${lines.join('\n')}`,
    );
    process.stderr.write(`${lines.join('\n')}\n`);
    return lines;
  }

  test('autoOrchestrate, roles, verification and the worktree folder from .vscode/settings.json are ignored', () => {
    part('springfield-trust');
  });

  test('install links the command into ~/.local/bin, it runs springfield --version, uninstall removes it', () => {
    part('springfield-cli-on-path');
  });

  test('the suite passed as a whole: the extension host exited 0', () => {
    assert.equal(result.code, 0, 'the suite passed inside the extension host (logs above)');
  });
});
