// A bare `--` ends the options of every command, so a title or a plan path starting with `-` can be
// given (`epic create -- "-x title"`, `init -- -odd.md`), through the CLI on a backend chosen by `env`:
// run by test/cli/dashDash.test.ts on SQLite and test/postgres/dashDash.test.ts on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertClaimed, assertFails, assertOk, makeRepo, runCli, type CliResult, type Repo } from './gitRepo.ts';
import type { BackendEnv } from './stepAdminSuite.ts';

const ODD = '-odd.md';
const PLAN = '# Plan: Odd\n## Step 1: One\n- [ ] a\n## Step 2: Two\n- [ ] b\n';

export function dashDashSuite(backend: string, backendEnv: BackendEnv): void {
  describe(`'--' ends the options (${backend})`, () => {
    let env: Readonly<Record<string, string>> = {};
    let repo: Repo;
    before(() => {
      env = backendEnv();
      repo = makeRepo({ files: { [ODD]: PLAN } });
    });
    after(() => repo.cleanup());
    /** The CLI with --json before the `--` (after it, --json would be an argument). */
    const json = (args: readonly string[]): CliResult => {
      const end = args.indexOf('--');
      return runCli(
        repo.root,
        end < 0 ? [...args, '--json'] : [...args.slice(0, end), '--json', ...args.slice(end)],
        env,
      );
    };

    test('an epic title starting with - after --; without -- it is an unknown option and nothing is created', () => {
      assertFails(json(['epic', 'create', '-x title']), 2, 'unknown_option');
      const created = assertOk<{ id: string; title: string }>(json(['epic', 'create', '--', '-x title']));
      assert.equal(created.title, '-x title');
      // After --, --json is a title, not the option: the output is text.
      const text = runCli(repo.root, ['epic', 'create', '--', '--json'], env);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /^Created sf-[0-9a-f]+: --json /);
      const list = assertOk<{ title: string }[] | { epics: { title: string }[] }>(json(['epic', 'list']));
      assert.deepEqual((Array.isArray(list) ? list : list.epics).map((e) => e.title).sort(), ['--json', '-x title']);
    });

    test('a plan path starting with - after --: init, claim, complete', () => {
      assertFails(json(['init', ODD]), 2, 'unknown_option');
      assertOk(json(['init', '--', ODD]));
      const claim = assertClaimed(json(['claim', '--', ODD]));
      assert.equal(claim.step_anchor, 'step-1');
      const done = assertOk<{ completed: boolean }>(json(['complete', '--force', 'done', '--', ODD, 'step-1']));
      assert.equal(done.completed, true);
      // Options after -- are arguments: one too many here, refused before anything is written.
      assertFails(json(['complete', '--', ODD, 'step-2', '--force', 'done']), 2, 'unexpected_argument');
      const ready = assertOk<{ ready_steps: string[]; completed_steps: string[] }>(json(['ready', '--', ODD]));
      assert.deepEqual([ready.ready_steps, ready.completed_steps], [['step-2'], ['step-1']]);
    });
  });
}
