// opencode itself (the npm CLI at the preset's version), started by Springfield's scheduler with the
// preset exactly as `springfield agents use opencode` writes it, against a scripted OpenAI-compatible
// chat completions server on 127.0.0.1 (a custom provider in its config): a whole epic.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentTurns, OPENCODE, REAL_AGENT_TEST_MS, realAgentRepo, runWholeEpic } from '../../helpers/realAgents.ts';

test(
  'opencode takes an epic from plan to merge through its own bash, read and write tools',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    const r = await realAgentRepo(t, OPENCODE);
    await runWholeEpic(r);
    const calls = agentTurns(r.model)
      .flatMap((q) => (q.body as { messages: { tool_calls?: { function: { name: string } }[] }[] }).messages)
      .flatMap((m) => m.tool_calls ?? [])
      .map((c) => c.function.name);
    assert.ok(
      calls.includes('read') && calls.includes('write') && calls.includes('bash'),
      `opencode's own tools were used: ${[...new Set(calls)].join(', ')}`,
    );
  },
);
