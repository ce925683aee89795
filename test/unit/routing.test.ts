// Routing by outcomes (src/core/runs/routing.ts, src/core/orchestrate/routedCommand.ts): one step per
// preset first, then the best upper bound on first-pass acceptance (Bayes-UCB; docs/stats.md, "Routing")
// with cost per merged step as the tie-breaker, a skipped preset, the reason in words; and the wiring
// over a real SQLite store with the scripted history, which records each choice in the event log.
// The rule is deterministic: the tests marked so failed on the Thompson sampling it replaced, whose
// draws kept giving a decisively worse preset work and split ties at random.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/core/clock.ts';
import { clearLimit, limitedUntil, recordLimit } from '../../src/core/limits/hostLimits.ts';
import { routedCommand } from '../../src/core/orchestrate/routedCommand.ts';
import { findPreset } from '../../src/core/runs/presets.ts';
import {
  betaQuantile,
  boundLevel,
  chooseRoute,
  type PresetStanding,
  routeLeader,
} from '../../src/core/runs/routing.ts';
import { DEFAULT_RUN_CONFIG } from '../../src/core/runs/runConfig.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { script, T0 } from '../helpers/statsHistory.ts';

const standing = (built: number, reviewed: number, accepted: number, costPerStep: number | null): PresetStanding => ({
  built,
  reviewed,
  accepted,
  costPerStep,
});
const request = (standings: Record<string, PresetStanding>, by: 'acceptance' | 'cost' = 'acceptance') => ({
  roleName: 'Ralph',
  kind: 'docs',
  presets: ['claude', 'codex'],
  by,
  standings: new Map(Object.entries(standings)),
});
/** The presets chosen over `n` choices on the same record, counted (the same record, the same choice). */
const picks = (standings: Record<string, PresetStanding>, by: 'acceptance' | 'cost' = 'acceptance', n = 200) => {
  const out: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const c = chooseRoute(request(standings, by));
    if (c) out[c.preset] = (out[c.preset] ?? 0) + 1;
  }
  return out;
};

test("a Beta quantile is exact where it has a closed form; the level rises with the kind's reviewed steps", () => {
  const close = (x: number, y: number, what: string, within = 1e-6) =>
    assert.ok(Math.abs(x - y) < within, `${what}: ${x} against ${y}`);
  close(betaQuantile(1, 1, 0.9), 0.9, 'Beta(1, 1) is uniform');
  close(betaQuantile(2, 1, 0.81), 0.9, 'Beta(2, 1): x²');
  close(betaQuantile(1, 3, 1 - 0.5 ** 3), 0.5, 'Beta(1, 3): 1 − (1 − x)³');
  close(betaQuantile(5, 5, 0.5), 0.5, 'Beta(5, 5) is symmetric');
  close(betaQuantile(400, 100, 0.5), (400 - 1 / 3) / (500 - 2 / 3), 'a long record: the median approximation', 1e-4);
  assert.equal(boundLevel(0), 0.5);
  assert.equal(boundLevel(1), 0.5, 'never below the median');
  close(boundLevel(9), 1 - 1 / (10 * Math.log(10)), '1 − 1/(n ln n), n = reviewed + 1');
  assert.ok(boundLevel(40) > boundLevel(20) && boundLevel(20) > boundLevel(9));
});

test('a preset that has built no step of the kind goes first, the first named when several have none', () => {
  const first = chooseRoute(request({}));
  assert.equal(first?.preset, 'claude', 'none built yet: the first named');
  assert.equal(first?.explored, true);
  const next = chooseRoute(request({ claude: standing(1, 1, 1, 0.4) }));
  assert.equal(next?.preset, 'codex');
  assert.match(next?.reason ?? '', /\(exploring: every preset builds a docs step first\)$/);
  const built = chooseRoute(request({ claude: standing(9, 9, 9, 0.4), codex: standing(1, 0, 0, null) }));
  assert.equal(built?.explored, false, 'codex has built one (not yet reviewed): the bounds decide from here');
});

