// GitHub Copilot CLI itself (the npm CLI at the preset's version), started by Springfield's scheduler
// with the preset exactly as `springfield agents use copilot` writes it, against a scripted OpenAI
// chat completions server on 127.0.0.1 (its bring-your-own-key mode, offline): a whole epic.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  agentTurns,
  assertReadableBuilderLogs,
  COPILOT,
  REAL_AGENT_TEST_MS,
  realAgentRepo,
  runWholeEpic,
} from '../../helpers/realAgents.ts';

test(
  'GitHub Copilot CLI takes an epic from plan to merge through its bash, view and create tools',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    const r = await realAgentRepo(t, COPILOT);
    await runWholeEpic(r);
    assertReadableBuilderLogs(r, /^■ finished \(exit 0\)$/m);
    const calls = agentTurns(r.model)
      .flatMap((q) => (q.body as { messages: { tool_calls?: { function: { name: string } }[] }[] }).messages)
      .flatMap((m) => m.tool_calls ?? [])
      .map((c) => c.function.name);
    assert.ok(
      calls.includes('view') && calls.includes('create') && calls.includes('bash'),
      `Copilot's own tools were used: ${[...new Set(calls)].join(', ')}`,
    );
  },
);
