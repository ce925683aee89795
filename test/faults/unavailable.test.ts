// Agents that cannot run at all: not installed, not logged in, or a command that is not found once
// started (exit 127). The epic is blocked at once with agent_unavailable and the reason, with no
// session, no claim and no build iteration spent; Retry checks again (docs/scheduler-faults.md).
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { AGENT_PRESETS } from '../../src/core/runs/presets.ts';
import { AGENT_BIN, REAL_AGENT_TEST_MS } from '../helpers/realAgents.ts';
import { approve, faultRepo, violations } from './harness.ts';

function approved(f: ReturnType<typeof faultRepo>, title: string): string {
  const epic = f.epic(title);
  assert.equal(f.orchestrate().code, 0);
  approve(f, epic);
  return epic;
}

const iterationOf = (f: ReturnType<typeof faultRepo>, epic: string) =>
  (f.sf('epic', 'show', epic).json as { iteration: number }).iteration;
const runsOf = (f: ReturnType<typeof faultRepo>, epic: string) =>
  (f.sf('runs', '--epic', epic).json.runs as { role: string; status: string }[]).filter((r) => r.role === 'ralph');

test(
  'a builder whose CLI is not installed: blocked at once, nothing spent; installed and retried, it builds',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    const bin = join(process.env.TMPDIR ?? '/tmp', `sf-bin-${process.pid}-${Date.now()}`);
    t.after(() => rmSync(bin, { recursive: true, force: true }));
    const f = faultRepo(t, {}, () => ({ PATH: `${bin}:${process.env.PATH ?? ''}` }));
    const epic = approved(f, 'Not installed');
    f.config({ roles: { ...roles(f), ralph: ['springfield-test-agent'] } });
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, {
        epic,
        maxSessions: { ralph: 0 },
        status: 'blocked',
        reason:
          /^agent_unavailable: Ralph cannot run — springfield-test-agent is not installed: 'springfield-test-agent' is not on PATH$/,
      }),
      [],
      run.stderr,
    );
    assert.deepEqual(runsOf(f, epic), [], 'no session was started');
    assert.equal(iterationOf(f, epic), 1, 'the start is the only build iteration: none was spent');
    const steps = (
      f.sf('show', 'plans/not-installed.md').json.plans as { steps: { status: string }[] }[]
    )[0]?.steps.map((s) => s.status);
    assert.deepEqual(steps, ['pending', 'pending'], 'nothing was claimed');

    // The person installs it and retries: the preflight passes now and the builder runs.
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      join(bin, 'springfield-test-agent'),
      `#!/bin/sh\nexec '${process.execPath}' '${join(f.base, 'agent.cjs')}' "$@"\n`,
    );
    chmodSync(join(bin, 'springfield-test-agent'), 0o755);
    assert.equal(f.sf('epic', 'retry', epic).code, 0);
    const again = f.orchestrate();
    assert.deepEqual(violations(f, again, { epic, maxSessions: { ralph: 2 }, status: 'done' }), [], again.stderr);
  },
);

test(
  'a builder whose command exits 127 (a wrapper that cannot find its CLI): one unavailable run, blocked, no iteration',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    const f = faultRepo(t);
    const epic = approved(f, 'Exit one two seven');
    f.config({ roles: { ...roles(f), ralph: ['/bin/sh', '-c', 'springfield-no-such-cli --go'] } });
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, {
        epic,
        maxSessions: { ralph: 1 },
        status: 'blocked',
        reason:
          /^agent_unavailable: Ralph cannot run — exit 127: the agent command, or a command it starts first, was not found$/,
      }),
      [],
      run.stderr,
    );
    assert.deepEqual(
      runsOf(f, epic).map((r) => r.status),
      ['unavailable'],
      'not retried: nothing it does can change that',
    );
    assert.equal(iterationOf(f, epic), 1, 'the start is the only build iteration: none was spent');
  },
);

test(
  'the real Claude Code, not logged in: the planner is blocked before any session with the reason and what to do',
  { timeout: REAL_AGENT_TEST_MS },
  async (t) => {
    const claude = AGENT_PRESETS.find((p) => p.id === 'claude')?.roles.lisa ?? [];
    const f = faultRepo(t, {}, (base) => ({
      PATH: `${AGENT_BIN}:${process.env.PATH ?? ''}`,
      HOME: base,
      SPRINGFIELD_PREFLIGHT_TIMEOUT: '600', // however slowly a loaded machine starts Claude Code
      ANTHROPIC_API_KEY: '',
      CLAUDE_CODE_OAUTH_TOKEN: '',
      ANTHROPIC_AUTH_TOKEN: '',
    }));
    f.config({ roles: { ...roles(f), lisa: claude } });
    const epic = f.epic('Needs a login');
    const run = f.orchestrate();
    assert.deepEqual(
      violations(f, run, {
        epic,
        maxSessions: { lisa: 0 },
        status: 'blocked',
        reason:
          /^agent_unavailable: Lisa cannot run — Claude Code is not logged in — run claude once to log in, or set ANTHROPIC_API_KEY$/,
      }),
      [],
      run.stderr,
    );
    assert.deepEqual(f.sf('runs', '--epic', epic).json.runs, [], 'no session');
  },
);

/** The harness's own role commands (its scripted agent). */
function roles(f: ReturnType<typeof faultRepo>): Record<string, string[]> {
  const agent = [process.execPath, join(f.base, 'agent.cjs')];
  return { lisa: agent, ralph: agent, bart: agent };
}
