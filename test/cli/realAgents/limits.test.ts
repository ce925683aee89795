// A usage limit is not a failure (docs/agents.md, "Usage limits"): real Claude Code against the
// scripted Anthropic server answering 429 rate_limit_error "try again in 30 minutes", told not to
// retry (CLAUDE_CODE_MAX_RETRIES=0, as when a subscription's limit is reached). The run ends limited,
// the epic is not blocked, the limit is recorded for the preset on this host, the next pass starts no
// Claude Code inside the window, and a fallback preset (real Codex CLI) carries the role through.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLAUDE, CODEX, REAL_AGENT_TEST_MS, realAgentRepo } from '../../helpers/realAgents.ts';

const LIMITED = {
  status: 429,
  body: {
    type: 'error',
    error: {
      type: 'rate_limit_error',
      message: "This request would exceed your account's rate limit. Please try again in 30 minutes.",
    },
  },
};

/** The reset as a message shows it: "14:05", or "2026-12-04 00:05" when it falls on another day than now. */
const UNTIL = /(?:\d{4}-\d\d-\d\d )?\d\d:\d\d/;

interface RunRow {
  id: number;
  role: string;
  status: string;
  command: string;
  outcome_reason: string | null;
}

test(
  'Claude Code meets a usage limit: the run is limited, not failed; nothing starts Claude Code inside the window; Codex carries Lisa through',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    const r = await realAgentRepo(
      t,
      { ...CLAUDE, prepare: (home, url) => ({ ...CLAUDE.prepare(home, url), CLAUDE_CODE_MAX_RETRIES: '0' }) },
      { fail: (q) => (q.path.startsWith('/v1/messages') ? LIMITED : null), also: [CODEX] },
    );
    const anthropicCalls = () => r.model.requests.filter((q) => q.path.startsWith('/v1/messages')).length;
    const epic = (await r.sf('epic', 'create', 'Greeting', '--json')).json<{ id: string }>().id;
    const first = await r.sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
    assert.equal(first.code, 0, first.stderr);
    const runs = async () => (await r.sf('runs', '--epic', epic, '--json')).json<{ runs: RunRow[] }>().runs;
    const [limited, ...others] = await runs();
    assert.deepEqual(others, [], first.stderr);
    assert.equal(limited?.status, 'limited', `${limited?.outcome_reason}\n${first.stderr}`);
    assert.match(
      limited?.outcome_reason ?? '',
      /try again in 30 minutes\. — claude limited until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d on this host$/,
    );
    const shown = (await r.sf('epic', 'show', epic, '--json')).json<{
      status: string;
      iteration: number;
      retries: unknown[];
      limits: { role: string; message: string; until: string }[];
    }>();
    assert.equal(shown.status, 'planned', 'not blocked');
    assert.deepEqual(shown.retries, [], 'no failure counted, no backoff');
    assert.deepEqual(
      shown.limits.map((l) => [l.role, l.message.replace(UNTIL, 'HH:MM')]),
      [
        ['lisa', 'waiting: claude limited until HH:MM'],
        ['ralph', 'waiting: claude limited until HH:MM'],
        ['bart', 'waiting: claude limited until HH:MM'],
      ],
    );
    const agents = (await r.sf('agents', '--json')).json<{ presets: { id: string; limited_until: string | null }[] }>();
    const until = Date.parse(agents.presets.find((p) => p.id === 'claude')?.limited_until ?? '');
    const left = until - Date.now();
    // A window far longer than the test, so that no step below depends on how fast the machine is.
    assert.ok(left > 20 * 60_000 && left <= 30 * 60_000, `the window the message names (${left} ms left)`);
    assert.match(
      (await r.sf('agents')).stdout,
      /claude .* · limited until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d on this host/,
    );

    // The next pass inside the window starts nothing for Claude Code and says why.
    const calls = anthropicCalls();
    const again = await r.sf('orchestrate', '--once', '--json');
    assert.equal(again.code, 0, again.stderr);
    const waiting = again.json<{ waiting: { kind: string; message: string }[] }>().waiting;
    assert.deepEqual(
      waiting.map((w) => [w.kind, w.message.replace(UNTIL, 'HH:MM')]),
      [['limit', 'waiting: claude limited until HH:MM (Lisa)']],
    );
    assert.equal((await runs()).length, 1, 'no run started inside the window');
    assert.equal(anthropicCalls(), calls);

    // With Codex as the fallback, Lisa plans on it while Claude Code is limited.
    const use = await r.sf('agents', 'use', 'claude', '--fallback', 'codex', '--json');
    assert.equal(use.code, 0, use.stderr);
    assert.equal((await r.sf('allow', '--json')).code, 0);
    const carried = await r.sf('orchestrate', '--watch', '--until-idle', '--interval', '1');
    assert.equal(carried.code, 0, carried.stderr);
    assert.match(
      carried.stderr + carried.stdout,
      /Lisa runs on codex \(claude limited until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d\)/,
    );
    const after = await runs();
    assert.deepEqual(
      after.map((x) => [x.role, x.status, JSON.parse(x.command)[0]]),
      [
        ['lisa', 'succeeded', 'codex'],
        ['lisa', 'limited', 'claude'],
      ],
      carried.stderr,
    );
    assert.equal(anthropicCalls(), calls, 'still no request to the limited account');
    const plans = (await r.sf('plan', 'show', epic, '--json')).json<{ versions: { status: string }[] }>().versions;
    assert.deepEqual(
      plans.map((v) => v.status),
      ['proposed'],
    );
  },
);
