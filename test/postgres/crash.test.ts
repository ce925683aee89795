// kill -9 on PostgreSQL: writer processes on two hosts are killed at random moments (seeded) while
// they claim and complete with 2 s leases on a durable throwaway server. The server rolls back what a
// dead connection left open; the checker finds no lost or doubled completion, and every orphaned
// claim comes back as reclaimed_from_expired from its holder with the next token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../../src/core/clock.ts';
import { openStore } from '../../src/core/store/index.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { checkRows, readLogs, summarize } from '../stress/checker.ts';
import { prepareRun, randomInt, seededRandom } from '../stress/planGen.ts';
import { loggedCompletion, spawnWorker, type WorkerHandle } from '../stress/worker.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { claimHolders, postgresRows, prepareShared, REPO } from './raceRows.ts';

const SEED = Number(process.env.STRESS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const KILLS = 30;
const LIVE = 6;
const STEPS = 1200; // several times what a run completes (about 130 on a loaded machine), so workers never run out of work
const MAX_LIFE_MS = 2000; // a worker is killed at a random moment within this long after it is ready (its first claim opens the pool)
// Not a measure of speed: the run takes as long as its kills take; this only ends a run that can never
// finish, saying how far it got.
const GIVE_UP_MS = 30 * 60_000;
const pgServer = postgresForFile();
console.log(`postgres crash seed ${SEED} (replay with STRESS_SEED=${SEED})`);

test(
  `crash on PostgreSQL: ${KILLS}+ kill -9 of writers on two hosts lose no completion and leave every orphan reclaimable`,
  { timeout: GIVE_UP_MS + 10 * 60_000 },
  async (t) => {
    const url = pgServer.server.createDatabase('crash');
    const run = await prepareRun({ steps: STEPS, seed: SEED });
    const running = new Set<WorkerHandle>();
    t.after(() => {
      for (const h of running) h.child.kill('SIGKILL');
      rmSync(run.dir, { recursive: true, force: true });
    });
    const clones = await prepareShared(url, run);
    // Node's compile cache, shared by the short-lived workers as in the SQLite crash test: with it this
    // test took 31 CPU-s and 69 s instead of 47 and 101 (one run each, one seed, at load 35).
    const compileCache = join(run.dir, 'compile-cache');
    const rng = seededRandom(SEED);
    const logs: string[] = [];
    const exits: string[] = [];
    let spawned = 0;
    let kills = 0;
    let stopping = false;
    const live = new Set<{ handle: WorkerHandle; holder: string; killed: boolean }>();
    const spawnOne = (): void => {
      const n = spawned++;
      const host = n % 2 === 0 ? 'a' : 'b';
      const log = join(run.dir, `crash-${n}.log`);
      logs.push(log);
      const handle = spawnWorker(
        {
          db: url,
          host,
          repo: REPO,
          plan: host === 'a' ? clones.a : clones.b,
          planPath: run.planPath,
          worktree: `/wt/crash-${n}`,
          mode: 'correct',
          log,
          leaseSeconds: 2,
          maxOps: Number.MAX_SAFE_INTEGER,
          idleMs: 60_000,
          seed: SEED * 7 + n,
          thinkMs: 20,
        },
        compileCache,
      );
      const entry = { handle, holder: `${host}:/wt/crash-${n}`, killed: false };
      live.add(entry);
      running.add(handle);
      // Every fifth worker is killed only after it completed a step: a completion is always at risk.
      void handle.ready
        .then(() =>
          n % 5 === 4 ? loggedCompletion(log, () => entry.killed || stopping || !live.has(entry)) : undefined,
        )
        .then(() => sleep(randomInt(rng, 0, MAX_LIFE_MS)))
        .then(() => {
          if (entry.killed || stopping) return;
          entry.killed = true;
          kills++;
          handle.child.kill('SIGKILL');
        });
      void handle.done.then((r) => {
        live.delete(entry);
        running.delete(handle);
        if (!entry.killed)
          exits.push(`crash-${n} exited by itself (code ${r.code}, ${JSON.stringify(r.summary)}): ${r.stderr}`);
        else if (!stopping) spawnOne();
      });
    };
    const started = Date.now();
    const givenUp = () => Date.now() - started > GIVE_UP_MS;
    for (let i = 0; i < LIVE; i++) spawnOne();
    while (kills < KILLS && exits.length === 0 && !givenUp()) await sleep(50);
    stopping = true;
    // The final kills must leave orphans to check: wait until a live worker holds a claim (a loaded
    // machine can be slow to start the last replacements; if every worker was just killed, one more is
    // started). One seen holding a claim may complete its step before its kill lands: then another
    // worker is started and killed the same way, until a claim is left.
    do {
      if (![...live].some((e) => !e.killed)) spawnOne();
      let heldBy = await claimHolders(url, REPO);
      while (exits.length === 0 && !givenUp() && ![...live].some((e) => !e.killed && heldBy.has(e.holder))) {
        await sleep(20);
        heldBy = await claimHolders(url, REPO);
      }
      for (const e of [...live].filter((x) => !x.killed)) {
        e.killed = true;
        e.handle.child.kill('SIGKILL');
      }
      await Promise.all([...live].map((e) => e.handle.done));
    } while (exits.length === 0 && !givenUp() && (await claimHolders(url, REPO)).size === 0);
    const gaveUp = givenUp()
      ? `gave up after ${GIVE_UP_MS / 60_000} min with ${kills} of ${KILLS} kills and ${spawned} workers started: the machine is too busy to finish this run`
      : undefined;

    assert.equal(gaveUp, undefined, gaveUp);
    assert.deepEqual(exits, [], 'no worker may exit by itself (it would mean an error or the plan ran out)');
    assert.ok(kills >= KILLS, `only ${kills} kills`);
    const { lines, violations: logViolations } = readLogs(logs);
    assert.ok(
      lines.some((l) => l.op === 'complete'),
      'no killed worker completed a step, so no completion was at risk',
    );
    const violations = [
      ...logViolations,
      ...checkRows(await postgresRows(url, REPO), lines, { requireAllCompleted: false }),
    ];
    assert.deepEqual(violations, [], `violations: ${JSON.stringify(summarize(violations))}`);

    // Orphans: every claim still held by a killed worker is reclaimed once its lease has run out.
    const rows = await postgresRows(url, REPO);
    const held = rows.steps.filter((s) => s.status === 'claimed' || s.status === 'in_progress');
    const completed = rows.steps.filter((s) => s.status === 'completed').length;
    assert.ok(
      completed > 0 && completed < rows.steps.length,
      `${completed} of ${rows.steps.length} steps completed: the plan ran out`,
    );
    assert.ok(held.length > 0, 'the kills left no orphaned claim to reclaim');
    const lastClaim = new Map(rows.events.filter((e) => e.action !== 'complete').map((e) => [e.anchor, e]));
    const store = openStore({
      location: url,
      repository: { id: REPO, source: 'configured' },
      host: 'recovery',
      clock: new ManualClock(Date.now() + 3_600_000),
    });
    const actor: Actor = { worktree: '/wt/recovery', agent: null };
    const left = new Map(held.map((s) => [s.anchor, s]));
    let recoveries = 0;
    try {
      while (left.size > 0 && recoveries < STEPS) {
        const c = await store.claimNext(run.source, actor, { leaseSeconds: 60 });
        assert.ok(c.claimed, `orphans not reclaimable: ${[...left.keys()].join(', ')}`);
        recoveries++;
        const orphan = left.get(c.step_anchor);
        if (!orphan) assert.equal(c.reclaimed_from_expired, false, `${c.step_anchor} was not an orphan`);
        else {
          assert.equal(c.reclaimed_from_expired, true, `${c.step_anchor} was an orphan`);
          assert.equal(`${lastClaim.get(c.step_anchor)?.worktree?.split(':')[1]}`, c.previous_holder);
          assert.equal(c.claim_token, orphan.claim_token + 1);
          left.delete(c.step_anchor);
        }
        const holder = { ...actor, token: c.claim_token };
        await store.updateItems(run.source, c.step_anchor, [{ selector: { all: true }, status: 'completed' }], holder);
        await store.complete(run.source, c.step_anchor, holder);
      }
    } finally {
      await store.close();
    }
    const after = checkRows(await postgresRows(url, REPO), lines, { requireAllCompleted: false });
    assert.deepEqual(after, [], `violations after reclaiming: ${JSON.stringify(summarize(after))}`);
    t.diagnostic(
      `seed ${SEED}: ${kills} kills, ${spawned} workers, ${completed} of ${rows.steps.length} steps completed, ${lines.filter((l) => l.op === 'complete').length} completions logged, ${held.length} orphans reclaimed in ${recoveries} claims`,
    );
  },
);
