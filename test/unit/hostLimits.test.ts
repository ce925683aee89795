// A preset's usage limit on this host (docs/agents.md, "Usage limits"): real files in a private state
// folder, the probe after the reset won by one caller, and the scheduler's choice among a role's fallbacks.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { clearLimit, limitedUntil, limitOf, presetLimits, recordLimit } from '../../src/core/index.ts';
import { clock, giveBackProbe, limitGate, settleLimit } from '../../src/core/limits/hostLimits.ts';
import { chooseCommand } from '../../src/core/orchestrate/presetChoice.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig } from '../../src/core/runs/runConfig.ts';

const T0 = new Date('2026-11-28T10:00:00Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const HOLD = 600_000;

function stateEnv(t: { after(fn: () => void): void }): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), 'sf-limits-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { XDG_STATE_HOME: dir, HOME: dir };
}

test('a limit waits out its reset, lets one probe through after it, and the probe’s success clears it', (t) => {
  const env = stateEnv(t);
  assert.equal(limitGate(env, 'claude', process.pid, HOLD, T0).kind, 'free');
  const l = recordLimit(env, 'claude', { message: 'try again in 90 seconds', resetAt: at(90).toISOString() }, 7, T0);
  assert.equal(l.until, at(90).toISOString());
  assert.equal(statSync(join(env.XDG_STATE_HOME ?? '', 'springfield', 'limits')).mode & 0o077, 0, 'a private folder');
  assert.equal(limitedUntil(env, 'claude', at(30)), at(90).toISOString());
  assert.deepEqual(
    presetLimits(env).map((p) => p.preset),
    ['claude'],
  );
  const before = limitGate(env, 'claude', process.pid, HOLD, at(30));
  assert.equal(before.kind, 'wait');
  assert.match(before.kind === 'wait' ? before.reason : '', /^claude limited until \d\d:\d\d/);
  // Past the reset: the first caller probes, the next waits while the probe is out.
  assert.equal(limitGate(env, 'claude', process.pid, HOLD, at(91)).kind, 'probe');
  assert.equal(limitGate(env, 'claude', process.pid, HOLD, at(92)).kind, 'wait');
  // A run that started before the reset says nothing of it; the probe's success ends the limit.
  settleLimit(env, 'claude', at(10), 'succeeded');
  assert.ok(limitOf(env, 'claude'));
  settleLimit(env, 'claude', at(91), 'succeeded');
  assert.equal(limitOf(env, 'claude'), null);
  assert.deepEqual(readdirSync(join(env.XDG_STATE_HOME ?? '', 'springfield', 'limits')), []);
});

test('limits in a row without a named reset wait 60 s, then 120 s; a stopped probe only gives the probe back', (t) => {
  const env = stateEnv(t);
  const first = recordLimit(env, 'codex', { message: '429 Too Many Requests', resetAt: null }, 1, T0);
  assert.equal(first.until, at(60).toISOString());
  assert.equal(limitGate(env, 'codex', process.pid, HOLD, at(61)).kind, 'probe');
  const second = recordLimit(env, 'codex', { message: '429 Too Many Requests', resetAt: null }, 2, at(62));
  assert.deepEqual([second.consecutive, second.until], [2, at(62 + 120).toISOString()]);
  // The same limit met by a run that started before it was recorded is not another in a row.
  const same = recordLimit(env, 'codex', { message: '429', resetAt: null }, 3, at(63));
  assert.equal(same.consecutive, 2);
  assert.equal(limitGate(env, 'codex', process.pid, HOLD, at(200)).kind, 'probe');
  settleLimit(env, 'codex', at(200), 'stopped');
  assert.ok(limitOf(env, 'codex'), 'still limited: a stopped run learned nothing');
  assert.equal(limitGate(env, 'codex', process.pid, HOLD, at(201)).kind, 'probe', 'the probe was given back');
  // A probe whose process is gone, or whose hold ran out, is taken over.
  assert.equal(limitGate(env, 'codex', process.pid, HOLD, at(201 + HOLD / 1000 + 1)).kind, 'probe');
  clearLimit(env, 'codex');
  assert.equal(limitOf(env, 'codex'), null);
});

