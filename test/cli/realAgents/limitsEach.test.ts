// Each preset's limit wording with its real CLI (docs/agents.md, "Usage limits"), one run each: Codex,
// Gemini CLI, Copilot CLI and opencode against their scripted servers answering every request with that
// provider's rate-limit reply (429, its body, a retry-after). Lisa's run ends limited, not failed nor
// stalled, with the CLI's words, and the preset is limited on this host. (Claude Code: limits.test.ts.)
// opencode retries a 429 itself, up to five times, each after the retry-after it was given, printing
// nothing but its logged attempts (--print-logs): with a long retry-after its run goes silent, is ended
// by the stall watch and is classified by those attempts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CODEX,
  COPILOT,
  GEMINI,
  OPENCODE,
  REAL_AGENT_TEST_MS,
  realAgentRepo,
  type AgentCli,
} from '../../helpers/realAgents.ts';
import type { Failure } from '../../helpers/scriptedModel/server.ts';
import { testStateHome } from '../../helpers/gitRepo.ts';
import { limitOf } from '../../../src/core/limits/hostLimits.ts';

/** OpenAI's 429 (the Responses and Chat Completions APIs alike). */
const OPENAI_LIMIT = (retryAfter: number): Failure => ({
  status: 429,
  headers: { 'retry-after': String(retryAfter) },
  body: {
    error: {
      message: `Rate limit reached for gpt-4.1 in organization org-scripted on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in ${retryAfter}s.`,
      type: 'requests',
      param: null,
      code: 'rate_limit_exceeded',
    },
  },
});

/**
 * The Gemini API's spent daily quota, as the API sends it: a QuotaFailure naming the per-day quota, which
 * Gemini CLI takes as final and reports at once. (A per-minute quota it retries itself, 5 s then doubling,
 * for about a minute and a half before it gives up with the same words: the same outcome, slower.)
 */
const GEMINI_LIMIT: Failure = {
  status: 429,
  body: {
    error: {
      code: 429,
      message:
        'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 50, model: gemini-2.5-pro\nPlease retry in 34s.',
      status: 'RESOURCE_EXHAUSTED',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [
            {
              quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
              quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier',
              quotaDimensions: { location: 'global', model: 'gemini-2.5-pro' },
              quotaValue: '50',
            },
          ],
        },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '34s' },
      ],
    },
  },
};

interface RunRow {
  role: string;
  status: string;
  outcome_reason: string | null;
}

async function limitedRun(
  t: { after: (fn: () => unknown) => void },
  cli: AgentCli,
  failure: Failure,
  config: Record<string, unknown> = {},
): Promise<RunRow> {
  const r = await realAgentRepo(t, cli, { fail: () => failure, config });
  const epic = (await r.sf('epic', 'create', 'Greeting', '--json')).json<{ id: string }>().id;
  const pass = await r.sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
  assert.equal(pass.code, 0, pass.stderr);
  const runs = (await r.sf('runs', '--epic', epic, '--json')).json<{ runs: RunRow[] }>().runs;
  assert.deepEqual(
    runs.map((x) => `${x.role} ${x.status}`),
    ['lisa limited'],
    `${runs.map((x) => x.outcome_reason).join('\n')}\n${pass.stderr}`,
  );
  assert.ok(r.model.requests.length > 0, 'the CLI asked its model');
  const shown = (await r.sf('epic', 'show', epic, '--json')).json<{ status: string; retries: unknown[] }>();
  assert.deepEqual([shown.status, shown.retries], ['planned', []], 'not blocked, no failure counted');
  // Recorded for the preset on this host (a short reset may be over by now: the record stays until a run gets through),
  // in the state folder Springfield ran with: opencode's own XDG folders are the test's, so Springfield's are too.
  const state = r.env.XDG_STATE_HOME ?? testStateHome();
  assert.equal(
    limitOf({ XDG_STATE_HOME: state }, cli.preset)?.preset,
    cli.preset,
    `no ${cli.preset} limit in ${state}`,
  );
  return runs[0] as RunRow;
}

const until = (preset: string) =>
  new RegExp(` — ${preset} limited until (?:\\d{4}-\\d\\d-\\d\\d )?\\d\\d:\\d\\d on this host$`);

test('Codex meets an OpenAI rate limit: limited, in its words', { timeout: REAL_AGENT_TEST_MS }, async (t) => {
  const run = await limitedRun(t, CODEX, OPENAI_LIMIT(20));
  assert.match(run.outcome_reason ?? '', /429 Too Many Requests/);
  assert.match(run.outcome_reason ?? '', until('codex'));
});

test('Gemini CLI meets a spent quota: limited, in its words', { timeout: REAL_AGENT_TEST_MS }, async (t) => {
  const run = await limitedRun(t, GEMINI, GEMINI_LIMIT);
  assert.match(run.outcome_reason ?? '', /exhausted your daily quota/i);
  assert.match(run.outcome_reason ?? '', until('gemini'));
});

test(
  'Copilot CLI meets a rate limit of its model: limited, in its words',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    const run = await limitedRun(t, COPILOT, OPENAI_LIMIT(2));
    assert.match(run.outcome_reason ?? '', /429|rate limit/i);
    assert.match(run.outcome_reason ?? '', until('copilot'));
  },
);

test(
  'opencode retrying a long limit in silence: ended by the stall watch, limited (not stalled) by its logged attempts',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    // The stall watch starts with the run, so it must outlast opencode's start before its first
    // attempt: 30 s did not at load 13 (all three runs stalled with nothing logged).
    const run = await limitedRun(t, OPENCODE, OPENAI_LIMIT(600), { stallSeconds: 90 });
    assert.match(
      run.outcome_reason ?? '',
      /^(?:Failed after \d+ attempts\. Last error: )?Rate limit reached for gpt-4\.1 .*Please try again in 600s\. — opencode limited until/,
    );
  },
);
