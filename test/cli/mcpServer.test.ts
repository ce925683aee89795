// `springfield mcp` driven by the MCP SDK's own client over stdio, in a real repository: list the
// tools, claim, update, commit, signal; bad arguments are MCP errors (prefixed once, by the client's
// SDK) and write nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { assertOk, CLI_PATH, cleanEnv, ensureCli, makeRepo, runJson, writeFiles } from '../helpers/gitRepo.ts';

ensureCli();

const PLAN = `# Plan: Greeting

## Step 1: Greeting module {#step-1}
**Tasks:**
- [ ] Add src/greeting.ts
**Tests:**
- [ ] Test it
`;

function text(r: unknown): string {
  return ((r as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

test(
  'the MCP server lists the tools and claims, updates, commits and signals through them',
  { timeout: 600_000 },
  async (t) => {
    const repo = makeRepo({ files: { '.gitignore': '.springfield/\n', 'plans/greeting.md': PLAN } });
    t.after(() => repo.cleanup());
    const epic = assertOk<{ id: string }>(
      runJson(repo.root, ['epic', 'create', 'Greeting', '--complexity', 'standard']),
    ).id;
    assertOk(runJson(repo.root, ['plan', 'propose', epic, 'plans/greeting.md']));
    assertOk(runJson(repo.root, ['plan', 'approve', epic]));
    // The agent works in the epic's own worktree, where its MCP server is started (docs/lifecycle.md).
    const wt = assertOk<{ worktree_path: string }>(runJson(repo.root, ['epic', 'start', epic])).worktree_path;

    const env = cleanEnv({ SPRINGFIELD_AGENT: 'claude' }) as Record<string, string>;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI_PATH, 'mcp'],
      cwd: wt,
      env,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'springfield-test', version: '1.0.0' });
    await client.connect(transport);
    t.after(() => client.close());

    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), [
      'springfield_claim_next_step',
      'springfield_commit_step',
      'springfield_context',
      'springfield_record_signal',
      'springfield_update_items',
    ]);
    const claimTool = tools.find((x) => x.name === 'springfield_claim_next_step');
    assert.deepEqual(claimTool?.inputSchema.required, ['plan']);
    assert.match(client.getInstructions() ?? '', /springfield context/, 'the server tells the client how to work');

    const events = () =>
      assertOk<{ events: unknown[] }>(runJson(repo.root, ['events', '--limit', '1000'])).events.length;
    const before = events();
    const bad: [string, Record<string, unknown>, RegExp][] = [
      ['springfield_claim_next_step', { plan: 42 }, /plan/],
      ['springfield_claim_next_step', { plan: 'plans/greeting.md', lease: 10 }, /unrecognized key|lease/i],
      ['springfield_update_items', { plan: 'plans/greeting.md', step: 'step-1', items: [] }, /give items or all/],
      ['springfield_update_items', { plan: 'plans/greeting.md', step: 'Step One', all: 'completed' }, /step anchor/],
      ['springfield_commit_step', { message: '   ' }, /message is empty/],
      ['springfield_record_signal', { epic, type: 'great', summary: 'x' }, /type/],
      ['springfield_record_signal', { epic: 'nope', type: 'pass', summary: 'x' }, /epic id/],
      ['springfield_no_such_tool', {}, /unknown tool/],
    ];
    for (const [name, args, message] of bad) {
      await assert.rejects(client.callTool({ name, arguments: args }), (err: unknown) => {
        assert.ok(err instanceof McpError, `${name}: an MCP error, got ${String(err)}`);
        assert.equal(err.code, -32602, `${name}: invalid params`);
        assert.match(err.message, message);
        assert.match(
          err.message,
          /^MCP error -32602: (?!MCP error)/,
          `${name}: the client adds the prefix once: ${err.message}`,
        );
        return true;
      });
    }
    assert.equal(events(), before, 'bad arguments wrote nothing');

    const refused = await client.callTool({
      name: 'springfield_commit_step',
      arguments: { message: 'nothing held yet' },
    });
    assert.equal(refused.isError, true, 'a refusal by the rules is a tool error the model can read');
    assert.match(text(refused), /no_claimed_step: .* holds no claimed step/);
    assert.equal(events(), before, 'and writes nothing');

    const claimed = await client.callTool({
      name: 'springfield_claim_next_step',
      arguments: { plan: 'plans/greeting.md' },
    });
    assert.equal(claimed.isError, undefined, text(claimed));
    assert.match(text(claimed), /Claimed step-1 \(Greeting module\)/);
    const shown = () =>
      assertOk<{
        plans: { steps: { anchor: string; status: string; agent: string | null; items: { status: string }[] }[] }[];
      }>(runJson(repo.root, ['show', 'plans/greeting.md'])).plans[0]?.steps[0];
    assert.equal(shown()?.status, 'claimed');
    assert.equal(shown()?.agent, 'claude', 'claimed as the agent of SPRINGFIELD_AGENT');

    const context = await client.callTool({ name: 'springfield_context', arguments: {} });
    assert.match(text(context), new RegExp(`## Epic ${epic}: Greeting[\\s\\S]*## Step step-1: Greeting module`));

    const updated = await client.callTool({
      name: 'springfield_update_items',
      arguments: {
        plan: 'plans/greeting.md',
        step: 'step-1',
        items: [
          { kind: 'task', index: 0, status: 'completed' },
          { kind: 'test', index: 0, status: 'completed' },
        ],
      },
    });
    assert.match(text(updated), /Updated 2 items of step-1/);
    assert.deepEqual(
      shown()?.items.map((i) => i.status),
      ['completed', 'completed'],
    );

    writeFiles(wt, { 'src/greeting.ts': 'export const greet = (name: string) => `Hello, ${name}`;\n' });
    const committed = await client.callTool({
      name: 'springfield_commit_step',
      arguments: { message: 'Add the greeting module' },
    });
    assert.equal(committed.isError, undefined, text(committed));
    assert.match(text(committed), /completed step-1 of plans\/greeting\.md; the plan is complete/);
    assert.equal(shown()?.status, 'completed');
    const log = repo.git(['log', '-1', '--format=%B'], wt);
    assert.match(log, /^Add the greeting module/);
    assert.match(log, new RegExp(`Springfield-Step: step-1[\\s\\S]*Springfield-Epic: ${epic}`));
    assert.equal(repo.git(['status', '--porcelain']), '', 'everything but the ignored database was committed');

    assertOk(runJson(repo.root, ['epic', 'finish', epic]));
    const signalled = await client.callTool({
      name: 'springfield_record_signal',
      arguments: {
        epic,
        type: 'pass',
        summary: 'Does what the plan says',
        locations: [{ file: 'src/greeting.ts', line: 1, note: 'the whole module' }],
      },
    });
    assert.match(text(signalled), /Recorded pass signal #\d+ .*: implemented → verified/);
    const signals = assertOk<{
      signals: { type: string; created_by: string; locations: { file: string; line: number; note: string }[] }[];
    }>(runJson(repo.root, ['signals', epic])).signals;
    assert.deepEqual(
      signals.map((s) => [s.type, s.locations]),
      [['pass', [{ file: 'src/greeting.ts', line: 1, end_line: null, note: 'the whole module' }]]],
    );
    assert.equal(assertOk<{ status: string }>(runJson(repo.root, ['epic', 'show', epic])).status, 'verified');
  },
);
