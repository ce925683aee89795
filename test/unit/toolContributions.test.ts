// package.json declares the editor's language-model tools with the same names and JSON schemas the
// shared tool module (and so the MCP server) uses: derived from the zod schemas, kept equal here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { languageModelToolContributions } from '../../src/core/agents/toolContributions.ts';
import { confirmationFor, parseInput } from '../../src/core/agents/tools.ts';
import { TOOL_META, type ToolKey } from '../../src/core/agents/toolSchemas.ts';
import { PROJECT_ROOT } from '../helpers/gitRepo.ts';

const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  contributes: {
    languageModelTools: unknown[];
    mcpServerDefinitionProviders: { id: string }[];
    commands: { command: string }[];
  };
};

test('contributes.languageModelTools is what the tool schemas say', () => {
  assert.deepEqual(
    pkg.contributes.languageModelTools,
    languageModelToolContributions(),
    'regenerate it from src/core/agents/toolContributions.ts',
  );
});

test('the MCP provider and the configure command are contributed under the ids the code registers', () => {
  const provider = readFileSync(join(PROJECT_ROOT, 'src', 'extension', 'agents', 'mcpProvider.ts'), 'utf8');
  assert.deepEqual(
    pkg.contributes.mcpServerDefinitionProviders.map((p) => p.id),
    ['springfield.mcp'],
  );
  assert.match(provider, /registerMcpServerDefinitionProvider\('springfield\.mcp'/);
  assert.ok(pkg.contributes.commands.some((c) => c.command === 'springfield.agents.configure'));
});

test('every tool that writes asks first, naming what it will do; bad input is refused before any work', () => {
  const actor = { worktree: '/repo', agent: 'vscode-agent', token: null };
  for (const key of Object.keys(TOOL_META) as ToolKey[]) {
    assert.equal(
      confirmationFor(key, {}, actor) === null,
      TOOL_META[key].readOnly,
      `${key}: a confirmation exactly when it writes`,
    );
  }
  assert.match(
    confirmationFor('commit', { message: 'Add it' }, actor)?.message ?? '',
    /Commit every change in worktree \/repo \(git add -A\) as "Add it"/,
  );
  assert.match(
    confirmationFor(
      'signal',
      { epic: 'sf-abcd', type: 'pass', summary: 'ok', locations: [{ file: 'a.ts', line: 1 }] },
      actor,
    )?.message ?? '',
    /Record a pass signal for sf-abcd \("ok", 1 location\)/,
  );
  assert.throws(
    () => parseInput('update', { plan: 'p.md', step: 'step-1' }),
    /springfield_update_items: \(input\): give items or all/,
  );
  assert.throws(() => parseInput('claim', { plan: 'p.md', lease_seconds: 5 }), /lease_seconds: Too small/);
});
