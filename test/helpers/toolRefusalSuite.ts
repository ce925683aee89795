// Refusals reached through the agents' tools name the tools' own arguments (`the step argument`),
// not the CLI's flags (`--step ANCHOR`), while the CLI keeps its flags: driven through the built
// `springfield mcp` with the MCP SDK's client, on a backend chosen by `env`. Run by
// test/cli/toolRefusals.test.ts on SQLite and test/postgres/toolRefusals.test.ts on PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { assertFails, assertOk, CLI_PATH, cleanEnv, ensureCli, makeRepo, runJson } from './gitRepo.ts';
import type { BackendEnv } from './stepAdminSuite.ts';

const plan = (title: string) => `# Plan: ${title}\n## Step 1: One {#step-1}\n**Tasks:**\n- [ ] a\n`;

export function toolRefusalSuite(backend: string, backendEnv: BackendEnv): void {
  test(`refusals through the tools name the tools' arguments, the CLI's name its flags (${backend})`, { timeout: 120_000 }, async (t) => {
    ensureCli();
    const env = { ...backendEnv(), SPRINGFIELD_AGENT: 'claude' };
    const repo = makeRepo({ files: { '.gitignore': '.springfield/\n', 'plans/a.md': plan('A'), 'plans/b.md': plan('B') } });
    t.after(() => repo.cleanup());
    assertOk(runJson(repo.root, ['init', 'plans/a.md'], env));
    assertOk(runJson(repo.root, ['init', 'plans/b.md'], env));

    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI_PATH, 'mcp'], cwd: repo.root, env: cleanEnv(env) as Record<string, string>, stderr: 'pipe' });
    const client = new Client({ name: 'springfield-test', version: '1.0.0' });
    await client.connect(transport);
    t.after(() => client.close());
    const refusal = async (name: string, args: Record<string, unknown>): Promise<string> => {
      const r = await client.callTool({ name, arguments: args });
      const text = ((r as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} is refused: ${text}`);
      assert.doesNotMatch(text, /--[a-z]/, `no CLI flag in a tool's refusal: ${text}`);
      return text;
    };
    const commit = (args: Record<string, unknown> = {}) => refusal('springfield_commit_step', { message: 'x', ...args });

    assert.match(await commit(), /^no_claimed_step: .* holds no claimed step: claim one first, or pass the step argument$/);
    assert.match(await commit({ step: 'step-1' }), /^ambiguous_step: several plans have a step 'step-1' \(plans\/a\.md, plans\/b\.md\): pass the plan argument$/);
    for (const p of ['plans/a.md', 'plans/b.md']) {
      const claimed = await client.callTool({ name: 'springfield_claim_next_step', arguments: { plan: p } });
      assert.notEqual(claimed.isError, true);
    }
    assert.match(await commit(), /^ambiguous_step: .* holds 2 steps \(plans\/a\.md step-1, plans\/b\.md step-1\): pass the step argument and the plan argument$/);
    assert.match(await commit({ step: 'step-1', plan: 'plans/a.md' }), /^incomplete: cannot complete step-1: 1 open item \(task 0 "a"\); tick them with springfield_update_items first$/);

    // The same refusals on the command line keep its flags.
    const cli = (args: string[], exit: number, code: string) => assertFails(runJson(repo.root, args, env), exit, code).message;
    assert.match(cli(['commit', '-m', 'x'], 2, 'ambiguous_step'), /: pass --step ANCHOR and --plan PATH$/);
    assert.match(cli(['complete', 'plans/a.md', 'step-1'], 1, 'incomplete'), /; finish them or pass --force <reason>$/);
  });
}
