import { test } from 'node:test';
import { sqliteOf } from '../helpers/sqlite.ts';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/core/clock.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import { loadSqlite } from '../../src/core/store/sqlite/sqlite.ts';
import {
  DERIVED_BLOCKERS,
  partitionAtOnce,
  partitionByShape,
  partitionSteps,
  type StepPartition,
} from '../../src/core/store/sqlite/readiness.ts';
import { migrations } from '../../src/core/store/sqlite/migrations.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import type { Store } from '../../src/core/store/store.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { randomInt, seededRandom } from '../stress/planGen.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const P = 'plans/p.md';
const ADMIN: Actor = { worktree: '/wt/admin', agent: null };
const ACTORS: Actor[] = [
  { worktree: '/wt/a', agent: 'a' },
  { worktree: '/wt/b', agent: 'b' },
  { worktree: '/wt/c', agent: null },
];
const T0 = Date.UTC(2026, 0, 1);

/**
 * The oracle: readiness derived from the dependency graph on every call, as the store did before it
 * kept a `blockers` count. Deliberately independent of the stored column.
 */
const DERIVED_READY = `
  s.plan_path = @plan AND s.parent_anchor IS NULL
  AND (s.status = 'pending' OR (s.status IN ('claimed', 'in_progress') AND s.lease_expires_at < @now))
  AND NOT EXISTS (
    SELECT 1 FROM step_deps d JOIN steps dep ON dep.plan_path = d.plan_path AND dep.anchor = d.depends_on
    WHERE d.plan_path = s.plan_path AND d.step_anchor = s.anchor AND dep.status != 'completed'
      AND dep.anchor != s.anchor AND (dep.parent_anchor IS NULL OR dep.parent_anchor != s.anchor))
  AND NOT EXISTS (
    SELECT 1 FROM steps c JOIN step_deps d ON d.plan_path = c.plan_path AND d.step_anchor = c.anchor
    JOIN steps dep ON dep.plan_path = d.plan_path AND dep.anchor = d.depends_on
    WHERE c.plan_path = s.plan_path AND c.parent_anchor = s.anchor AND dep.status != 'completed'
      AND dep.anchor != s.anchor AND (dep.parent_anchor IS NULL OR dep.parent_anchor != s.anchor))`;

function oraclePartition(store: Store, now: string): StepPartition {
  const db = sqliteOf(store);
  const rows = db
    .prepare(
      `SELECT anchor, status, lease_expires_at FROM steps WHERE plan_path = ? AND parent_anchor IS NULL ORDER BY step_index`,
    )
    .all(P) as { anchor: string; status: string; lease_expires_at: string | null }[];
  const ready = new Set(
    db.prepare(`SELECT s.anchor FROM steps s WHERE ${DERIVED_READY}`).pluck().all({ plan: P, now }) as string[],
  );
  const p: StepPartition = { all: [], ready: [], completed: [], claimed: [], expired: [], blocked: [] };
  for (const r of rows) {
    const live = r.status === 'claimed' || r.status === 'in_progress';
    const expired = live && r.lease_expires_at !== null && r.lease_expires_at < now;
    p.all.push(r.anchor);
    if (ready.has(r.anchor)) p.ready.push(r.anchor);
    if (r.status === 'completed') p.completed.push(r.anchor);
    else if (expired) p.expired.push(r.anchor);
    else if (live) p.claimed.push(r.anchor);
    if (!ready.has(r.anchor) && (r.status === 'pending' || expired)) p.blocked.push(r.anchor);
  }
  return p;
}

