import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../../src/core/clock.ts';
import { sqliteStore } from '../../src/core/store/sqlite/sqliteStore.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { checkRun, openForCheck, readLogs, summarize } from './checker.ts';
import { prepareRun, randomInt, seededRandom, type PreparedRun } from './planGen.ts';
import { loggedCompletion, spawnWorker, type WorkerHandle } from './worker.ts';

const SEED = Number(process.env.STRESS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const KILLS = 220;
const LIVE = 6; // writer processes alive at once
// Twice what a quiet run completes (about 2,000; 1,500 steps ran out once), so workers never run out of
// work. The killed workers' completions are bounded by the kills (each lives MAX_LIFE_MS at most), and
// the long-lived worker's by its pace (two a second at most), so a slow run takes no more of the plan.
const STEPS = 4000;
const LEASE_SECONDS = 2;
const MAX_LIFE_MS = 500; // a worker is killed at a random moment within this long after it is ready
const LONG_LIVED_THINK_MS = 1000;
// Not a measure of speed: the run takes as long as its kills take; this only ends a run that can never
// finish, saying how far it got.
const GIVE_UP_MS = 30 * 60_000;

console.log(`crash test seed ${SEED} (replay with STRESS_SEED=${SEED})`);

interface Live {
  readonly handle: WorkerHandle;
  readonly worktree: string;
  killed: boolean;
}

/** The worktrees holding a claim on a top-level step now. */
function claimHolders(dbPath: string): Set<string> {
  const db = openForCheck(dbPath);
  try {
    return new Set(
      db
        .prepare(`SELECT claimed_by FROM steps WHERE status IN ('claimed', 'in_progress') AND parent_anchor IS NULL`)
        .pluck()
        .all() as string[],
    );
  } finally {
    db.close();
  }
}

interface Orphan {
  anchor: string;
  claimed_by: string;
  claim_token: number;
  lease_expires_at: string;
}

/**
 * With a clock past every lease, claims until every orphan has been taken back: each must come back
 * as reclaimed_from_expired from its old holder with the next token. Other claims are plain.
 */
async function reclaimOrphans(run: PreparedRun, orphans: readonly Orphan[]): Promise<number> {
  const latest = Math.max(...orphans.map((o) => Date.parse(o.lease_expires_at)));
  const store = sqliteStore(run.dbPath, { clock: new ManualClock(latest + 1000) });
  const left = new Map(orphans.map((o) => [o.anchor, o]));
  const actor: Actor = { worktree: '/wt/recovery', agent: null };
  let claims = 0;
  try {
    while (left.size > 0 && claims < STEPS) {
      const c = await store.claimNext(run.source, actor, { leaseSeconds: 60 });
      assert.ok(c.claimed, `orphans not reclaimable: ${[...left.keys()].join(', ')} (${JSON.stringify(c)})`);
      claims++;
      const orphan = left.get(c.step_anchor);
      if (orphan) {
        assert.equal(c.reclaimed_from_expired, true, `${c.step_anchor} was an orphan`);
        assert.equal(c.previous_holder, orphan.claimed_by);
        assert.equal(c.claim_token, orphan.claim_token + 1);
        left.delete(c.step_anchor);
      } else {
        assert.equal(c.reclaimed_from_expired, false, `${c.step_anchor} was not an orphan`);
      }
      const holder = { ...actor, token: c.claim_token };
      await store.updateItems(run.source, c.step_anchor, [{ selector: { all: true }, status: 'completed' }], holder);
      await store.complete(run.source, c.step_anchor, holder);
    }
  } finally {
    store.close();
  }
  return claims;
}

interface KillRun {
  readonly logs: string[];
  readonly spawned: number;
  readonly kills: number;
  readonly finalKills: number;
  readonly exits: string[];
  /** Set when the run was given up: how far it got. */
  readonly gaveUp?: string;
}

function completedSteps(dbPath: string): number {
  const db = openForCheck(dbPath);
  try {
    return Number(db.prepare(`SELECT COUNT(*) FROM steps WHERE status = 'completed'`).pluck().get());
  } finally {
    db.close();
  }
}

/**
 * Keeps LIVE workers running and kills each with SIGKILL at a random moment (seeded) within
 * MAX_LIFE_MS of it becoming ready, replacing it, until KILLS kills; then kills the rest.
 */
async function killWorkers(
  run: PreparedRun,
  rng: () => number,
  compileCache: string,
  cleanup: Set<WorkerHandle>,
  beforeFinalKills: () => Promise<void>,
): Promise<KillRun> {
  const logs: string[] = [];
  const live = new Set<Live>();
  const exits: string[] = [];
  let spawned = 0;
  let kills = 0;
  let stopping = false;
  const spawnOne = (): void => {
    const n = spawned++;
    const log = join(run.dir, `crash-${n}.log`);
    logs.push(log);
    const handle = spawnWorker(
      {
        db: run.dbPath,
        plan: run.planFile,
        planPath: run.planPath,
        worktree: `/wt/crash-${n}`,
        mode: 'correct',
        log,
        leaseSeconds: LEASE_SECONDS,
        maxOps: Number.MAX_SAFE_INTEGER,
        idleMs: 60_000,
        seed: SEED * 7 + n,
        thinkMs: 20,
      },
      compileCache,
    );
    const entry: Live = { handle, worktree: `/wt/crash-${n}`, killed: false };
    live.add(entry);
    cleanup.add(handle);
    // Every fifth worker is killed only after it completed a step: a completion is always at risk.
    void handle.ready
      .then(() => (n % 5 === 4 ? loggedCompletion(log, () => entry.killed || stopping || !live.has(entry)) : undefined))
      .then(() => sleep(randomInt(rng, 0, MAX_LIFE_MS)))
      .then(() => {
        if (entry.killed || stopping) return;
        entry.killed = true;
        kills++;
        handle.child.kill('SIGKILL');
      });
    void handle.done.then((r) => {
      live.delete(entry);
      cleanup.delete(handle);
      if (!entry.killed)
        exits.push(`/wt/crash-${n} exited by itself (code ${r.code}, ${JSON.stringify(r.summary)}): ${r.stderr}`);
      else if (!stopping) spawnOne();
    });
  };
  const started = Date.now();
  const givenUp = () => Date.now() - started > GIVE_UP_MS;
  for (let i = 0; i < LIVE; i++) spawnOne();
  while (kills < KILLS && exits.length === 0 && !givenUp()) await sleep(50);
  stopping = true;
  // The final kills must leave orphans to check: nobody else may reclaim them (the long-lived worker
  // stops first; leases are short), and a live worker must hold a claim when they come (a loaded
  // machine can be slow to start the last replacements; if every worker was just killed, one more is
  // started). One seen holding a claim may complete its step before its kill lands: then another
  // worker is started and killed the same way, until a claim is left.
  await beforeFinalKills();
  let finalKills = 0;
  do {
    if (![...live].some((e) => !e.killed)) spawnOne();
    while (
      exits.length === 0 &&
      !givenUp() &&
      ![...live].some((e) => !e.killed && claimHolders(run.dbPath).has(e.worktree))
    )
      await sleep(20);
    for (const e of [...live].filter((x) => !x.killed)) {
      e.killed = true;
      finalKills++;
      e.handle.child.kill('SIGKILL');
    }
    await Promise.all([...live].map((e) => e.handle.done));
  } while (exits.length === 0 && !givenUp() && claimHolders(run.dbPath).size === 0);
  const gaveUp = givenUp()
    ? `gave up after ${GIVE_UP_MS / 60_000} min with ${kills} of ${KILLS} kills, ${spawned} workers started, ` +
      `${completedSteps(run.dbPath)} steps completed: the machine is too busy to finish this run`
    : undefined;
  return { logs, spawned, kills, finalKills, exits, gaveUp };
}

test(
  `crash: ${KILLS}+ kill -9 of writer processes lose no completion and leave every orphan reclaimable`,
  { timeout: GIVE_UP_MS + 10 * 60_000 },
  async (t) => {
    // Arrange: a plan too big to finish, and one long-lived worker that reads and writes throughout
    const run = await prepareRun({ steps: STEPS, seed: SEED });
    const running = new Set<WorkerHandle>();
    t.after(() => {
      for (const h of running) h.child.kill('SIGKILL');
      rmSync(run.dir, { recursive: true, force: true });
    });
    const compileCache = join(run.dir, 'compile-cache');
    const longLivedLog = join(run.dir, 'long-lived.log');
    const longLived = spawnWorker(
      {
        db: run.dbPath,
        plan: run.planFile,
        planPath: run.planPath,
        worktree: '/wt/long-lived',
        mode: 'correct',
        log: longLivedLog,
        leaseSeconds: LEASE_SECONDS,
        maxOps: Number.MAX_SAFE_INTEGER,
        idleMs: 60_000,
        seed: SEED,
        thinkMs: LONG_LIVED_THINK_MS,
        reads: true,
      },
      compileCache,
    );
    running.add(longLived);
    await Promise.race([longLived.ready, longLived.done]);

    // Act
    const started = Date.now();
    let survivor: Awaited<WorkerHandle['done']> | undefined;
    const k = await killWorkers(run, seededRandom(SEED), compileCache, running, async () => {
      longLived.stop();
      survivor = await longLived.done;
    });
    assert.ok(survivor, 'the long-lived worker was stopped');
    const logs = [longLivedLog, ...k.logs];

    // Assert: the run itself
    assert.equal(k.gaveUp, undefined, k.gaveUp);
    assert.deepEqual(k.exits, [], 'no worker may exit by itself (it would mean an error or the plan ran out)');
    assert.equal(survivor.code, 0, `the long-lived worker failed: ${survivor.stderr}`);
    assert.equal(survivor.summary?.exit, 'stopped');
    assert.ok(
      (survivor.summary?.completes ?? 0) > 0 && (survivor.summary?.reads ?? 0) > 0,
      `long-lived: ${JSON.stringify(survivor.summary)}`,
    );
    assert.ok(k.kills >= KILLS, `only ${k.kills} kills`);
    const killedCompletions = readLogs(k.logs).lines.filter((l) => l.op === 'complete').length;
    assert.ok(
      killedCompletions > 0,
      'no killed worker completed a step before its kill, so no completion was at risk (are claims slow?)',
    );
    const violations = checkRun(run.dbPath, logs, { requireAllCompleted: false });
    assert.deepEqual(violations, [], `violations: ${JSON.stringify(summarize(violations))}`);

    // Assert: orphaned claims are reclaimable once their leases expire
    const db = openForCheck(run.dbPath);
    const orphans = db
      .prepare(
        `SELECT anchor, claimed_by, claim_token, lease_expires_at FROM steps
      WHERE status IN ('claimed', 'in_progress') AND parent_anchor IS NULL ORDER BY step_index`,
      )
      .all() as Orphan[];
    const completed = Number(db.prepare(`SELECT COUNT(*) FROM steps WHERE status = 'completed'`).pluck().get());
    const reclaims = Number(db.prepare(`SELECT COUNT(*) FROM events WHERE action = 'reclaim'`).pluck().get());
    db.close();
    assert.ok(completed > 0 && completed < STEPS, `${completed} steps completed`);
    assert.ok(orphans.length > 0, 'the kills left no orphaned claim to reclaim');
    assert.ok(reclaims > 0, 'live workers never reclaimed an expired lease');
    const drained = await reclaimOrphans(run, orphans);
    const after = checkRun(run.dbPath, logs, { requireAllCompleted: false });
    assert.deepEqual(after, [], `violations after reclaiming: ${JSON.stringify(summarize(after))}`);

    t.diagnostic(
      `seed ${SEED}: ${k.kills} kills at random moments + ${k.finalKills} at the end, ${k.spawned} workers, ${Date.now() - started} ms; ` +
        `${completed} steps completed (${killedCompletions} logged by killed workers), long-lived worker ${JSON.stringify(survivor.summary)}, ` +
        `${reclaims} live reclaims, ${orphans.length} orphans reclaimed in ${drained} recovery claims`,
    );
  },
);
