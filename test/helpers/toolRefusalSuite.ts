// Refusals reached through the agents' tools name the tools' own arguments (`the step argument`),
// not the CLI's flags (`--step ANCHOR`), while the CLI keeps its flags: driven through the built
// `springfield mcp` with the MCP SDK's client, on a backend chosen by `env`. Run by
// test/cli/toolRefusals.test.ts on SQLite and test/postgres/toolRefusals.test.ts on PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { assertFails, assertOk, CLI_PATH, cleanEnv, ensureCli, makeRepo, runJson } from './gitRepo.ts';
import type { BackendEnv } from './stepAdminSuite.ts';

const plan = (title: string) => `# Plan: ${title}\n## Step 1: One {#step-1}\n**Tasks:**\n- [ ] a\n`;

export function toolRefusalSuite(backend: string, backendEnv: BackendEnv): void {
  // One database for both tests (each has a repository of its own, so its own repository id).
  let database: Readonly<Record<string, string>> | undefined;
  const backendOnce = (): Readonly<Record<string, string>> => (database ??= backendEnv());
  test(
    `refusals through the tools name the tools' arguments, the CLI's name its flags (${backend})`,
    { timeout: 120_000 },
    async (t) => {
      ensureCli();
      const env = { ...backendOnce(), SPRINGFIELD_AGENT: 'claude' };
      const repo = makeRepo({
        files: { '.gitignore': '.springfield/\n', 'plans/a.md': plan('A'), 'plans/b.md': plan('B') },
      });
      t.after(() => repo.cleanup());
      assertOk(runJson(repo.root, ['init', 'plans/a.md'], env));
      assertOk(runJson(repo.root, ['init', 'plans/b.md'], env));

      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI_PATH, 'mcp'],
        cwd: repo.root,
        env: cleanEnv(env) as Record<string, string>,
        stderr: 'pipe',
      });
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
      const commit = (args: Record<string, unknown> = {}) =>
        refusal('springfield_commit_step', { message: 'x', ...args });

      assert.match(
        await commit(),
        /^no_claimed_step: .* holds no claimed step: claim one first, or pass the step argument$/,
      );
      assert.match(
        await commit({ step: 'step-1' }),
        /^ambiguous_step: several plans have a step 'step-1' \(plans\/a\.md, plans\/b\.md\): pass the plan argument$/,
      );
      for (const p of ['plans/a.md', 'plans/b.md']) {
        const claimed = await client.callTool({ name: 'springfield_claim_next_step', arguments: { plan: p } });
        assert.notEqual(claimed.isError, true);
      }
      assert.match(
        await commit(),
        /^ambiguous_step: .* holds 2 steps \(plans\/a\.md step-1, plans\/b\.md step-1\): pass the step argument and the plan argument$/,
      );
      assert.match(
        await commit({ step: 'step-1', plan: 'plans/a.md' }),
        /^incomplete: cannot complete step-1: 1 open item \(task 0 "a"\); tick them with springfield_update_items first$/,
      );

      // The same refusals on the command line keep its flags.
      const cli = (args: string[], exit: number, code: string) =>
        assertFails(runJson(repo.root, args, env), exit, code).message;
      assert.match(cli(['commit', '-m', 'x'], 2, 'ambiguous_step'), /: pass --step ANCHOR and --plan PATH$/);
      assert.match(
        cli(['complete', 'plans/a.md', 'step-1'], 1, 'incomplete'),
        /; finish them or pass --force <reason>$/,
      );
    },
  );

  test(
    `a NUL byte in any text argument is an MCP error -32602 naming it, and writes nothing (${backend})`,
    { timeout: 120_000 },
    async (t) => {
      ensureCli();
      const env = { ...backendOnce(), SPRINGFIELD_AGENT: 'claude' };
      const repo = makeRepo({ files: { '.gitignore': '.springfield/\n', 'plans/a.md': plan('A') } });
      t.after(() => repo.cleanup());
      const epic = assertOk<{ id: string }>(runJson(repo.root, ['epic', 'create', 'Nul'], env)).id;
      assertOk(runJson(repo.root, ['init', 'plans/a.md'], env));
      const events = (): number =>
        assertOk<{ events: unknown[] }>(runJson(repo.root, ['events', '--limit', '1000'], env)).events.length;
      const before = events();

      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI_PATH, 'mcp'],
        cwd: repo.root,
        env: cleanEnv(env) as Record<string, string>,
        stderr: 'pipe',
      });
      const client = new Client({ name: 'springfield-test', version: '1.0.0' });
      await client.connect(transport);
      t.after(() => client.close());
      const nul = 'a\u0000b';
      const signal = {
        epic,
        type: 'implementation_failure',
        summary: 'broken',
        locations: [{ file: 'src/a.ts', line: 1, note: 'here' }],
      };
      const cases: [string, Record<string, unknown>, string][] = [
        ['springfield_claim_next_step', { plan: `plans/${nul}.md` }, 'plan'],
        ['springfield_update_items', { plan: nul, step: 'step-1', all: 'completed' }, 'plan'],
        ['springfield_commit_step', { message: `fix ${nul}` }, 'message'],
        ['springfield_commit_step', { message: 'fix', plan: nul }, 'plan'],
        ['springfield_record_signal', { ...signal, summary: nul }, 'summary'],
        ['springfield_record_signal', { ...signal, locations: [{ file: nul, line: 1 }] }, 'locations.0.file'],
        [
          'springfield_record_signal',
          { ...signal, locations: [{ file: 'src/a.ts', line: 1, note: nul }] },
          'locations.0.note',
        ],
        ['springfield_context', { step: nul }, 'step'],
        ['springfield_context', { epic: nul }, 'epic'],
      ];
      for (const [name, args, argument] of cases) {
        await assert.rejects(client.callTool({ name, arguments: args }), (err: unknown) => {
          assert.ok(err instanceof McpError, `${name} ${argument}: an MCP error, got ${String(err)}`);
          assert.equal(err.code, -32602, `${name} ${argument}: invalid params`);
          assert.match(
            err.message,
            new RegExp(`^MCP error -32602: ${name}: ${argument.replace(/\./g, '\\.')}: `),
            err.message,
          );
          assert.doesNotMatch(err.message, /ERR_INVALID_ARG|null bytes|0x00|internal error/, err.message);
          return true;
        });
      }
      assert.equal(events(), before, 'nothing was written');
    },
  );
}
