// Gemini CLI itself (the npm CLI at the preset's version), started by Springfield's scheduler with
// the preset exactly as `springfield agents use gemini` writes it, against a scripted Gemini API
// server on 127.0.0.1 (GOOGLE_GEMINI_BASE_URL): a whole epic, its context read with read_file.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentTurns, GEMINI, REAL_AGENT_TEST_MS, realAgentRepo, runWholeEpic } from '../../helpers/realAgents.ts';

test(
  'Gemini CLI takes an epic from plan to merge; read_file reads its context inside the workspace',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    const r = await realAgentRepo(t, GEMINI);
    await runWholeEpic(r);
    const responses = agentTurns(r.model)
      .flatMap(
        (q) =>
          (
            q.body as {
              contents: { parts?: { functionResponse?: { name: string; response: { error?: string } } }[] }[];
            }
          ).contents,
      )
      .flatMap((c) => c.parts ?? [])
      .flatMap((p) => (p.functionResponse ? [p.functionResponse] : []));
    assert.ok(
      responses.some((f) => f.name === 'read_file'),
      'read with its own read_file',
    );
    assert.deepEqual(
      responses.filter((f) => f.response.error).map((f) => f.response.error),
      [],
      'no tool call was refused',
    );
  },
);
