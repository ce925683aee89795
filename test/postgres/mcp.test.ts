// `springfield mcp` on PostgreSQL: the tools open the shared server with this repository's id and this
// host (they opened the SQLite file named by the URL before), so an agent's claim through MCP is the
// same claim every clone sees, and another host's agent cannot update it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { assertOk, CLI_PATH, cleanEnv, ensureCli, makeRepo, runJson } from '../helpers/gitRepo.ts';
import { postgresForFile } from '../helpers/postgres.ts';

const PLAN = '# Plan: Shared\n## Step 1: One\n**Tasks:**\n- [ ] a\n## Step 2: Two\n**Tasks:**\n- [ ] b\n';
const pgServer = postgresForFile({ durability: 'fast' });

function text(r: unknown): string {
  return ((r as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

async function mcpClient(
  t: { after(fn: () => Promise<void>): void },
  cwd: string,
  env: Record<string, string>,
): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_PATH, 'mcp'],
    cwd,
    env: cleanEnv(env) as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'springfield-test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

test('the MCP tools claim and update on the shared PostgreSQL store, as this host', { timeout: 120_000 }, async (t) => {
  ensureCli();
  const url = pgServer.server.createDatabase('mcp_tools');
  const repo = makeRepo({ files: { '.gitignore': '.springfield/\n', 'plans/p.md': PLAN } });
  t.after(() => repo.cleanup());
  const hostA = { SPRINGFIELD_DATABASE_URL: url, SPRINGFIELD_HOST: 'host-a', SPRINGFIELD_AGENT: 'claude' };
  assertOk(runJson(repo.root, ['init', 'plans/p.md'], hostA));

  const a = await mcpClient(t, repo.root, hostA);
  const claimed = await a.callTool({ name: 'springfield_claim_next_step', arguments: { plan: 'plans/p.md' } });
  assert.notEqual(claimed.isError, true, text(claimed));
  assert.match(text(claimed), /step-1/);
  const shown = assertOk<{ plans: { steps: { anchor: string; status: string; agent: string | null }[] }[] }>(
    runJson(repo.root, ['show', 'plans/p.md'], hostA),
  );
  assert.deepEqual(
    shown.plans[0]?.steps.map((s) => [s.anchor, s.status, s.agent]),
    [
      ['step-1', 'claimed', 'claude'],
      ['step-2', 'pending', null],
    ],
    'the claim is on the server',
  );
  assert.equal(existsSync(join(repo.root, '.springfield', 'state.db')), false, 'no SQLite file was made');

  const b = await mcpClient(t, repo.root, { ...hostA, SPRINGFIELD_HOST: 'host-b' });
  const refused = await b.callTool({
    name: 'springfield_update_items',
    arguments: { plan: 'plans/p.md', step: 'step-1', all: 'completed' },
  });
  assert.equal(refused.isError, true, 'the same worktree path on another host does not hold the step');
  assert.match(text(refused), /held by|not_holder|holder/i);
  const updated = await a.callTool({
    name: 'springfield_update_items',
    arguments: { plan: 'plans/p.md', step: 'step-1', all: 'completed' },
  });
  assert.notEqual(updated.isError, true, text(updated));
});