/** Stored blockers and open-step count against a recount from the graph, and the partition against the oracle. */
function assertConsistent(store: Store, now: string, when: string): void {
  const db = sqliteOf(store);
  const stored = Object.fromEntries(
    db.prepare('SELECT anchor, blockers FROM steps WHERE plan_path = ? AND parent_anchor IS NULL').raw().all(P) as [
      string,
      number,
    ][],
  );
  const derived = Object.fromEntries(Object.keys(stored).map((a) => [a, 0]));
  for (const [top, n] of db.prepare(DERIVED_BLOCKERS).raw().all({ plan: P }) as [string, number][]) derived[top] = n;
  assert.deepEqual(stored, derived, `stored blockers differ from the graph ${when}`);
  const open = db
    .prepare(`SELECT COUNT(*) FROM steps WHERE plan_path = ? AND parent_anchor IS NULL AND status != 'completed'`)
    .pluck()
    .get(P);
  assert.equal(
    db.prepare('SELECT open_steps FROM plans WHERE plan_path = ?').pluck().get(P),
    open,
    `open_steps ${when}`,
  );
  const oracle = oraclePartition(store, now);
  assert.deepEqual(db.transaction(() => partitionSteps(db, P, now))(), oracle, `partition ${when}`);
  // Both ways of reading it, whichever partitionSteps took: at once (a fresh process), by the cached shape (a long-lived connection).
  assert.deepEqual(db.transaction(() => partitionAtOnce(db, P, now))(), oracle, `partition at once ${when}`);
  assert.deepEqual(db.transaction(() => partitionByShape(db, P, now))(), oracle, `partition by shape ${when}`);
}

interface Variant {
  readonly dropDep?: boolean;
  readonly retitle?: number;
}

/**
 * A plan of `n` steps; some have substeps. Steps and substeps depend on earlier top-level steps of
 * other families; a second substep may depend on its sibling. A variant drops one dependency or
 * retitles one step, as an edited plan re-initialised with --force would.
 */
