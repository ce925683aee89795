// Codex CLI itself (the npm CLI at the preset's version), started by Springfield's scheduler with
// the preset exactly as `springfield agents use codex` writes it, against a scripted Responses API
// server on 127.0.0.1 (a custom model provider in CODEX_HOME/config.toml): a whole epic.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  agentTurns,
  assertReadableBuilderLogs,
  CODEX,
  REAL_AGENT_TEST_MS,
  realAgentRepo,
  runWholeEpic,
} from '../../helpers/realAgents.ts';

test(
  'Codex CLI takes an epic from plan to merge through its exec_command and apply_patch tools',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    const r = await realAgentRepo(t, CODEX);
    await runWholeEpic(r);
    assertReadableBuilderLogs(r, /^■ turn finished: [\d,]+ input \/ [\d,]+ output tokens$/m);
    const items = agentTurns(r.model).flatMap((q) => (q.body as { input: { type: string; name?: string }[] }).input);
    assert.ok(
      items.some((i) => i.type === 'custom_tool_call' && i.name === 'apply_patch'),
      'files were written with apply_patch',
    );
    const runs = (await r.sf('runs', '--json')).json<{ runs: { input_tokens: number | null }[] }>().runs;
    assert.ok(
      runs.every((x) => (x.input_tokens ?? 0) > 0),
      'each run recorded the tokens Codex reported',
    );
  },
);
