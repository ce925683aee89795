// Workspace settings cannot turn the scheduler on or say what it runs: runs
// test/integration/suite/trust.suite.ts inside a real extension host (code-server) on a repository
// whose .vscode/settings.json tries both.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { CLI, sf } from '../../scripts/demoRepo.ts';
import { cleanEnv, ensureCodeServer } from '../../scripts/codeServer.ts';
import { runExtensionSuite } from './harness.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PLAN = '# Plan: Quiet\n\n## Step 1: Nothing to see {#step-1}\n**Tasks:**\n- [ ] Wait\n';

describe('workspace settings cannot switch the scheduler on (real VS Code via code-server)', () => {
  let base: string;
  let suitePath: string;
  let repo: string;
  let state: string;

  before(
    async () => {
      assert.ok(existsSync(join(root, 'dist', 'extension.cjs')) && existsSync(CLI), 'build first: node esbuild.mjs');
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-trust-')));
      repo = join(base, 'repo');
      state = join(base, 'state');
      const marker = join(base, 'marker');
      const evilLocation = join(base, 'evil-worktrees');
      const leave = (name: string) => [
        process.execPath,
        '-e',
        `require('fs').appendFileSync(${JSON.stringify(marker)}, '${name}\\n')`,
      ];
      mkdirSync(join(repo, 'plans'), { recursive: true });
      mkdirSync(join(repo, '.vscode'));
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
      const fixture = { node: realpathSync(process.execPath), cli: CLI, root: repo, epic, marker, evilLocation };
      suitePath = join(base, 'trust.suite.cjs');
      await build({
        entryPoints: [join(root, 'test', 'integration', 'suite', 'trust.suite.ts')],
        outfile: suitePath,
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        external: ['vscode'],
        define: { SUITE_FIXTURE: JSON.stringify(JSON.stringify(fixture)) },
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
    'autoOrchestrate, roles, verification and the worktree folder from .vscode/settings.json are ignored',
    { timeout: 600_000 },
    async () => {
      const result = await runExtensionSuite({
        extensionPath: root,
        suitePath,
        workspace: repo,
        env: { XDG_STATE_HOME: state },
      });
      const lines = result.logs.filter((l) => l.includes('springfield-trust'));
      if (result.code !== 0)
        process.stderr.write(
          `extension host logs:\n${result.logs.filter((l) => !l.startsWith('[workbench.trace]')).join('\n')}\n`,
        );
      assert.equal(result.code, 0, 'the suite passed inside the extension host (logs above)');
      assert.ok(
        lines.some((l) => l.includes('springfield-trust finished')),
        `the suite ran to its end:\n${lines.join('\n')}`,
      );
      process.stderr.write(`${lines.join('\n')}\n`);
    },
  );
});