function planText(seed: number, n: number, variant: Variant = {}): string {
  const rng = seededRandom(seed);
  const out = ['# Plan: Property plan', ''];
  for (let i = 1; i <= n; i++) {
    const deps = new Set<number>();
    for (let k = randomInt(rng, 0, 2); k > 0 && i > 1; k--) deps.add(randomInt(rng, Math.max(1, i - 6), i - 1));
    if (variant.dropDep && i === n && deps.size > 0) deps.delete([...deps][0] as number);
    out.push(`## Step ${i}: Work ${i}${variant.retitle === i ? ' (revised)' : ''} {#s${i}}`);
    if (deps.size > 0) out.push(`**Depends on:** ${[...deps].map((d) => `#s${d}`).join(', ')}`);
    out.push('**Tasks:**', `- [ ] task ${i}`);
    const subs = rng() < 0.3 ? randomInt(rng, 1, 2) : 0;
    for (let j = 1; j <= subs; j++) {
      const subDeps: string[] = [];
      if (i > 2 && rng() < 0.6) subDeps.push(`#s${randomInt(rng, 1, i - 1)}`);
      if (j === 2 && rng() < 0.5) subDeps.push(`#s${i}-${j - 1}`);
      out.push(`### Step ${i}.${j}: Part ${j} of ${i} {#s${i}-${j}}`);
      if (subDeps.length > 0) out.push(`**Depends on:** ${subDeps.join(', ')}`);
      out.push(`- [ ] sub ${i}.${j}`);
    }
    out.push('');
  }
  return out.join('\n');
}

const source = (text: string): PlanSource => planSourceOf(P, parsePlan(text, P));

function open(t: TestContext): { stores: Store[]; clock: ManualClock; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sf-readiness-'));
  const path = join(dir, 'state.db');
  const clock = new ManualClock(T0);
  const stores = [sqliteStore(path, { clock, ifMissing: 'create' }), sqliteStore(path, { clock })];
  t.after(() => {
    for (const s of stores) s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { stores, clock, path };
}

test('stored readiness matches the dependency graph through random claims, completions, resets, expiries and re-inits', async (t) => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const { stores, clock } = open(t);
    const rng = seededRandom(seed * 7919);
    const n = 12 + seed * 3;
    let plan = source(planText(seed, n));
    await stores[0]?.initPlan(plan, ADMIN);
    const held = new Map<string, { actor: Actor; token: number; subs: readonly string[] }>();
    for (let op = 0; op < 120; op++) {
      const store = stores[op % 2] as Store;
      const roll = rng();
      let what: string;
      if (roll < 0.4) {
        const actor = ACTORS[randomInt(rng, 0, ACTORS.length - 1)] as Actor;
        const expected = oraclePartition(store, clock.now().toISOString()).ready[0];
        const c = await store.claimNext(plan, actor, { leaseSeconds: randomInt(rng, 30, 600) });
        assert.equal(
          c.claimed ? c.step_anchor : undefined,
          expected,
          `seed ${seed} op ${op}: claim picks the first ready step`,
        );
        if (c.claimed) held.set(c.step_anchor, { actor, token: c.claim_token, subs: c.substeps });
        what = `claim ${c.claimed ? c.step_anchor : 'none'}`;
      } else if (roll < 0.7 && held.size > 0) {
        const [anchor, h] = [...held][randomInt(rng, 0, held.size - 1)] as [
          string,
          { actor: Actor; token: number; subs: readonly string[] },
        ];
        const target = h.subs.length > 0 && rng() < 0.4 ? (h.subs[0] as string) : anchor;
        const r = await store
          .complete(plan, target, { ...h.actor, token: h.token }, { forceReason: 'property test' })
          .catch((e: Error) => e);
        if (target === anchor) held.delete(anchor);
        what = `complete ${target}${r instanceof Error ? ` (refused: ${r.message})` : ''}`;
      } else if (roll < 0.8 && held.size > 0) {
        const anchor = [...held.keys()][0] as string;
        await store.reset(P, anchor, ADMIN, 'property test');
        held.delete(anchor);
        what = `reset ${anchor}`;
      } else if (roll < 0.9) {
        clock.advance(randomInt(rng, 10, 400) * 1000);
        what = 'advance clock';
      } else {
        plan = source(planText(seed, n, rng() < 0.5 ? { dropDep: true } : { retitle: randomInt(rng, 1, n) }));
        await store.initPlan(plan, ADMIN, { force: true });
        held.clear();
        what = 're-init --force';
      }
      for (const s of stores) assertConsistent(s, clock.now().toISOString(), `seed ${seed} after op ${op} (${what})`);
    }
  }
});

test('a schema 1 database gains stored readiness when opened: blockers and open steps computed from its progress', async (t) => {
  const { stores, clock, path } = open(t);
  const [store, other] = stores as [Store, Store];
  const plan = source(planText(42, 20));
  await store.initPlan(plan, ADMIN);
  for (let i = 0; i < 6; i++) {
    const c = await store.claimNext(plan, ACTORS[0] as Actor);
    if (c.claimed && i % 2 === 0)
      await store.complete(
        plan,
        c.step_anchor,
        { ...(ACTORS[0] as Actor), token: c.claim_token },
        { forceReason: 'setup' },
      );
  }
  const before = oraclePartition(store, clock.now().toISOString());
  store.close();
  other.close();
  // Back to schema 1: what a database written by the first release looks like.
  const Sqlite = loadSqlite();
  const raw = new Sqlite(path);
  raw.exec(`ALTER TABLE plans ADD COLUMN structure TEXT NOT NULL DEFAULT '';
    UPDATE plans SET structure = (SELECT structure FROM plan_files f WHERE f.plan_path = plans.plan_path); DROP TABLE plan_files;
    DROP INDEX idx_deps_dependents; CREATE INDEX idx_deps_target ON step_deps(plan_path, depends_on);
    DROP TRIGGER steps_readiness_done; DROP TRIGGER steps_readiness_undone; DROP INDEX idx_steps_ready;
    ALTER TABLE steps DROP COLUMN blockers; ALTER TABLE plans DROP COLUMN open_steps;
    DROP INDEX idx_runs_launch; DROP INDEX idx_runs_epic_newest; ${['outcome_reason', 'claim_token', 'output_tail', 'head_before', 'head_after', 'agent_pid', 'launch_id'].map((c) => `ALTER TABLE runs DROP COLUMN ${c};`).join(' ')}
    DROP TABLE debt; DROP TABLE planning_notes; ALTER TABLE epics DROP COLUMN pr_url; ALTER TABLE epics DROP COLUMN pr_checked_at; ALTER TABLE epics DROP COLUMN planner;
    DROP INDEX idx_runs_ended; ALTER TABLE epics DROP COLUMN budget_usd; ALTER TABLE epics DROP COLUMN budget_tokens; ALTER TABLE epics DROP COLUMN budget_minutes; DROP TABLE port_blocks;
    DROP INDEX idx_steps_files; DROP INDEX idx_steps_files_held; ALTER TABLE steps DROP COLUMN files; DROP TABLE plan_file_stats;
    ${['cost_usd', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'premium_requests'].map((c) => `ALTER TABLE runs DROP COLUMN ${c};`).join(' ')}
    PRAGMA user_version = 1;`);
  raw.close();

  const reopened = sqliteStore(path, { clock });
  t.after(() => reopened.close());

  assert.equal(sqliteOf(reopened).pragma('user_version', { simple: true }), migrations().length);
  assertConsistent(reopened, clock.now().toISOString(), 'after migrating');
  assert.deepEqual(oraclePartition(reopened, clock.now().toISOString()), before);
  assert.ok(before.completed.length > 0 && before.blocked.length > 0, 'the fixture has completed and blocked steps');
});

test('ready() in one connection follows a re-init with a new structure made in another', async (t) => {
  const { stores, clock } = open(t);
  const [a, b] = stores as [Store, Store];
  await a.initPlan(source('# P\n## Step 1: One {#one}\n## Step 2: Two {#two}\n**Depends on:** #one\n'), ADMIN);
  const first = await b.ready(P);
  await a.initPlan(source('# P\n## Step 1: Zero {#zero}\n## Step 2: One {#one}\n## Step 3: Two {#two}\n'), ADMIN, {
    force: true,
  });
  const second = await b.ready(P);

  assert.deepEqual([first.all_steps, first.ready_steps, first.blocked_steps], [['one', 'two'], ['one'], ['two']]);
  assert.deepEqual(
    [second.all_steps, second.ready_steps, second.blocked_steps],
    [['zero', 'one', 'two'], ['zero', 'one', 'two'], []],
  );
  assertConsistent(b, clock.now().toISOString(), 'after the re-init');
});

test('a step taken back from completed by any UPDATE (a repair by hand) blocks its dependents again', async (t) => {
  const { stores, clock } = open(t);
  const [store] = stores as [Store];
  const plan = source(
    '# P\n## Step 1: One {#one}\n## Step 2: Two {#two}\n**Depends on:** #one\n### Step 2.1: Part {#two-a}\n**Depends on:** #one\n',
  );
  await store.initPlan(plan, ADMIN);
  const c = await store.claimNext(plan, ACTORS[0] as Actor);
  assert.ok(c.claimed);
  await store.complete(plan, 'one', { ...(ACTORS[0] as Actor), token: c.claim_token });
  const unblocked = await store.ready(P);
  sqliteOf(store).prepare(`UPDATE steps SET status = 'pending' WHERE plan_path = ? AND anchor = 'one'`).run(P);
  const reblocked = await store.ready(P);

  assert.deepEqual(unblocked.ready_steps, ['two']);
  assert.deepEqual([reblocked.ready_steps, reblocked.blocked_steps], [['one'], ['two']]);
  assert.equal(sqliteOf(store).prepare(`SELECT blockers FROM steps WHERE anchor = 'two'`).pluck().get(), 2);
  assertConsistent(store, clock.now().toISOString(), 'after the repair');
});
