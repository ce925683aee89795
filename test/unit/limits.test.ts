// Usage and rate limits as each agent CLI reports them (docs/agents.md, "Usage limits"): the real
// output of Claude Code, Codex, Gemini CLI and opencode against a model server answering 429 (test/fixtures/limits,
// captured from the CLIs at the presets' versions), and the wordings their trackers report.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { detectLimit, fallbackWaitMs, resetOf } from '../../src/core/runs/limits.ts';
import { findPreset } from '../../src/core/runs/presets.ts';
import { agentError } from '../../src/core/runs/agentErrors.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'limits');
const NOW = new Date('2026-11-28T10:00:00Z');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

/** What the supervisor hands detectLimit: the output, and the error the preset's readers find in it. */
function limitOf(preset: string, stdout: string, stderr = '') {
  const p = findPreset(preset);
  const headline = agentError(p?.errors ?? [], `${stdout}\n${stderr}`);
  return detectLimit(p?.limits ?? [], { stdout, stderr, headline }, NOW);
}

const secondsFromNow = (iso: string | null) => (iso === null ? null : (Date.parse(iso) - NOW.getTime()) / 1000);

test('Claude Code: the stream-json result of a 429 rate_limit_error, with the wait it names', () => {
  const hit = limitOf('claude', fixture('claude-429.jsonl'));
  assert.match(
    hit?.message ?? '',
    /^API Error: Request rejected \(429\) · This request would exceed your account's rate limit/,
  );
  assert.equal(secondsFromNow(hit?.resetAt ?? null), 90);
});

test("Claude Code: a subscription's limit in its own words", () => {
  const epoch = limitOf('claude', 'Claude AI usage limit reached|1762952400\n');
  assert.equal(epoch?.resetAt, new Date(1762952400 * 1000).toISOString());
  const resets = limitOf('claude', "You've hit your limit · resets 3pm\n");
  assert.ok(resets, 'a limit');
  const at = new Date(resets.resetAt ?? '');
  assert.equal(at.getHours(), 15);
  assert.ok(at.getTime() > NOW.getTime() && at.getTime() <= NOW.getTime() + 86_400_000, 'the next 3pm to come');
  const result = JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: true,
    result: 'Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).',
  });
  assert.equal(new Date(limitOf('claude', result)?.resetAt ?? '').getHours(), 17);
});

test('Codex: an API 429 after its retries, and a ChatGPT plan limit with the wait or the date it names', () => {
  const api = limitOf('codex', fixture('codex-429.jsonl'));
  assert.equal(api?.message, 'exceeded retry limit, last status: 429 Too Many Requests');
  assert.equal(api?.resetAt, null, 'no reset named: the fallback wait applies');
  const plan = JSON.stringify({
    type: 'turn.failed',
    error: {
      message:
        "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 2 days 17 hours 14 minutes.",
    },
  });
  assert.equal(secondsFromNow(limitOf('codex', plan)?.resetAt ?? null), ((2 * 24 + 17) * 60 + 14) * 60);
  const dated = JSON.stringify({
    type: 'error',
    message:
      "You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), or try again at Dec 5th, 2026 8:19 PM.",
  });
  const at = new Date(limitOf('codex', dated)?.resetAt ?? '');
  assert.deepEqual([at.getMonth(), at.getDate(), at.getHours(), at.getMinutes()], [11, 5, 20, 19]);
});

test('Gemini CLI: a quota spent, from the error it prints on stderr', () => {
  const hit = limitOf('gemini', '', fixture('gemini-429.stderr'));
  assert.match(hit?.message ?? '', /exhausted your daily quota on this model/);
  const retry = limitOf('gemini', '', 'Attempt 1 failed: RESOURCE_EXHAUSTED. Please retry in 34.5s.\n');
  assert.equal(secondsFromNow(retry?.resetAt ?? null), 34.5);
  assert.ok(limitOf('gemini', '', 'Usage limit reached for gemini-2.5-pro.\n'));
});

test('Copilot CLI: a rate limit with the hours it names, as its session error or its closing Error line', () => {
  const text =
    "Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in 15 hours 23 minutes.";
  const event = limitOf('copilot', JSON.stringify({ type: 'session.error', data: { message: text } }));
  assert.equal(secondsFromNow(event?.resetAt ?? null), (15 * 60 + 23) * 60);
  const line = limitOf(
    'copilot',
    `Error: Model call failed: {"message":"rate limit exceeded","code":"rate_limited"}\n`,
  );
  assert.ok(line);
});

test('opencode: the error event it gives up with', () => {
  const event = JSON.stringify({
    type: 'error',
    error: { name: 'APIError', data: { message: 'Too Many Requests: rate limit exceeded, retry-after: 120' } },
  });
  assert.equal(secondsFromNow(limitOf('opencode', event)?.resetAt ?? null), 120);
});

test('opencode: while it retries, its logged attempts (--print-logs) name the limit, and are no sign of life', () => {
  // Captured from opencode 1.18.33 against a server answering 429 with retry-after: 1.
  const stderr = fixture('opencode-429.stderr');
  const hit = limitOf('opencode', '', stderr);
  assert.equal(
    hit?.message,
    'Rate limit reached for gpt-4.1 in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.',
  );
  assert.equal(secondsFromNow(hit?.resetAt ?? null), 20);
  const retrying = findPreset('opencode')?.retryLines ?? [];
  assert.ok(
    stderr
      .split('\n')
      .filter(Boolean)
      .every((l) => retrying.some((r) => r.test(l))),
  );
});

test('any CLI: a 429, a rate limit or a quota in its error or its last lines of stderr, never in its work', () => {
  assert.ok(detectLimit([], { stdout: '', stderr: 'HTTP 429 Too Many Requests\n', headline: null }, NOW));
  assert.ok(detectLimit([], { stdout: '', stderr: '', headline: 'insufficient_quota: check your plan' }, NOW));
  // An agent that writes about rate limits while it works has met none.
  const work = 'I added a rate limit of 429 requests to the API handler and a quota check.\n';
  assert.equal(detectLimit([], { stdout: work, stderr: '', headline: null }, NOW), null);
  assert.equal(limitOf('claude', JSON.stringify({ type: 'result', is_error: false, result: work })), null);
  assert.equal(
    limitOf('codex', JSON.stringify({ type: 'turn.failed', error: { message: 'stream disconnected' } })),
    null,
  );
});

test('reset times: waits in every spelling; none named gives the fallback, 60 s doubling to 30 min', () => {
  const s = (text: string) => secondsFromNow(resetOf(text, NOW)?.toISOString() ?? null);
  assert.equal(s('Please try again in 90 seconds.'), 90);
  assert.equal(s('Please try again in 1m30s'), 90);
  assert.equal(s('rate limited; retry after 2 hours'), 7200);
  assert.equal(s('{"retryDelay": "41s"}'), 41);
  assert.equal(s('Retry-After: 15'), 15);
  assert.equal(resetOf('Please try again later.', NOW), null);
  assert.deepEqual([1, 2, 3, 5, 6, 7].map(fallbackWaitMs), [60_000, 120_000, 240_000, 960_000, 1_800_000, 1_800_000]);
});
