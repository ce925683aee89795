// Runs test/integration/suite/agentTools.suite.ts inside a real extension host (code-server): the
// language-model tools invoked through vscode.lm.invokeTool against a temporary repository, in a
// window on the started epic's own worktree (where its steps are claimed: docs/lifecycle.md).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { realpathSync } from 'node:fs';
import { ensureCodeServer } from '../../scripts/codeServer.ts';
import { assertOk, CLI_PATH, ensureCli, makeRepo, PROJECT_ROOT, runJson, type Repo } from '../helpers/gitRepo.ts';
import { bundleSuite, runExtensionSuite } from './harness.ts';

const PLAN = 'plans/tools.md';

describe('language-model tools in the extension host (real VS Code via code-server)', () => {
  let repo: Repo;
  let suitePath: string;
  let worktree: string;

  before(
    async () => {
      ensureCli();
      repo = makeRepo({
        files: {
          '.gitignore': '.springfield/\n',
          [PLAN]:
            '# Plan: Tools\n\n## Step 1: Say hello {#step-1}\n**Tasks:**\n- [ ] Write hello.txt\n**Tests:**\n- [ ] Read it back\n',
        },
      });
      const epic = assertOk<{ id: string }>(
        runJson(repo.root, ['epic', 'create', 'Hello from the editor', '--complexity', 'standard']),
      ).id;
      assertOk(runJson(repo.root, ['plan', 'propose', epic, PLAN]));
      assertOk(runJson(repo.root, ['plan', 'approve', epic]));
      worktree = assertOk<{ worktree_path: string }>(runJson(repo.root, ['epic', 'start', epic])).worktree_path;
      const fixture = {
        node: realpathSync(process.execPath),
        cli: CLI_PATH,
        root: repo.root,
        worktree,
        epic,
        plan: PLAN,
      };
      suitePath = await bundleSuite('agentTools', fixture, repo.tmp);
      await ensureCodeServer();
    },
    { timeout: 15 * 60_000 },
  );

  after(() => repo?.cleanup());

  test(
    'context, claim, update, commit and signal through vscode.lm.invokeTool change the store',
    { timeout: 600_000 },
    async () => {
      const result = await runExtensionSuite({
        extensionPath: PROJECT_ROOT,
        suitePath,
        workspace: worktree,
      });
      const lines = result.logs.filter((l) => l.includes('springfield-tools'));
      if (result.code !== 0)
        process.stderr.write(
          `extension host logs:\n${result.logs.filter((l) => !l.startsWith('[workbench.trace]')).join('\n')}\n`,
        );
      assert.equal(result.code, 0, 'the suite passed inside the extension host (logs above)');
      assert.ok(
        lines.some((l) => l.includes('springfield-tools finished')),
        `the suite ran to its end:\n${lines.join('\n')}`,
      );
    },
  );
});