test('the bounds decide from the first review: no preset is held to a count of reviewed steps', () => {
  // An earlier rule explored until each preset had 5 reviewed steps, so claude (2 reviewed) went every time.
  const r = picks({ claude: standing(2, 2, 0, 0.2), codex: standing(4, 4, 4, 0.5) });
  assert.deepEqual(r, { codex: 200 }, 'codex (4/4) over claude (0/2), though claude is cheaper');
  assert.equal(
    chooseRoute(request({ claude: standing(2, 2, 0, 0.2), codex: standing(4, 4, 4, 0.5) }))?.explored,
    false,
  );
});

test('a preset decisively behind gets no more work (failed on Thompson sampling: its draws still won some)', () => {
  // Code-like rates: claude 20/22 at $0.60, codex 13/20 at $0.30.
  const r = picks({ claude: standing(22, 22, 20, 0.6), codex: standing(20, 20, 13, 0.3) });
  assert.deepEqual(r, { claude: 200 });
});

test("a preset whose first step was unlucky is tried again as the kind's history grows, and dropped once it is decisively behind (failed on Thompson sampling)", () => {
  // claude failed its one step; codex goes on at 70%. Early on codex leads; by 14/20 claude's bound is above codex's.
  const unlucky = standing(1, 1, 0, 0.6);
  assert.deepEqual(picks({ claude: unlucky, codex: standing(10, 10, 7, 0.3) }), { codex: 200 });
  for (const [accepted, reviewed] of [
    [14, 20],
    [28, 40],
  ] as const) {
    const r = picks({ claude: unlucky, codex: standing(reviewed, reviewed, accepted, 0.3) });
    assert.deepEqual(r, { claude: 200 }, `claude 0/1 against codex ${accepted}/${reviewed}`);
  }
  // Tried again and failing again, it is behind for good.
  assert.deepEqual(picks({ claude: standing(6, 6, 1, 0.6), codex: standing(40, 40, 28, 0.3) }), { codex: 200 });
});

test('a tie goes to the cheaper, only when the bounds are within a point (failed on Thompson sampling: ties split at random)', () => {
  assert.deepEqual(picks({ claude: standing(20, 20, 18, 0.48), codex: standing(20, 20, 18, 0.21) }), { codex: 200 });
  assert.deepEqual(
    picks({ claude: standing(20, 20, 19, 0.6), codex: standing(20, 20, 17, 0.3) }),
    { claude: 200 },
    '19/20 against 17/20: the better, though dearer',
  );
  const tie = routeLeader(request({ claude: standing(20, 20, 18, 0.48), codex: standing(20, 20, 18, 0.21) }));
  assert.equal(tie?.preset, 'codex', 'the same record: the cheaper per merged step');
});

test('by cost weighs dollars: the bound per dollar', () => {
  // Claude accepts a little more often (8/10 against 7/10) at over twice the price.
  const record = { claude: standing(10, 10, 8, 0.5), codex: standing(10, 10, 7, 0.2) };
  assert.deepEqual(picks(record, 'cost'), { codex: 200 });
  assert.deepEqual(picks(record), { claude: 200 });
});

test('the reason says the choice and the record it was made on; an unavailable preset is skipped, and none left is no choice', () => {
  const r = request({ claude: standing(10, 10, 7, 0.48), codex: standing(10, 10, 9, 0.21) });
  assert.equal(
    routeLeader(r)?.reason,
    'Ralph on codex for docs steps: 9/10 first-pass, $0.21 per merged step; claude 7/10, $0.48',
  );
  const skip = chooseRoute({ ...r, unavailable: (p) => (p === 'codex' ? 'at its usage limit until 14:00' : null) });
  assert.equal(skip?.preset, 'claude');
  assert.deepEqual(skip?.skipped, [{ preset: 'codex', why: 'at its usage limit until 14:00' }]);
  assert.match(skip?.reason ?? '', /\(codex skipped: at its usage limit until 14:00\)$/);
  assert.equal(chooseRoute({ ...r, unavailable: () => 'not installed' }), null);
});

