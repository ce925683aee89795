// Usage limits in the editor (docs/agents.md, "Usage limits"; docs/extension.md): the status bar's
// "Claude limited until 14:05", the epic cards' "waiting: claude limited until 14:05", one Needs you
// item when nothing else can run, and Configure agents…'s fallback question. Real limit files in a
// private state folder, a real SQLite store, the scheduler's own choice among a role's presets.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { clock, recordLimit, roleLimits, type Waiting } from '../../src/core/index.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { chooseCommand } from '../../src/core/orchestrate/presetChoice.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig } from '../../src/core/runs/runConfig.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import { fallbackOptions, fallbackTitle } from '../../src/extension/model/fallbackChoice.ts';
import { needsYou, type SchedulerState } from '../../src/extension/model/needsYou.ts';
import { loadSnapshot } from '../../src/extension/model/snapshot.ts';
import { epicLimitWaits, limitStatus } from '../../src/extension/model/usageLimits.ts';
import { dashboardData } from '../../src/extension/webviews/dashboardData.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const T0 = new Date('2026-11-28T10:00:00Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const claude = ['claude', '-p', 'x'];
const opencode = ['opencode', 'run', 'x'];
const PLAN = '# Plan: Cache\n\n## Step 1: Client {#step-1}\n- [ ] Implement\n';
const me = { worktree: '/wt/me', agent: null };

function stateEnv(t: { after(fn: () => void): void }): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), 'sf-limits-ui-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { XDG_STATE_HOME: dir, HOME: dir };
}

/** Epics under way in a real store, and the snapshot the views read. */
async function storeWith(t: { after(fn: () => void): void }, titles: readonly string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'sf-limits-store-'));
  const store = sqliteStore(join(dir, 'state.db'), { clock: new ManualClock(T0.getTime()), ifMissing: 'create' });
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const ids: string[] = [];
  for (const title of titles) {
    const epic = await store.createEpic({ title, brief: '', priority: 'P2' }, me);
    const src = planSourceOf(`plans/${epic.id}.md`, parsePlan(PLAN, `plans/${epic.id}.md`));
    await store.proposePlan(epic.id, { ...src, body: PLAN }, { worktree: '/wt/lisa', agent: 'lisa' });
    await store.approvePlan(epic.id, src, me);
    await store.startEpic(epic.id, src, me);
    ids.push(epic.id);
  }
  return { store, ids, snapshot: await loadSnapshot(store, me.worktree, at(1)) };
}

/** What the orchestrator records for an epic whose role has every preset limited (orchestrator.ts, commandFor). */
async function limitWait(config: RunConfig, env: NodeJS.ProcessEnv, epicId: string, now: Date): Promise<Waiting> {
  const choice = await chooseCommand(config, 'ralph', env, async () => null, 600_000, now);
  assert.equal(choice?.kind, 'wait');
  if (choice?.kind !== 'wait') throw new Error('not waiting');
  return { epic_id: epicId, kind: 'limit', message: `${choice.reason} (Ralph)`, until: choice.until };
}

test('the status bar says which preset is limited until when; its tooltip names each role and its fallback', (t) => {
  const env = stateEnv(t);
  const config: RunConfig = {
    ...DEFAULT_RUN_CONFIG,
    roles: { lisa: claude, ralph: claude, bart: opencode },
    fallbacks: { ralph: [opencode] },
  };
  assert.equal(limitStatus(roleLimits(config, env, T0), T0), null, 'nothing limited: no item');
  recordLimit(env, 'claude', { message: 'usage limit reached', resetAt: at(300).toISOString() }, 1, T0);
  const status = limitStatus(roleLimits(config, env, at(1)), at(1));
  const until = clock(at(300).toISOString(), at(1));
  assert.equal(status?.text, `Claude limited until ${until}`);
  assert.deepEqual(status?.tooltip.split('\n'), [
    `Lisa: claude limited until ${until}; no fallback free, waits`,
    `Ralph: claude limited until ${until}; runs on opencode meanwhile`,
  ]);
  assert.equal(status?.stopped, true, 'Lisa has nothing else to run on');
  assert.equal(status?.until, at(300).toISOString());
  // A second limited preset is counted; past both resets the item goes.
  recordLimit(env, 'opencode', { message: '429', resetAt: at(600).toISOString() }, 2, T0);
  assert.equal(limitStatus(roleLimits(config, env, at(2)), at(2))?.text, `Claude limited until ${until} +1`);
  assert.equal(limitStatus(roleLimits(config, env, at(601)), at(601)), null);
});

