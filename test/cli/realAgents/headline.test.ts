// A real agent CLI whose model refuses it (401): the run fails, and the epic's block says what the
// agent said (the headline: docs/scheduler-faults.md), not a cut JSON line or a brace.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLAUDE, CODEX, OPENCODE, REAL_AGENT_TEST_MS, realAgentRepo, type AgentCli } from '../../helpers/realAgents.ts';

const REFUSED = {
  status: 401,
  body: { type: 'error', error: { type: 'authentication_error', message: 'scripted: invalid x-api-key' } },
};

// What each says: Claude Code in its own words, Codex and opencode passing the server's message on.
const SAYS: [AgentCli, RegExp][] = [
  [CLAUDE, /Invalid API key/],
  [CODEX, /scripted: invalid x-api-key/],
  [OPENCODE, /scripted: invalid x-api-key/],
];

for (const [cli, says] of SAYS) {
  test(
    `${cli.preset}: a model that refuses the key blocks the epic with the agent's own error as its headline`,
    { timeout: REAL_AGENT_TEST_MS },
    async (t) => {
      // Claude Code retries a 401 ten times over minutes by default.
      const r = await realAgentRepo(
        t,
        { ...cli, prepare: (home, url) => ({ ...cli.prepare(home, url), CLAUDE_CODE_MAX_RETRIES: '0' }) },
        { fail: () => REFUSED, config: { retryLimit: 1 } },
      );
      const epic = (await r.sf('epic', 'create', 'Greeting', '--json')).json<{ id: string }>().id;
      const run = await r.sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
      assert.equal(run.code, 0, run.stderr);
      const shown = (await r.sf('epic', 'show', epic, '--json')).json<{ status: string; status_reason: string }>();
      assert.equal(shown.status, 'blocked', run.stderr);
      assert.match(
        shown.status_reason,
        /^agent_failed: Lisa failed once in a row \(last: run 1 failed: exit \d+ — [^;]+\)$/,
        run.stderr,
      );
      assert.match(shown.status_reason, says);
      const runs = (await r.sf('runs', '--epic', epic, '--json')).json<{ runs: { output_tail: string }[] }>().runs;
      assert.match(runs[0]?.output_tail ?? '', /"type":"/, 'the output itself stays with the run');
    },
  );
}