function open(t: TestContext, clock: ManualClock): Store {
  const dir = mkdtempSync(join(tmpdir(), 'sf-routing-'));
  const store = openStore({ location: join(dir, 'state.db'), ifMissing: 'create', clock });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

test('routedCommand: a routed builder gets the chosen preset argv and the choice is in the event log; an unrouted role, none', async (t) => {
  const clock = new ManualClock(T0);
  const store = open(t, clock);
  const { b } = await script(store, clock);
  const config = { ...DEFAULT_RUN_CONFIG, routes: { ralph: { presets: ['claude', 'codex'] } } };
  const context = {
    store,
    config,
    actor: { worktree: 'springfield-scheduler', agent: 'scheduler' },
    unavailable: async () => null,
    env: stateEnv(t),
    holdMs: 600_000,
  };
  // B's step-1 is code: claude has built no code step, codex one: claude explores next.
  const routed = await routedCommand(context, 'ralph', b, 'step-1');
  assert.deepEqual(routed?.command, findPreset('claude')?.roles.ralph);
  assert.equal(
    routed?.choice.reason,
    'Ralph on claude for code steps: 0/0 first-pass, no merged step yet; codex 0/1, $0.85 (exploring: every preset builds a code step first)',
  );
  const events = (await store.events({ epicId: b })).filter((e) => e.entity === 'route');
  assert.deepEqual(
    events.map((e) => [e.action, e.step_anchor, e.reason, e.data]),
    [
      [
        'choose',
        'step-1',
        routed?.choice.reason,
        { role: 'ralph', preset: 'claude', kind: 'code', by: 'acceptance', explored: true },
      ],
    ],
  );
  const skipping = await routedCommand(
    { ...context, unavailable: async (argv) => (argv[0] === 'claude' ? 'not logged in' : null) },
    'ralph',
    b,
    'step-1',
  );
  assert.equal(skipping?.choice.preset, 'codex');
  assert.equal(await routedCommand(context, 'bart', b, null), null);
  assert.equal(await routedCommand({ ...context, config: DEFAULT_RUN_CONFIG }, 'ralph', b, 'step-1'), null);
});

/** A private state folder of its own (where the host's limits are kept). */
function stateEnv(t: TestContext): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), 'sf-route-limits-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { XDG_STATE_HOME: dir, HOME: dir };
}

test('routedCommand respects a limit: passed over inside its window, after its reset one probe, the next choice passes it over while the probe is out', async (t) => {
  const clock = new ManualClock(T0);
  const store = open(t, clock);
  const { b } = await script(store, clock);
  const env = stateEnv(t);
  const config = { ...DEFAULT_RUN_CONFIG, routes: { ralph: { presets: ['claude', 'codex'] } } };
  const context = {
    store,
    config,
    actor: { worktree: 'w', agent: 'scheduler' },
    unavailable: async () => null,
    env,
    holdMs: 600_000,
  };
  const hit = (s: number) => ({ message: 'try again', resetAt: new Date(Date.now() + s * 1000).toISOString() });
  // Inside the window: claude (which exploration would pick) is passed over.
  recordLimit(env, 'claude', hit(90), 1);
  const inside = await routedCommand(context, 'ralph', b, 'step-1');
  assert.equal(inside?.choice.preset, 'codex');
  assert.match(inside?.choice.reason ?? '', /\(claude skipped: limited until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d\)$/);
  // Past the reset: the first choice is the one probe, the next ones pass claude over while it is out.
  clearLimit(env, 'claude');
  recordLimit(env, 'claude', hit(-1), 1, new Date(Date.now() - 2000));
  assert.equal(limitedUntil(env, 'claude'), null, 'the reset is past');
  const probe = await routedCommand(context, 'ralph', b, 'step-1');
  assert.equal(probe?.choice.preset, 'claude');
  for (let i = 0; i < 3; i++) {
    const next = await routedCommand(context, 'ralph', b, 'step-1');
    assert.equal(next?.choice.preset, 'codex', `choice ${i + 2} after the reset`);
    assert.match(
      next?.choice.reason ?? '',
      /\(claude skipped: claude limited: one run is trying it again after its reset\)$/,
    );
  }
  // With codex limited too, nothing is routed (the role's own command then waits: presetChoice.ts).
  recordLimit(env, 'codex', hit(90), 2);
  assert.equal(await routedCommand(context, 'ralph', b, 'step-1'), null);
});