test('the scheduler runs a role on its next preset while the first is limited, and waits when all are', async (t) => {
  const env = stateEnv(t);
  const claude = ['claude', '-p', 'x'];
  const opencode = ['opencode', 'run', 'x'];
  const config: RunConfig = { ...DEFAULT_RUN_CONFIG, roles: { ralph: claude }, fallbacks: { ralph: [opencode] } };
  const runs = async (now: Date) => chooseCommand(config, 'ralph', env, async () => null, HOLD, now);
  assert.deepEqual(await runs(T0), { kind: 'run', command: claude, instead: null, probe: null });
  recordLimit(env, 'claude', { message: 'limit', resetAt: at(300).toISOString() }, 1, T0);
  const fallback = await runs(at(1));
  assert.equal(fallback?.kind === 'run' && fallback.command, opencode);
  assert.match(fallback?.kind === 'run' ? (fallback.instead ?? '') : '', /^claude limited until/);
  recordLimit(env, 'opencode', { message: 'limit', resetAt: at(120).toISOString() }, 2, T0);
  const wait = await runs(at(2));
  assert.equal(wait?.kind, 'wait');
  assert.equal(wait?.kind === 'wait' && wait.until, at(120).toISOString(), 'the nearest reset');
  assert.match(wait?.kind === 'wait' ? wait.reason : '', /^waiting: claude limited until .+; opencode limited until/);
  // Once the first resets, new runs go back to it, the first as its probe.
  assert.deepEqual(await runs(at(301)), {
    kind: 'run',
    command: claude,
    instead: null,
    probe: { key: 'claude', at: at(301).toISOString() },
  });
  // A first preset that cannot run is passed over for one that can.
  const missing = await chooseCommand(
    config,
    'ralph',
    {},
    async (c) => (c[0] === 'claude' ? 'not installed' : null),
    HOLD,
    T0,
  );
  assert.equal(missing?.kind === 'run' && missing.command, opencode);
});

test('a probe no run settled is given back by its taker only: the next start may probe; another taker’s stays out', (t) => {
  const env = stateEnv(t);
  recordLimit(env, 'claude', { message: 'limit', resetAt: at(60).toISOString() }, 1, T0);
  const taken = limitGate(env, 'claude', process.pid, HOLD, at(61));
  assert.equal(taken.kind, 'probe');
  const takenAt = taken.kind === 'probe' ? taken.at : '';
  assert.equal(limitGate(env, 'claude', process.pid, HOLD, at(62)).kind, 'wait', 'one probe at a time');
  // Another process's give-back, or one for an earlier probe, leaves it out.
  giveBackProbe(env, 'claude', process.pid + 1, takenAt);
  giveBackProbe(env, 'claude', process.pid, at(1).toISOString());
  assert.equal(limitGate(env, 'claude', process.pid, HOLD, at(63)).kind, 'wait');
  // Its taker's give-back (the scheduler started no run with it): the next start probes, and the limit stays.
  giveBackProbe(env, 'claude', process.pid, takenAt);
  assert.equal(limitGate(env, 'claude', process.pid, HOLD, at(64)).kind, 'probe');
  assert.ok(limitOf(env, 'claude'), 'still limited: nothing got through');
});

test('a reset is said as HH:MM on the same day, with its date before it on another (local time)', () => {
  const now = new Date(2026, 10, 28, 23, 0);
  assert.equal(clock(new Date(2026, 10, 28, 23, 50).toISOString(), now), '23:50');
  assert.equal(clock(new Date(2026, 10, 29, 0, 20).toISOString(), now), '2026-11-29 00:20');
  assert.equal(clock(new Date(2026, 10, 27, 9, 5).toISOString(), now), '2026-11-27 09:05');
});