test('an epic card waiting on a limit says so: from the scheduler here, else from the host’s limits', async (t) => {
  const env = stateEnv(t);
  const config: RunConfig = { ...DEFAULT_RUN_CONFIG, roles: { ralph: claude }, fallbacks: { ralph: [opencode] } };
  const { store, ids, snapshot } = await storeWith(t, ['Cache', 'Search']);
  const [cache, search] = ids as [string, string];
  recordLimit(env, 'claude', { message: 'limit', resetAt: at(300).toISOString() }, 1, T0);
  // A fallback is free: nothing waits.
  assert.equal(epicLimitWaits(snapshot.epics, undefined, roleLimits(config, env, at(1)), at(1)).size, 0);
  recordLimit(env, 'opencode', { message: 'limit', resetAt: at(600).toISOString() }, 2, T0);
  const until = clock(at(300).toISOString(), at(1));
  // The scheduler runs here: the epics its pass held, and only those.
  const wait = await limitWait(config, env, cache, at(1));
  const held = epicLimitWaits(snapshot.epics, [wait], roleLimits(config, env, at(1)), at(1));
  assert.deepEqual(
    [...held],
    [
      [
        cache,
        `waiting: claude limited until ${until}; opencode limited until ${clock(at(600).toISOString(), at(1))} (Ralph)`,
      ],
    ],
  );
  // It does not run here: every epic under way waits, as `epic show` says.
  const fromHost = epicLimitWaits(snapshot.epics, undefined, roleLimits(config, env, at(1)), at(1));
  assert.equal(fromHost.get(search), `waiting: claude limited until ${until} (Ralph)`);
  const data = await dashboardData(store, snapshot, null, undefined, { limitWaits: fromHost });
  assert.deepEqual(
    data.epics.map((e) => e.limitWait),
    [`waiting: claude limited until ${until} (Ralph)`, `waiting: claude limited until ${until} (Ralph)`],
  );
  const none = await dashboardData(store, snapshot, null);
  assert.deepEqual(
    none.epics.map((e) => e.limitWait),
    [null, null],
  );
});

test('Needs you shows one item for a limit that stops everything, with the reset, and none while work runs', async (t) => {
  const env = stateEnv(t);
  const config: RunConfig = { ...DEFAULT_RUN_CONFIG, roles: { ralph: claude } };
  const { ids, snapshot } = await storeWith(t, ['Cache', 'Search', 'Docs']);
  recordLimit(env, 'claude', { message: 'usage limit reached', resetAt: at(300).toISOString() }, 1, T0);
  const waiting = await Promise.all(ids.map((id) => limitWait(config, env, id, at(1))));
  const idle: SchedulerState = { running: true, busy: false, waiting, unstaffed: [] };
  const items = needsYou(snapshot, idle, at(1)).items.filter((i) => i.key.startsWith('limit'));
  const until = clock(at(300).toISOString(), at(1));
  assert.deepEqual(
    items.map((i) => [i.key, i.text, i.label, i.action.kind, i.epicId]),
    [
      [
        `limit:${at(300).toISOString()}`,
        `Nothing can run: claude limited until ${until} (Ralph). 3 epics wait for the reset; a fallback preset would carry on meanwhile.`,
        'Configure agents…',
        'configureAgents',
        null,
      ],
    ],
  );
  // Something else is under way: the limit holds only some work, nothing asks the person.
  const busy = needsYou(snapshot, { ...idle, busy: true }, at(1)).items;
  assert.equal(busy.filter((i) => i.key.startsWith('limit')).length, 0);
  // One epic held: the item is about it.
  const one = needsYou(snapshot, { ...idle, waiting: waiting.slice(0, 1) }, at(1)).items.find((i) =>
    i.key.startsWith('limit'),
  );
  assert.equal(one?.epicId, ids[0]);
  assert.match(one?.text ?? '', /“Cache” waits for the reset/);
});

test('Configure agents… offers the other presets that play the chosen roles, found ones first, and No fallback', () => {
  assert.equal(fallbackTitle('claude'), 'Fall back to… (when Claude is limited)');
  const options = fallbackOptions('claude', 'ralph', new Set(['opencode']));
  assert.deepEqual(options[0], {
    id: null,
    label: '$(circle-slash) No fallback',
    description: "the roles wait for Claude's reset",
  });
  const ids = options.map((o) => o.id);
  assert.equal(ids[1], 'opencode', 'a CLI on PATH comes first');
  assert.ok(!ids.includes('claude'), 'not the preset itself');
  assert.ok(ids.includes('codex'));
  assert.match(options[1]?.description ?? '', /on PATH$/);
  // A preset that plays none of the chosen roles is not offered; one that plays only some says which not.
  assert.ok(!fallbackOptions('claude', 'lisa', new Set()).some((o) => o.id === 'aider'));
  assert.ok(fallbackOptions('claude', 'ralph', new Set()).some((o) => o.id === 'aider'));
  const all = fallbackOptions('claude', undefined, new Set()).find((o) => o.id === 'aider');
  assert.equal(all?.description, 'aider not on PATH · not for Lisa, Bart');
});
