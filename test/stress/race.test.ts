import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkRun, summarize } from './checker.ts';
import { prepareRun, type PreparedRun } from './planGen.ts';
import { spawnWorker, type WorkerConfig, type WorkerHandle } from './worker.ts';

const SEED = Number(process.env.STRESS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const WORKERS = 16;
const STEPS = 400;
const ROUNDS = 2;

const COMPILE_CACHE = mkdtempSync(join(tmpdir(), 'springfield-stress-cc-'));

console.log(`race test seed ${SEED} (replay with STRESS_SEED=${SEED})`);
after(() => rmSync(COMPILE_CACHE, { recursive: true, force: true }));

interface Swarm {
  readonly logs: string[];
  readonly results: Awaited<WorkerHandle['done']>[];
}

/** Runs `count` worker processes against one prepared plan, released together, until they all exit. */
async function swarm(run: PreparedRun, count: number, overrides: Partial<WorkerConfig>): Promise<Swarm> {
  const logs: string[] = [];
  const handles = [];
  for (let i = 0; i < count; i++) {
    const log = join(run.dir, `worker-${i}.log`);
    logs.push(log);
    handles.push(
      spawnWorker(
        {
          db: run.dbPath,
          plan: run.planFile,
          planPath: run.planPath,
          worktree: `/wt/worker-${i}`,
          mode: 'correct',
          log,
          leaseSeconds: 600,
          maxOps: Number.MAX_SAFE_INTEGER,
          idleMs: 10_000,
          seed: SEED * 31 + i,
          thinkMs: 10,
          waitForGo: true,
          ...overrides,
        },
        COMPILE_CACHE,
      ),
    );
  }
  await Promise.all(handles.map((h) => Promise.race([h.ready, h.done])));
  for (const h of handles) h.go();
  return { logs, results: await Promise.all(handles.map((h) => h.done)) };
}

describe('race: 16 processes claim and complete one plan', () => {
  for (let round = 1; round <= ROUNDS; round++) {
    test(`round ${round}: every step completed exactly once by its token's holder, after its dependencies`, async (t) => {
      // Arrange
      const run = await prepareRun({ steps: STEPS, seed: SEED + round });
      t.after(() => rmSync(run.dir, { recursive: true, force: true }));

      // Act
      const started = Date.now();
      const { logs, results } = await swarm(run, WORKERS, { mode: 'correct' });
      const violations = checkRun(run.dbPath, logs);

      // Assert
      for (const r of results) assert.equal(r.code, 0, `a worker failed: ${r.stderr}`);
      const summaries = results.map((r) => r.summary).filter((s) => s !== null);
      assert.equal(summaries.length, WORKERS);
      const total = (key: 'claims' | 'completes' | 'locked'): number => summaries.reduce((n, s) => n + s[key], 0);
      const refusals = summaries.flatMap((s) => Object.entries(s.refused));
      assert.deepEqual(refusals, [], 'with long leases no worker may be refused its own step');
      assert.equal(total('claims'), STEPS);
      assert.equal(total('completes'), STEPS);
      assert.deepEqual(violations, [], `violations: ${JSON.stringify(summarize(violations))}`);
      const busy = summaries.filter((s) => s.claims > 0).length;
      assert.ok(busy >= WORKERS / 2, `only ${busy} of ${WORKERS} workers ever claimed a step: not much of a race`);
      t.diagnostic(
        `seed ${SEED + round}: ${STEPS} steps by ${busy}/${WORKERS} workers in ${Date.now() - started} ms, database_locked retries ${total('locked')}`,
      );
    });
  }

  test('the checker reports the duplicate claims and double completions of an unguarded SELECT-then-UPDATE claim', async (t) => {
    // Arrange: a small plan and workers whose claim is a plain SELECT, a pause, and an unguarded UPDATE
    const run = await prepareRun({ steps: 40, seed: SEED });
    t.after(() => rmSync(run.dir, { recursive: true, force: true }));

    // Act
    const { logs, results } = await swarm(run, 8, { mode: 'broken', brokenDelayMs: 25, maxOps: 10, idleMs: 1000 });
    const violations = checkRun(run.dbPath, logs, { requireAllCompleted: false });

    // Assert
    for (const r of results) assert.equal(r.code, 0, `a worker failed: ${r.stderr}`);
    const kinds = summarize(violations);
    t.diagnostic(`broken claim violations: ${JSON.stringify(kinds)}`);
    assert.ok((kinds.duplicate_claim ?? 0) > 0, `expected duplicate_claim violations, got ${JSON.stringify(kinds)}`);
    assert.ok(
      (kinds.double_completion ?? 0) > 0,
      `expected double_completion violations, got ${JSON.stringify(kinds)}`,
    );
  });
});
