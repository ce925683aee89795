// The editor on PostgreSQL: a real VS Code (code-server) whose user settings name a throwaway server in
// springfield.databaseUrl shows, through LISTEN/NOTIFY, a claim made by the CLI in another clone acting
// as another host, with no file written anywhere; the password shows in no log. Runs
// test/integration/suite/postgresEditor.suite.ts inside the extension host.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, sf } from '../../scripts/demoRepo.ts';
import { cleanEnv, ensureCodeServer } from '../../scripts/codeServer.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { bundleSuite, runExtensionSuite } from './harness.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PLAN = '# Plan: Shared\n\n## Step 1: One {#step-1}\n- [ ] a\n\n## Step 2: Two {#step-2}\n- [ ] b\n';
const pg = postgresForFile({ durability: 'fast' });

describe('the editor on PostgreSQL (real VS Code via code-server)', () => {
  let base: string;
  let suitePath: string;
  let repo: string;
  let url: string;

  before(
    async () => {
      assert.ok(
        existsSync(join(root, 'dist', 'extension.cjs')) &&
          existsSync(join(root, 'dist', 'postgres.cjs')) &&
          existsSync(CLI),
        'build first: node esbuild.mjs',
      );
      base = realpathSync(mkdtempSync(join(tmpdir(), 'springfield-pgedit-')));
      repo = join(base, 'repo');
      const other = join(base, 'other-clone');
      mkdirSync(join(repo, 'plans'), { recursive: true });
      writeFileSync(join(repo, 'plans', 'p.md'), PLAN);
      writeFileSync(join(repo, '.gitignore'), '.springfield/\n');
      // A repository that tries to point the editor at another server: ignored (machine scope, user settings only).
      mkdirSync(join(repo, '.vscode'));
      writeFileSync(
        join(repo, '.vscode', 'settings.json'),
        JSON.stringify({ 'springfield.databaseUrl': 'postgres://evil@/elsewhere?host=/nonexistent-socket-dir' }),
      );
      const git = (cwd: string, ...a: string[]) => execFileSync('git', a, { cwd, stdio: 'ignore', env: cleanEnv() });
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'config', 'user.email', 'marge@example.com');
      git(repo, 'config', 'user.name', 'Marge');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-qm', 'a plan');
      git(base, 'clone', '-q', repo, other);
      url = pg.server.createDatabase('editor');
      sf(repo, ['init', 'plans/p.md'], {
        SPRINGFIELD_DATABASE_URL: url,
        SPRINGFIELD_HOST: 'host-a',
        SPRINGFIELD_AGENT: '',
      });
      const fixture = { node: realpathSync(process.execPath), cli: CLI, root: repo, other, url };
      suitePath = await bundleSuite('postgresEditor', fixture, base);
      await ensureCodeServer();
    },
    { timeout: 15 * 60_000 },
  );

  after(() => {
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test(
    'a claim made by the CLI on another host shows in the tree without any file change',
    { timeout: 600_000 },
    async () => {
      const password = /:\/\/[^:]+:([^@]+)@/.exec(url)?.[1] ?? '';
      assert.ok(password.length >= 16);
      const result = await runExtensionSuite({
        extensionPath: root,
        suitePath,
        workspace: repo,
        // A remote window (code-server is one) reads machine-scoped settings from the remote's settings.
        env: { SPRINGFIELD_HOST: 'host-a' },
        machineSettings: { 'springfield.databaseUrl': url },
      });
      const lines = result.logs.filter((l) => l.includes('springfield-pgedit'));
      if (result.code !== 0)
        process.stderr.write(
          `extension host logs:\n${result.logs.filter((l) => !l.startsWith('[workbench.trace]')).join('\n')}\n`,
        );
      assert.equal(result.code, 0, 'the suite passed inside the extension host (logs above)');
      assert.ok(
        lines.some((l) => l.includes('springfield-pgedit finished')),
        `the suite ran to its end:\n${lines.join('\n')}`,
      );
      assert.deepEqual(
        result.logs.filter((l) => l.includes(password)),
        [],
        'the password appears in no log line of the editor',
      );
      assert.equal(
        existsSync(join(repo, '.springfield', 'state.db')),
        false,
        'no SQLite file was created in the workspace',
      );
      process.stderr.write(`${lines.join('\n')}\n`);
    },
  );
});
