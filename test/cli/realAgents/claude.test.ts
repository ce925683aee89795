// Claude Code itself (the npm CLI at the preset's version), started by Springfield's scheduler with
// the preset exactly as `springfield agents use claude` writes it, against a scripted Anthropic
// Messages server on 127.0.0.1: a whole epic, and Claude Code's own Read tool on the context file.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  agentTurns,
  assertReadableBuilderLogs,
  CLAUDE,
  REAL_AGENT_TEST_MS,
  realAgentRepo,
  runWholeEpic,
} from '../../helpers/realAgents.ts';

test(
  'Claude Code takes an epic from plan to merge; it reads its context file with its own Read tool, unprompted',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    const r = await realAgentRepo(t, CLAUDE);
    await runWholeEpic(r);
    assertReadableBuilderLogs(r, /^■ finished: \d+ turns · [\d,]+ input \/ [\d,]+ output tokens · \$\d+\.\d{4}$/m);
    const reads = agentTurns(r.model)
      .flatMap((q) => (q.body as { messages: { content: unknown }[] }).messages)
      .flatMap((m) =>
        Array.isArray(m.content)
          ? (m.content as {
              type: string;
              tool_use_id?: string;
              name?: string;
              is_error?: boolean;
              content?: unknown;
            }[])
          : [],
      );
    const readCalls = new Set(
      reads
        .filter((b) => b.type === 'tool_use' && b.name === 'Read')
        .map((b) => b.tool_use_id ?? (b as { id?: string }).id),
    );
    assert.ok(readCalls.size >= 4, 'every session read its context with Read');
    const denied = reads.filter((b) => b.type === 'tool_result' && b.is_error === true);
    assert.deepEqual(
      denied.map((b) => JSON.stringify(b.content).slice(0, 200)),
      [],
      "no tool call was refused (the context file is inside the agent's folder)",
    );
  },
);
